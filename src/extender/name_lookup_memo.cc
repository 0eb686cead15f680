#include "gpusched/extender/name_lookup_memo.h"

#include <algorithm>
#include <cstring>

namespace gpusched::extender {

bool NameLookupMemo::Entry::Matches(std::span<const std::string_view> names, const inventory::NameIndex* in) const {
  if (index.get() != in || lengths.size() != names.size()) return false;
  size_t offset = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    if (lengths[i] != names[i].size()) return false;
    if (std::memcmp(bytes.data() + offset, names[i].data(), names[i].size()) != 0) return false;
    offset += names[i].size();
  }
  return true;
}

std::shared_ptr<const NameLookupMemo::Positions> NameLookupMemo::Lookup(
    std::span<const std::string_view> names, const std::shared_ptr<const inventory::NameIndex>& index) {
  std::vector<std::shared_ptr<const Entry>> entries;
  {
    MutexLock lock(&mu_);
    entries = entries_;
  }
  // Compared outside the lock: entries are immutable.
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (!(*it)->Matches(names, index.get())) continue;
    // Most recently used last: the list of every node, used by every filter, is never the one to go.
    MutexLock lock(&mu_);
    auto at = std::find(entries_.begin(), entries_.end(), *it);
    if (at != entries_.end()) std::rotate(at, at + 1, entries_.end());
    return (*it)->positions;
  }
  auto entry = std::make_shared<Entry>();
  entry->index = index;
  auto positions = std::make_shared<Positions>();
  positions->reserve(names.size());
  entry->lengths.reserve(names.size());
  for (std::string_view name : names) {
    positions->push_back(index->Find(name));
    entry->lengths.push_back(static_cast<uint32_t>(name.size()));
    entry->bytes.append(name);
  }
  entry->positions = positions;
  MutexLock lock(&mu_);
  entries_.push_back(std::move(entry));
  if (entries_.size() > capacity_) entries_.erase(entries_.begin());
  return positions;
}

}  // namespace gpusched::extender
