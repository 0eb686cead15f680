// File: what_if.cc
//
// The what-if view: edits recorded, the node state rebuilt once on demand from the base's shared
// allocations.
#include "gpusched/placement/what_if.h"

#include <algorithm>
#include <memory>
#include <utility>

namespace gpusched::placement {

std::string ControllerHoldKey(std::string_view controller_uid) {
  return std::string(kControllerHoldPrefix) + std::string(controller_uid);
}

bool HeldFor(const Allocation& hold, const Viewer& viewer) {
  std::string_view key = hold.pod_uid;
  const std::string_view controller = viewer.controller_uid;
  if (!controller.empty() && key.size() == kControllerHoldPrefix.size() + controller.size() &&
      key.starts_with(kControllerHoldPrefix) && key.ends_with(controller)) {
    return true;
  }
  return key == viewer.uid;
}

bool HoldBinds(const Allocation& hold, const Viewer& viewer) { return !HeldFor(hold, viewer) && hold.priority >= viewer.priority; }

WhatIf& WhatIf::SeenBy(const Viewer& viewer) {
  viewer_ = viewer;
  frees_holds_ = !std::all_of(base_->holds.begin(), base_->holds.end(), [&](const Allocation& h) { return HoldBinds(h, viewer); });
  built_.reset();
  return *this;
}

WhatIf& WhatIf::Consumed(const Viewer& pod) {
  consumer_ = pod;
  consumes_holds_ = std::any_of(base_->holds.begin(), base_->holds.end(), [&](const Allocation& h) { return HeldFor(h, pod); });
  built_.reset();
  return *this;
}

WhatIf& WhatIf::Releasing(const std::set<std::string, std::less<>>& holders) {
  released_ = &holders;
  releases_holds_ = std::any_of(base_->holds.begin(), base_->holds.end(), [&](const Allocation& h) { return holders.contains(h.pod_uid); });
  built_.reset();
  return *this;
}

WhatIf& WhatIf::Without(std::string_view uid) {
  if (base_->FindAllocation(uid) == nullptr) return *this;
  removed_.emplace_back(uid);
  built_.reset();
  return *this;
}

WhatIf& WhatIf::With(Allocation added) {
  added_.push_back(std::make_shared<const Allocation>(std::move(added)));
  built_.reset();
  return *this;
}

const NodeState& WhatIf::state() const {
  if (!changed()) return *base_;
  if (!built_) built_ = Build();
  return *built_;
}

NodeState WhatIf::Take() && {
  if (!changed()) return *base_;
  if (!built_) return Build();
  return std::move(*built_);
}

NodeState WhatIf::Build() const {
  std::vector<AllocationPtr> kept;
  kept.reserve(base_->allocations.size() + added_.size());
  for (const AllocationPtr& a : base_->allocations.shared()) {
    if (std::find(removed_.begin(), removed_.end(), a->pod_uid) == removed_.end()) kept.push_back(a);
  }
  kept.insert(kept.end(), added_.begin(), added_.end());
  NodeState out = BuildNodeStateSharing(base_->node, std::move(kept));
  for (const Allocation& h : base_->holds) {
    bool stays = (!viewer_ || HoldBinds(h, *viewer_)) && (!consumer_ || !HeldFor(h, *consumer_)) &&
                 (released_ == nullptr || !released_->contains(h.pod_uid));
    if (stays) AddHold(h, &out);
  }
  out.uses = base_->uses;
  out.nominated = base_->nominated;
  return out;
}

}  // namespace gpusched::placement
