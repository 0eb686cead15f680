// File: name_index.cc
//
// The name index: FNV-1a eight bytes at a time with a final mix, a power-of-two slot table at least
// twice the names with linear probing, and lookups that compare hash, length, then bytes.
#include "gpusched/inventory/name_index.h"

#include <bit>
#include <cstring>

namespace gpusched::inventory {

uint64_t NameIndex::Hash(std::string_view s) {
  // FNV-1a, 8 bytes at a time, then a final mix: names are short and ASCII.
  uint64_t h = 0xcbf29ce484222325ULL;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  for (; i < s.size(); ++i) h = (h ^ static_cast<unsigned char>(s[i])) * 0x100000001b3ULL;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

NameIndex::NameIndex(const std::vector<std::string_view>& names) : size_(names.size()) {
  size_t capacity = std::bit_ceil(std::max<size_t>(16, names.size() * 2));
  slots_.resize(capacity);
  mask_ = capacity - 1;
  size_t bytes = 0;
  for (std::string_view n : names) bytes += n.size();
  names_.reserve(bytes);
  for (size_t p = 0; p < names.size(); ++p) {
    uint64_t h = Hash(names[p]);
    size_t at = h & mask_;
    while (slots_[at].used) at = (at + 1) & mask_;
    slots_[at] = Slot{.hash = h,
                      .offset = static_cast<uint32_t>(names_.size()),
                      .length = static_cast<uint32_t>(names[p].size()),
                      .position = static_cast<uint32_t>(p),
                      .used = true};
    names_.append(names[p]);
  }
}

size_t NameIndex::Find(std::string_view name) const {
  if (slots_.empty()) return kNone;
  uint64_t h = Hash(name);
  for (size_t at = h & mask_;; at = (at + 1) & mask_) {
    const Slot& s = slots_[at];
    if (!s.used) return kNone;
    if (s.hash == h && s.length == name.size() && std::memcmp(names_.data() + s.offset, name.data(), name.size()) == 0) {
      return s.position;
    }
  }
}

}  // namespace gpusched::inventory
