// File: group_table.cc
//
// The pod groups by object: an object's groups are replaced together, a relist ends one API's.
#include "gpusched/inventory/group_table.h"

#include <set>

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
