// File: node_bookings.h
//
// The node annotation gpusched.io/bookings, both ways. It holds the placements gpusched replicas
// booked on the node and have not yet seen bound: a JSON object keyed by pod UID,
//
//   {"<pod uid>": {"pod": "<namespace>/<name>", "at": <Unix ms>, "mode": "nvidia", "gpus": 2},
//    "<pod uid>": {"pod": "...", "at": ..., "mode": "mgpu",
//                  "containers": [{"name": "main", "gpus": [0, 1], "milli": 500, "mib": 8192}]}}
//
// ("exclusive": true marks whole cards of an mGPU pod; "init": k an init container, the k-th of
// spec.initContainers counting from 1, with "sidecar": true when it is restartable). Keys are
// written in sorted order, so equal bookings give equal text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/model/node.h"

namespace gpusched::kubejson {

// Returns the bookings in `text` for node `node_name`, sorted by pod UID, each with origin kBooked.
// Errors: InvalidArgument naming the pod UID and field of the first malformed entry.
StatusOr<std::vector<NodeBooking>> ParseNodeBookings(std::string_view text, std::string_view node_name);

// Returns the annotation value for `bookings` ("{}" when empty).
std::string EncodeNodeBookings(const std::vector<NodeBooking>& bookings);

}  // namespace gpusched::kubejson
