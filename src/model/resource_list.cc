// File: resource_list.cc
//
// ResourceList's arithmetic: a small name-sorted vector read by linear scan, saturating additions,
// and raising each resource to at least another list's amount.
#include "gpusched/model/resource_list.h"

#include <algorithm>
#include <limits>

namespace gpusched {
namespace {

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out = 0;
  if (!__builtin_add_overflow(a, b, &out)) return out;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

}  // namespace

int64_t ResourceList::Get(std::string_view name) const {
  // A node lists a handful of resources (cpu, memory, pods, storage, hugepages, devices): a scan
  // (== compares lengths first) is faster than a binary search comparing strings.
  for (const auto& [have, amount] : items_) {
    if (have == name) return amount;
  }
  return 0;
}

void ResourceList::Add(std::string_view name, int64_t amount) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name, [](const auto& e, std::string_view n) { return e.first < n; });
  if (it != items_.end() && it->first == name) {
    it->second = SaturatingAdd(it->second, amount);
  } else {
    items_.emplace(it, std::string(name), amount);
  }
}

void ResourceList::Add(const ResourceList& other, int sign) {
  for (const auto& [name, amount] : other.items_) Add(name, sign < 0 ? -amount : amount);
}

void ResourceList::RaiseTo(const ResourceList& other) {
  for (const auto& [name, amount] : other.items_) {
    int64_t have = Get(name);
    if (amount > have) Add(name, amount - have);
  }
}

}  // namespace gpusched
