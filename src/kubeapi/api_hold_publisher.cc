// File: api_hold_publisher.cc
//
// Publishing defrag holds: the node checked at the version the hold was judged on, then
// gpusched.io/holds merge-patched with the hold added (or withdrawn) and expired ones pruned; a 409
// stores the fresh node for the caller to check again.
#include "gpusched/kubeapi/api_hold_publisher.h"

#include <fmt/format.h>

#include "gpusched/kubejson/node_holds.h"
#include "gpusched/model/names.h"
#include "node_writes.h"

namespace gpusched::kubeapi {
namespace {

constexpr int kWithdrawAttempts = 3;

}  // namespace

std::vector<NodeHold> ApiHoldPublisher::Kept(const Node& node, const std::string& about_uid) const {
  int64_t now = options_.clock->WallMs();
  std::vector<NodeHold> kept;
  for (const NodeHold& h : node.holds) {
    if (h.about_uid != about_uid && BookingFresh(h.at_ms, now, std::chrono::seconds(h.ttl_s))) kept.push_back(h);
  }
  return kept;
}

Status ApiHoldPublisher::Write(const std::string& node, const std::string& version, const std::vector<NodeHold>& holds) {
  std::string patch = node_writes::AnnotationPatch(version, names::kHoldsAnnotation, kubejson::EncodeNodeHolds(holds));
  StatusOr<ApiResponse> r = client_->Send("PATCH", node_writes::NodePath(node), patch, kMergePatch,
                                          options_.request_timeout);
  if (!r.ok()) return UnavailableError(r.status().message());
  if (r->status == 200) {
    node_writes::StoreNode(inventory_, r->body);
    return OkStatus();
  }
  if (r->status == 409) {
    StatusOr<Node> fresh = node_writes::GetNode(client_, node, options_.request_timeout);
    if (fresh.ok()) inventory_->UpsertNodes({*fresh});
    return AbortedError(fmt::format("node {} changed since resourceVersion {}", node, version));
  }
  if (r->status == 404) return NotFoundError(fmt::format("node {} is gone", node));
  std::string error = node_writes::ApiError(fmt::format("holds on node {}", node), *r);
  // A refusal (403: RBAC or the admission policy, 422) is final; 5xx, 408 and 429 leave it unknown.
  if (r->status >= 400 && r->status < 500 && r->status != 408 && r->status != 429) return FailedPreconditionError(error);
  return UnavailableError(error);
}

Status ApiHoldPublisher::Publish(const NodeHold& hold, const std::string& node_version) {
  const std::string& node = hold.hold.node_name;
  if (node_version.empty()) return FailedPreconditionError(fmt::format("node {} has no resourceVersion to hold against", node));
  GPUSCHED_ASSIGN_OR_RETURN(Node current, node_writes::GetNode(client_, node, options_.request_timeout));
  if (current.resource_version != node_version) {
    inventory_->UpsertNodes({current});
    return AbortedError(fmt::format("node {} changed since resourceVersion {} (now {})", node, node_version,
                                    current.resource_version));
  }
  std::vector<NodeHold> holds = Kept(current, hold.about_uid);
  holds.push_back(hold);
  return Write(node, node_version, holds);
}

Status ApiHoldPublisher::Withdraw(const std::string& node, const std::string& about_uid) {
  for (int attempt = 0; attempt < kWithdrawAttempts; ++attempt) {
    StatusOr<Node> current = node_writes::GetNode(client_, node, options_.request_timeout);
    if (current.status().code() == StatusCode::kNotFound) return OkStatus();
    GPUSCHED_RETURN_IF_ERROR(current.status());
    std::vector<NodeHold> kept = Kept(*current, about_uid);
    if (kept.size() == current->holds.size()) return OkStatus();
    Status s = Write(node, current->resource_version, kept);
    if (s.code() != StatusCode::kAborted) return s;
  }
  return AbortedError(fmt::format("node {} kept changing", node));
}

}  // namespace gpusched::kubeapi
