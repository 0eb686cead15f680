// File: node_writes.h (private to kubeapi)
//
// What the writers of gpusched's node annotations share (api_binder.cc: gpusched.io/bookings;
// api_hold_publisher.cc: gpusched.io/holds): the node's path, a merge patch of one annotation
// with the node's resourceVersion as precondition, reading the node, and putting a node the API
// server answered with into the inventory.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "gpusched/common/status.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubeapi/api_client.h"
#include "gpusched/model/node.h"

namespace gpusched::kubeapi::node_writes {

std::string NodePath(std::string_view node);

// {"metadata":{"resourceVersion":RV,"annotations":{KEY:VALUE}}}
std::string AnnotationPatch(std::string_view resource_version, std::string_view key, std::string_view value);

// "WHAT: STATUS MESSAGE" of an answer.
std::string ApiError(std::string_view what, const ApiResponse& r);

// GETs node `name`. Errors: NotFound (404), Unavailable (anything else but 200), InvalidArgument
// (an unreadable object).
StatusOr<Node> GetNode(ApiClient* client, std::string_view name, std::chrono::milliseconds timeout);

// Puts the Node object in `body` into `inventory`; returns its resourceVersion ("unknown" if
// unreadable).
std::string StoreNode(inventory::Inventory* inventory, const std::string& body);

}  // namespace gpusched::kubeapi::node_writes
