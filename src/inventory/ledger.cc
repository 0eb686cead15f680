// File: ledger.cc
//
// The ledger's two indexes over shared allocations, by pod UID and by node: adding refuses a UID
// that already holds one, putting replaces it, releasing removes it and names its node.
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
  auto held = std::make_shared<const Allocation>(std::move(allocation));
  by_node_[held->node_name].push_back(held);
  by_uid_.emplace(held->pod_uid, std::move(held));
}

std::string Ledger::Release(std::string_view pod_uid) {
  auto it = by_uid_.find(pod_uid);
  if (it == by_uid_.end()) return "";
  AllocationPtr held = std::move(it->second);  // keeps the key's text alive until the erase
  by_uid_.erase(it);
  if (auto n = by_node_.find(held->node_name); n != by_node_.end()) {
    std::erase(n->second, held);
    if (n->second.empty()) by_node_.erase(n);
  }
  return held->node_name;
}

const Allocation* Ledger::Find(std::string_view pod_uid) const {
  auto it = by_uid_.find(pod_uid);
  return it == by_uid_.end() ? nullptr : it->second.get();
}

std::vector<AllocationPtr> Ledger::OnNode(std::string_view node) const {
  auto n = by_node_.find(node);
  if (n == by_node_.end()) return {};
  return n->second;
}

std::vector<std::string> Ledger::Nodes() const {
  std::vector<std::string> out;
  for (const auto& [node, held] : by_node_) out.push_back(node);
  return out;
}

}  // namespace gpusched::inventory
