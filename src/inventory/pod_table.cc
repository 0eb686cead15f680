// File: pod_table.cc
//
// The pod table: records by UID with the unbound count and the unreadable list kept in step, and
// the arrival order of remembered pending pods, compacted when stale entries pile up.
#include "gpusched/inventory/pod_table.h"

#include <fmt/format.h>

namespace gpusched::inventory {

void PodTable::Put(Pod&& pod) {
  if (pod.spec_error.empty()) {
    unreadable_.erase(pod.uid);
  } else {
    unreadable_[pod.uid] = fmt::format("pod {}/{} ({}): {}", pod.namespace_name, pod.name, pod.uid, pod.spec_error);
  }
  auto it = pods_.find(pod.uid);
  if (it != pods_.end()) {
    if (!it->second.bound()) --unbound_;
    if (!pod.bound()) ++unbound_;
    it->second = std::move(pod);
    return;
  }
  if (!pod.bound()) ++unbound_;
  std::string uid = pod.uid;
  pods_.emplace(std::move(uid), std::move(pod));
}

bool PodTable::Erase(std::string_view uid) {
  if (auto u = unreadable_.find(std::string(uid)); u != unreadable_.end()) unreadable_.erase(u);
  auto it = pods_.find(uid);
  if (it == pods_.end()) return false;
  if (!it->second.bound()) --unbound_;
  pods_.erase(it);
  return true;
}

const Pod* PodTable::Find(std::string_view uid) const {
  auto it = pods_.find(uid);
  return it != pods_.end() ? &it->second : nullptr;
}

void PodTable::Remember(Pod&& pod) {
  if (!pods_.contains(pod.uid)) arrivals_.push_back(pod.uid);
  Put(std::move(pod));
}

void PodTable::Trim(size_t max, const std::function<bool(std::string_view uid)>& may_forget) {
  while (unbound_ > max && !arrivals_.empty()) {
    std::string uid = std::move(arrivals_.front());
    arrivals_.pop_front();
    const Pod* p = Find(uid);
    if (p != nullptr && !p->bound() && may_forget(uid)) Erase(uid);
  }
  // Entries of pods that were bound or deleted meanwhile are stale; drop them when they pile up.
  if (arrivals_.size() > 2 * max + 1024) {
    std::deque<std::string> live;
    for (std::string& uid : arrivals_) {
      const Pod* p = Find(uid);
      if (p != nullptr && !p->bound()) live.push_back(std::move(uid));
    }
    arrivals_ = std::move(live);
  }
}

}  // namespace gpusched::inventory
