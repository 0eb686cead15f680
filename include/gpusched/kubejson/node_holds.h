// File: node_holds.h
//
// The node annotation gpusched.io/holds, both ways. It holds the GPUs defrag moves keep on the
// node for the pods they are for (model/node.h NodeHold): a JSON object keyed by the UID of the
// pod a hold is about (the pending pod, or the moved pod),
//
//   {"<about uid>": {"for": "<pending pod uid>" | "controller/<uid>", "pod": "<namespace>/<name>",
//                    "at": <Unix ms>, "seconds": 300, "mode": "nvidia", "gpus": 2,
//                    "present": ["<uid>", ...]}}
//
// with the placement fields of gpusched.io/bookings (node_bookings.h), and also
// "mode": "nvidia-dra", "devices": ["driver/pool/device", ...]. "present" (omitted when empty)
// lists the pods of the controller bound on the node when the hold was made. Keys are written in
// sorted order, so equal holds give equal text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/model/node.h"

namespace gpusched::kubejson {

// Returns the holds in `text` for node `node_name`, sorted by about_uid, each hold with origin
// kHeld and the highest priority (as Inventory::HoldFor makes them).
// Errors: InvalidArgument naming the UID and field of the first malformed entry.
StatusOr<std::vector<NodeHold>> ParseNodeHolds(std::string_view text, std::string_view node_name);

// Returns the annotation value for `holds` ("{}" when empty).
std::string EncodeNodeHolds(const std::vector<NodeHold>& holds);

}  // namespace gpusched::kubejson
