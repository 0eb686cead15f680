#include "gpusched/inventory/ledger.h"

#include <fmt/format.h>

namespace gpusched::inventory {

Status Ledger::Add(Allocation allocation) {
  auto it = by_uid_.find(allocation.pod_uid);
  if (it != by_uid_.end()) {
    return FailedPreconditionError(fmt::format("pod {}/{} (uid {}) already holds an allocation on node {}",
                                               it->second->pod_namespace, it->second->pod_name, it->first,
                                               it->second->node_name));
  }
  Put(std::move(allocation));
  return OkStatus();
}

void Ledger::Put(Allocation allocation) {
  Release(allocation.pod_uid);
  uids_by_node_[allocation.node_name].insert(allocation.pod_uid);
  std::string uid = allocation.pod_uid;
  by_uid_.emplace(std::move(uid), std::make_shared<const Allocation>(std::move(allocation)));
}

std::string Ledger::Release(std::string_view pod_uid) {
  auto it = by_uid_.find(std::string(pod_uid));
  if (it == by_uid_.end()) return "";
  std::string node = it->second->node_name;
  auto n = uids_by_node_.find(node);
  if (n != uids_by_node_.end()) {
    n->second.erase(it->first);
    if (n->second.empty()) uids_by_node_.erase(n);
  }
  by_uid_.erase(it);
  return node;
}

const Allocation* Ledger::Find(std::string_view pod_uid) const {
  auto it = by_uid_.find(std::string(pod_uid));
  return it == by_uid_.end() ? nullptr : it->second.get();
}

std::vector<AllocationPtr> Ledger::OnNode(std::string_view node) const {
  std::vector<AllocationPtr> out;
  auto n = uids_by_node_.find(node);
  if (n == uids_by_node_.end()) return out;
  out.reserve(n->second.size());
  for (const std::string& uid : n->second) out.push_back(by_uid_.at(uid));
  return out;
}

std::vector<std::string> Ledger::Nodes() const {
  std::vector<std::string> out;
  for (const auto& [node, uids] : uids_by_node_) out.push_back(node);
  return out;
}

}  // namespace gpusched::inventory
