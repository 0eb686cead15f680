// File: admission.h
//
// The mode-switch admission guard: a validating webhook for Node updates (AdmissionReview v1).
// A change of vke.node.gpu.schedule that changes the node's GPU mode is denied while GPU pods of
// another mode than the new one run on the node (the message names them); everything else is
// allowed. The extender's own switching guard stays in force either way.
#pragma once

#include <string>
#include <string_view>

#include "gpusched/common/status.h"
#include "gpusched/inventory/snapshot.h"

namespace gpusched::extender {

// Returns the AdmissionReview response for the review in `body`, judged on `snapshot`.
// Errors: InvalidArgument naming the field when `body` is not an AdmissionReview with a request.
StatusOr<std::string> ReviewNodeUpdate(std::string_view body, const inventory::InventorySnapshot& snapshot);

}  // namespace gpusched::extender
