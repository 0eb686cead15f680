// File: annotated_nodes.cc
//
// The nodes that carry bookings or holds annotations, and the annotated holds each node's state
// counts.
#include "gpusched/inventory/annotated_nodes.h"

#include <algorithm>

namespace gpusched::inventory {

void AnnotatedNodes::Update(const Node& node) {
  if (node.bookings.empty()) {
    if (auto it = booked_.find(node.name); it != booked_.end()) booked_.erase(it);
  } else {
    booked_.insert(node.name);
  }
  if (node.holds.empty()) {
    if (auto it = held_.find(node.name); it != held_.end()) held_.erase(it);
    return;
  }
  int64_t last_end = node.holds.front().end_ms();
  for (const NodeHold& h : node.holds) last_end = std::max(last_end, h.end_ms());
  held_.insert_or_assign(node.name, last_end);
}

void AnnotatedNodes::Remove(std::string_view name) {
  if (auto it = booked_.find(name); it != booked_.end()) booked_.erase(it);
  if (auto it = held_.find(name); it != held_.end()) held_.erase(it);
  if (auto it = counted_.find(name); it != counted_.end()) counted_.erase(it);
}

void AnnotatedNodes::ExpireHolds(int64_t now_ms) {
  std::erase_if(held_, [&](const auto& node) { return node.second <= now_ms; });
}

void AnnotatedNodes::SetCounted(const std::string& name, std::vector<std::string> keys) {
  if (keys.empty()) {
    if (auto it = counted_.find(name); it != counted_.end()) counted_.erase(it);
  } else {
    counted_.insert_or_assign(name, std::move(keys));
  }
}

bool AnnotatedNodes::CountsOther(std::string_view name, const std::vector<std::string>& keys) const {
  auto it = counted_.find(name);
  return it == counted_.end() ? !keys.empty() : it->second != keys;
}

}  // namespace gpusched::inventory
