// File: resource_fit.cc
//
// NodeResourcesFit as a running sum: the requested resources' allocatable and use on the node,
// adjusted as pods are removed, restored or counted as nominated (one merge pass over sorted
// lists), and the first resource or pod count that does not fit.
#include "gpusched/placement/resource_fit.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpusched::placement {

ResourceFit::ResourceFit(const NodeState& node, const ResourceList& request)
    : node_(node), request_(request), used_(request.items().size(), 0), allocatable_(request.items().size(), 0) {
  const auto& want = request_.items();
  for (size_t i = 0; i < want.size(); ++i) allocatable_[i] = node_.node.other_allocatable.Get(want[i].first);
  pods_allowed_ = node_.node.other_allocatable.Get("pods");
  if (node_.uses == nullptr) return;
  for (size_t i = 0; i < want.size(); ++i) used_[i] = node_.uses->total().Get(want[i].first);
  pods_ = static_cast<int64_t>(node_.uses->pods().size());
}

const PodUse* ResourceFit::Find(std::string_view uid) const {
  return node_.uses == nullptr ? nullptr : node_.uses->Find(uid);
}

void ResourceFit::CountNominated(std::string_view uid, int32_t priority) {
  for (const PodUse& n : node_.nominated) {
    if (n.priority >= priority && n.uid != uid && Find(n.uid) == nullptr) Restore(n);
  }
}

void ResourceFit::Move(const PodUse& use, int sign) {
  // Both lists are sorted by name: one merge pass.
  const auto& want = request_.items();
  const auto& have = use.requests.items();
  for (size_t i = 0, k = 0; i < want.size() && k < have.size();) {
    int c = want[i].first.compare(have[k].first);
    if (c == 0) used_[i] += sign * have[k].second;
    i += c <= 0 ? 1 : 0;
    k += c >= 0 ? 1 : 0;
  }
  pods_ += sign;
}

std::string ResourceFit::Why() const {
  if (!known()) return "";
  if (pods_ + 1 > pods_allowed_) return fmt::format("pods: {} of {} used", pods_, pods_allowed_);
  const auto& want = request_.items();
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].second > 0 && want[i].second > allocatable_[i] - used_[i]) {
      std::string_view unit = want[i].first == "cpu" ? "m" : "";
      return fmt::format("{}: asks {}{}, {}{} of {}{} free", want[i].first, want[i].second, unit,
                         std::max<int64_t>(allocatable_[i] - used_[i], 0), unit, allocatable_[i], unit);
    }
  }
  return "";
}

bool ResourceFit::Unresolvable() const {
  if (!known()) return false;
  const auto& want = request_.items();
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].second > 0 && want[i].second > allocatable_[i]) return true;
  }
  return false;
}

bool ResourceFit::Fits() const {
  if (!known()) return true;
  if (pods_ + 1 > pods_allowed_) return false;
  const auto& want = request_.items();
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].second > 0 && want[i].second > allocatable_[i] - used_[i]) return false;
  }
  return true;
}

}  // namespace gpusched::placement
