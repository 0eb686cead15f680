#include "gpusched/model/node_uses.h"

#include <algorithm>
#include <functional>

namespace gpusched {
namespace {

uint64_t UidKey(std::string_view uid) { return std::hash<std::string_view>{}(uid); }

}  // namespace

size_t NodeUses::LowerBound(std::string_view uid) const {
  uint64_t key = UidKey(uid);
  size_t i = static_cast<size_t>(std::lower_bound(keys_.begin(), keys_.end(), key) - keys_.begin());
  while (i < keys_.size() && keys_[i] == key && pods_[i].uid < uid) ++i;  // UIDs sharing a key
  return i;
}

const PodUse* NodeUses::Find(std::string_view uid) const {
  uint64_t key = UidKey(uid);
  size_t i = 0;
  if (keys_.size() <= kLinearSearch) {
    while (i < keys_.size() && keys_[i] < key) ++i;
  } else {
    i = static_cast<size_t>(std::lower_bound(keys_.begin(), keys_.end(), key) - keys_.begin());
  }
  for (; i < keys_.size() && keys_[i] == key; ++i) {
    if (pods_[i].uid == uid) return &pods_[i];  // one string compare where the hash matches
  }
  return nullptr;
}

bool NodeUses::Put(PodUse use) {
  size_t i = LowerBound(use.uid);
  if (i < pods_.size() && pods_[i].uid == use.uid) {
    if (pods_[i] == use) return false;
    total_.Add(pods_[i].requests, -1);
    total_.Add(use.requests);
    pods_[i] = std::move(use);
    return true;
  }
  total_.Add(use.requests);
  keys_.insert(keys_.begin() + static_cast<ptrdiff_t>(i), UidKey(use.uid));
  pods_.insert(pods_.begin() + static_cast<ptrdiff_t>(i), std::move(use));
  return true;
}

bool NodeUses::Drop(std::string_view uid) {
  size_t i = LowerBound(uid);
  if (i == pods_.size() || pods_[i].uid != uid) return false;
  total_.Add(pods_[i].requests, -1);
  keys_.erase(keys_.begin() + static_cast<ptrdiff_t>(i));
  pods_.erase(pods_.begin() + static_cast<ptrdiff_t>(i));
  return true;
}

}  // namespace gpusched
