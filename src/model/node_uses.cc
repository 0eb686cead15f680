// File: node_uses.cc
//
// The sorted layout behind NodeUses: lookup by UID hash (a linear scan up to 128 entries, binary
// search above) with equal hashes settled on the packed UID text; insertion and removal keep
// hashes, flags, packed UIDs and the running total in step.
#include "gpusched/model/node_uses.h"

#include <algorithm>
#include <functional>

namespace gpusched {
namespace {

uint64_t UidKey(std::string_view uid) { return std::hash<std::string_view>{}(uid); }

}  // namespace

std::string_view NodeUses::UidAt(size_t i) const {
  return std::string_view(uids_).substr(uid_starts_[i], uid_starts_[i + 1] - uid_starts_[i]);
}

size_t NodeUses::LowerBound(std::string_view uid) const {
  uint64_t key = UidKey(uid);
  size_t i = 0;
  if (keys_.size() <= kLinearSearch) {
    while (i < keys_.size() && keys_[i] < key) ++i;
  } else {
    i = static_cast<size_t>(std::lower_bound(keys_.begin(), keys_.end(), key) - keys_.begin());
  }
  while (i < keys_.size() && keys_[i] == key && UidAt(i) < uid) ++i;  // UIDs sharing a key
  return i;
}

const PodUse* NodeUses::Find(std::string_view uid) const {
  size_t i = LowerBound(uid);
  return i < pods_.size() && UidAt(i) == uid ? &pods_[i] : nullptr;
}

bool NodeUses::Has(std::string_view uid, uint8_t* flags) const {
  size_t i = LowerBound(uid);
  if (i == pods_.size() || UidAt(i) != uid) return false;
  *flags = flags_[i];
  return true;
}

bool NodeUses::Put(PodUse use) {
  size_t i = LowerBound(use.uid);
  if (i < pods_.size() && UidAt(i) == use.uid) {
    if (pods_[i] == use) return false;
    total_.Add(pods_[i].requests, -1);
    total_.Add(use.requests);
    flags_[i] = use.flags;
    pods_[i] = std::move(use);
    return true;
  }
  total_.Add(use.requests);
  keys_.insert(keys_.begin() + static_cast<ptrdiff_t>(i), UidKey(use.uid));
  flags_.insert(flags_.begin() + static_cast<ptrdiff_t>(i), use.flags);
  if (uid_starts_.empty()) uid_starts_.push_back(0);
  uids_.insert(uid_starts_[i], use.uid);
  uid_starts_.insert(uid_starts_.begin() + static_cast<ptrdiff_t>(i) + 1, uid_starts_[i]);
  for (size_t k = i + 1; k < uid_starts_.size(); ++k) uid_starts_[k] += static_cast<uint32_t>(use.uid.size());
  pods_.insert(pods_.begin() + static_cast<ptrdiff_t>(i), std::move(use));
  return true;
}

bool NodeUses::Drop(std::string_view uid) {
  size_t i = LowerBound(uid);
  if (i == pods_.size() || UidAt(i) != uid) return false;
  total_.Add(pods_[i].requests, -1);
  keys_.erase(keys_.begin() + static_cast<ptrdiff_t>(i));
  flags_.erase(flags_.begin() + static_cast<ptrdiff_t>(i));
  uint32_t length = uid_starts_[i + 1] - uid_starts_[i];
  uids_.erase(uid_starts_[i], length);
  uid_starts_.erase(uid_starts_.begin() + static_cast<ptrdiff_t>(i) + 1);
  for (size_t k = i + 1; k < uid_starts_.size(); ++k) uid_starts_[k] -= length;
  pods_.erase(pods_.begin() + static_cast<ptrdiff_t>(i));
  return true;
}

}  // namespace gpusched
