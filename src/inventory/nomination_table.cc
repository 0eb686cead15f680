// File: nomination_table.cc
//
// The nomination table: a nomination keeps its age while it asks for the same on the same node;
// its GPU hold expires by the TTL, restarted while the victims it waits for are leaving.
#include "gpusched/inventory/nomination_table.h"

#include <vector>

namespace gpusched::inventory {
namespace {

// True if the two nominations ask for the same on the same node.
bool Same(const Pod& a, const Pod& b) {
  return a.nominated_node == b.nominated_node && a.priority == b.priority && a.containers == b.containers &&
         a.init_containers == b.init_containers && a.resource_claims == b.resource_claims && a.overhead == b.overhead &&
         a.pod_requests == b.pod_requests;
}

}  // namespace

void NominationTable::Nominate(Pod&& pod, bool gpus, Clock::time_point now, std::set<std::string>* touched) {
  auto it = nominations_.find(pod.uid);
  if (it != nominations_.end()) {
    if (Same(it->second.pod, pod)) return;  // the same hold: it keeps its age
    touched->insert(it->second.pod.nominated_node);
  }
  touched->insert(pod.nominated_node);
  std::string uid = pod.uid;
  PodUse use{.uid = pod.uid, .name = pod.name, .priority = pod.priority, .requests = EffectiveRequests(pod),
             .labels = std::make_shared<const PodLabels>(LabelsOf(pod))};  // host ports count there too
  nominations_.insert_or_assign(std::move(uid), Nomination{std::move(pod), Expiry::Through(now + ttl_), gpus, std::move(use)});
}

void NominationTable::End(std::string_view uid, std::set<std::string>* touched) {
  auto it = nominations_.find(uid);
  if (it == nominations_.end()) return;
  touched->insert(it->second.pod.nominated_node);
  nominations_.erase(it);
}

void NominationTable::EndUnlisted(const std::set<std::string_view>& listed, std::set<std::string>* touched) {
  std::vector<std::string> ended;
  for (const auto& [uid, n] : nominations_) {
    if (!listed.contains(uid)) ended.push_back(uid);
  }
  for (const std::string& uid : ended) End(uid, touched);
}

void NominationTable::ExpireHolds(Clock::time_point now,
                                  const std::function<bool(std::string_view node, int32_t priority)>& leaving,
                                  std::set<std::string>* touched) {
  for (auto& [uid, n] : nominations_) {
    if (!n.gpus) continue;
    if (leaving(n.pod.nominated_node, n.pod.priority)) n.hold = Expiry::Through(now + ttl_);
    if (!n.hold.Passed(now, 0)) continue;
    n.gpus = false;
    touched->insert(n.pod.nominated_node);
  }
}

}  // namespace gpusched::inventory
