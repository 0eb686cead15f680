// File: slice_index.cc
//
// The slice index: slices grouped by pinned node, unpinned and pool, with a pool id each; and the
// per-slice state computed once: selector verdicts per compiled program, which devices the cluster
// holds, and the capacity their shares consume.
#include "gpusched/dra/slice_index.h"

namespace gpusched::dra {

IndexedSlice::Verdicts* IndexedSlice::VerdictsFor(const cel::Program* program) const {
  MutexLock lock(&mu_);
  for (auto& [p, v] : verdicts_) {
    if (p == program) return v.get();
  }
  verdicts_.emplace_back(program, std::make_unique<Verdicts>(slice_->devices.size()));
  return verdicts_.back().second.get();
}

void IndexedSlice::MarkHeld(const AllocatedDevices& allocated) {
  held_.assign(slice_->devices.size(), 0);
  consumed_.clear();
  for (size_t i = 0; i < slice_->devices.size(); ++i) {
    DeviceId id{slice_->driver, slice_->pool, slice_->devices[i].name};
    if (allocated.exclusive.contains(id)) held_[i] |= kHeldExclusive;
    if (allocated.shared.contains(id)) held_[i] |= kHeldShared;
    if (auto it = allocated.consumed_capacity_milli.find(id); it != allocated.consumed_capacity_milli.end()) {
      held_[i] |= kHeldShared;
      consumed_.emplace_back(i, it->second);
    }
  }
  held_for_ = &allocated;
}

namespace {

std::vector<SlicePtr> Share(std::vector<ResourceSlice> slices) {
  std::vector<SlicePtr> out;
  out.reserve(slices.size());
  for (ResourceSlice& s : slices) out.push_back(std::make_shared<const ResourceSlice>(std::move(s)));
  return out;
}

}  // namespace

SliceIndex::SliceIndex(std::vector<ResourceSlice> slices) : SliceIndex(Share(std::move(slices))) {}

SliceIndex::SliceIndex(std::vector<SlicePtr> slices) {
  slices_.reserve(slices.size());
  for (SlicePtr& s : slices) slices_.push_back(std::make_unique<IndexedSlice>(std::move(s)));
  std::map<std::pair<std::string_view, std::string_view>, std::vector<IndexedSlice*>> by_pool;
  for (const auto& entry : slices_) {
    const ResourceSlice& s = entry->slice();
    if (!s.node_name.empty()) {
      by_node_[s.node_name].push_back(entry.get());
    } else {
      unpinned_.push_back(entry.get());
    }
    by_pool[{s.driver, s.pool}].push_back(entry.get());
  }
  for (auto& [key, members] : by_pool) {
    for (IndexedSlice* s : members) s->pool_id_ = pools_.size();
    pools_.emplace_back(members.begin(), members.end());
  }
}

const std::vector<const IndexedSlice*>& SliceIndex::PinnedTo(std::string_view node) const {
  static const std::vector<const IndexedSlice*> kNone;
  auto it = by_node_.find(node);
  return it == by_node_.end() ? kNone : it->second;
}

std::vector<const IndexedSlice*> SliceIndex::Candidates(std::string_view node) const {
  std::vector<const IndexedSlice*> out = unpinned_;
  if (auto it = by_node_.find(node); it != by_node_.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  return out;
}

}  // namespace gpusched::dra
