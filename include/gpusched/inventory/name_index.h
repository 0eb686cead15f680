// File: name_index.h
//
// Node name -> position in a snapshot's node list, for the 5,000 lookups of every filter call:
// open addressing with linear probing over a flat slot array (hash, offset, length, position),
// the names packed in one buffer. A lookup touches one slot and one name, instead of a hash
// node and a heap string. Immutable once built; safe to share between threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched::inventory {

class NameIndex {
 public:
  static constexpr size_t kNone = static_cast<size_t>(-1);

  NameIndex() = default;
  // Position i is names[i]. REQUIRES: names are distinct.
  explicit NameIndex(const std::vector<std::string_view>& names);

  // Returns the position of `name`, or kNone.
  size_t Find(std::string_view name) const;
  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t offset = 0;
    uint32_t length = 0;
    uint32_t position = 0;
    bool used = false;
  };
  static uint64_t Hash(std::string_view s);

  std::vector<Slot> slots_;
  std::string names_;
  uint64_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace gpusched::inventory
