// File: allocation_list.h
//
// AllocationList: the allocations on one node, each shared with the ledger that holds it. A
// pod's allocation is stored once, however many node states and snapshots show it (at 20,000
// nodes and 320,000 pods a copy per state costs about 170 MB). Reads as a sequence of
// const Allocation&.
//
// Immutable once built; safe to share between threads.
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <vector>

#include "gpusched/model/allocation.h"

namespace gpusched {

using AllocationPtr = std::shared_ptr<const Allocation>;

class AllocationList {
 public:
  AllocationList() = default;
  explicit AllocationList(std::vector<AllocationPtr> items) : items_(std::move(items)) {}

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const Allocation& operator[](size_t i) const { return *items_[i]; }

  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Allocation;
    using difference_type = std::ptrdiff_t;
    using pointer = const Allocation*;
    using reference = const Allocation&;
    explicit Iterator(std::vector<AllocationPtr>::const_iterator it) : it_(it) {}
    reference operator*() const { return **it_; }
    pointer operator->() const { return it_->get(); }
    Iterator& operator++() {
      ++it_;
      return *this;
    }
    bool operator==(const Iterator& o) const { return it_ == o.it_; }

   private:
    std::vector<AllocationPtr>::const_iterator it_;
  };
  // The shared allocations themselves, in list order.
  const std::vector<AllocationPtr>& shared() const { return items_; }
  Iterator begin() const { return Iterator(items_.begin()); }
  Iterator end() const { return Iterator(items_.end()); }

 private:
  std::vector<AllocationPtr> items_;
};

}  // namespace gpusched
