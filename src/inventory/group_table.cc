// File: group_table.cc
//
// The pod groups by object: an object's groups are replaced together, a relist ends one API's.
#include "gpusched/inventory/group_table.h"

#include <set>

#include "gpusched/placement/gang_planner.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::inventory {
namespace {

// Removes the groups of the object `object` (an ObjectKey) from `groups`.
void EraseObject(GroupTable::Groups* groups, const std::string& object) {
  groups->erase(object);
  std::string prefix = object + "/";  // a Workload's groups: "<object>/<podGroup>"
  for (auto it = groups->lower_bound(prefix); it != groups->end() && it->first.starts_with(prefix);) it = groups->erase(it);
}

}  // namespace

std::string GroupTable::ObjectKey(const PodGroup& g) {
  if (g.api != GroupApi::kWorkload) return GroupKey(g);
  return GroupKey(g.api, g.namespace_name, std::string_view(g.name).substr(0, g.name.find('/')));
}

std::string GroupTable::MemberKey(GroupApi api, std::string_view namespace_name, std::string_view name,
                                  std::string_view replica) {
  std::string key = GroupKey(api, namespace_name, name);
  if (!replica.empty()) key.append("#").append(replica);
  return key;
}

std::string GroupTable::MemberKey(const Pod& pod) {
  return pod.group ? MemberKey(pod.group->api, pod.namespace_name, pod.group->name, pod.group->replica) : "";
}

void GroupTable::PutMember(const Pod& pod) {
  bool member = pod.group && !pod.terminal() && !pod.terminating;
  std::string key = member ? MemberKey(pod) : "";
  if (auto it = member_of_.find(pod.uid); it != member_of_.end() && member && it->second.key == key &&
                                          it->second.bound == pod.bound()) {
    if (pod.bound()) return;  // still bound there: nothing to tell
    if (auto group = pending_.find(key); group != pending_.end()) {
      auto kept = group->second.find(pod.uid);
      if (kept != group->second.end() && *kept->second == pod) return;  // the same pending pod
    }
  }
  DropMember(pod.uid);
  if (!member) return;
  if (pod.bound()) {
    bound_[key].insert(pod.uid);
  } else {
    pending_[key].insert_or_assign(pod.uid, std::make_shared<const Pod>(pod));
  }
  int64_t demand = placement::GangDemand(placement::AnalyzePod(pod));
  member_of_.insert_or_assign(pod.uid, Membership{std::move(key), pod.bound(), demand});
  members_changed_ = true;
}

void GroupTable::DropMember(std::string_view uid) {
  auto it = member_of_.find(uid);
  if (it == member_of_.end()) return;
  const std::string& key = it->second.key;
  if (it->second.bound) {
    if (auto group = bound_.find(key); group != bound_.end() && (group->second.erase(std::string(uid)), group->second.empty())) {
      bound_.erase(group);
    }
  } else if (auto group = pending_.find(key); group != pending_.end()) {
    group->second.erase(std::string(uid));
    if (group->second.empty()) pending_.erase(group);
  }
  member_of_.erase(it);
  members_changed_ = true;
}

void GroupTable::DropPending(std::string_view uid) {
  if (auto it = member_of_.find(uid); it != member_of_.end() && !it->second.bound) DropMember(uid);
}

void GroupTable::KeepPending(const std::set<std::string_view>& listed) {
  std::vector<std::string> gone;
  for (const auto& [uid, membership] : member_of_) {
    if (!membership.bound && !listed.contains(uid)) gone.push_back(uid);
  }
  for (const std::string& uid : gone) DropMember(uid);
}

const std::shared_ptr<const GroupTable::MembersByKey>& GroupTable::members() {
  if (!members_changed_) return members_;
  // Rebuilt whole: a copy of pointers per member, only after a change.
  MembersByKey next;
  auto demand = [&](const std::string& uid) { return member_of_.find(uid)->second.demand; };
  for (const auto& [key, pods] : pending_) {
    Members& m = next[key];
    for (const auto& [uid, pod] : pods) {
      m.pending.push_back(pod);
      m.demands.push_back(demand(uid));
    }
  }
  for (const auto& [key, uids] : bound_) {
    Members& m = next[key];
    m.bound = uids.size();
    m.bound_uids.assign(uids.begin(), uids.end());
    for (const std::string& uid : uids) m.demands.push_back(demand(uid));
  }
  members_ = std::make_shared<const MembersByKey>(std::move(next));
  members_changed_ = false;
  return members_;
}

bool GroupTable::Apply(std::vector<PodGroup> upserts, const std::vector<std::string>& deleted,
                       const std::vector<GroupApi>& relisted) {
  if (upserts.empty() && deleted.empty() && relisted.empty()) return false;
  Groups next = *groups_;
  std::set<GroupApi> relisting(relisted.begin(), relisted.end());
  std::erase_if(next, [&](const auto& kv) { return relisting.contains(kv.second.api); });
  for (const std::string& object : deleted) EraseObject(&next, object);
  std::set<std::string> replaced;  // objects whose groups `upserts` holds
  for (const PodGroup& g : upserts) {
    if (replaced.insert(ObjectKey(g)).second) EraseObject(&next, ObjectKey(g));
  }
  for (PodGroup& g : upserts) {
    std::string key = GroupKey(g);
    next.insert_or_assign(std::move(key), std::move(g));
  }
  if (next == *groups_) return false;
  groups_ = std::make_shared<const Groups>(std::move(next));
  return true;
}

}  // namespace gpusched::inventory
