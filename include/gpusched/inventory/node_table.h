// File: node_table.h
//
// NodeTable: a snapshot's nodes by position (name order), as fixed-size chunks that versions
// share. Publishing a version in which k nodes changed copies at most k chunks and the chunk
// list, never the whole table: a watch event on a 20,000-node inventory costs the same as on a
// 500-node one.
//
// Immutable once built; safe to share between threads.
#pragma once

#include <array>
#include <cstddef>
#include <iterator>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "gpusched/placement/node_state.h"

namespace gpusched::inventory {

using NodeStatePtr = std::shared_ptr<const placement::NodeState>;

class NodeTable {
 public:
  static constexpr size_t kChunk = 128;

  NodeTable() = default;
  // Returns a table of `nodes`, position i holding nodes[i].
  static NodeTable Of(std::span<const NodeStatePtr> nodes);

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // REQUIRES: i < size().
  const NodeStatePtr& operator[](size_t i) const { return chunks_[i / kChunk]->states[i % kChunk]; }
  // Returns the generation of the state at `i`, from the table itself (no visit to the state).
  uint64_t generation(size_t i) const { return chunks_[i / kChunk]->generations[i % kChunk]; }

  // Returns this table with position `pos` holding `state` for each change. Shares every chunk
  // that no change touches. REQUIRES: every pos < size().
  NodeTable With(std::span<const std::pair<size_t, NodeStatePtr>> changes) const;

  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = NodeStatePtr;
    using difference_type = std::ptrdiff_t;
    using pointer = const NodeStatePtr*;
    using reference = const NodeStatePtr&;
    Iterator(const NodeTable* table, size_t i) : table_(table), i_(i) {}
    reference operator*() const { return (*table_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }

   private:
    const NodeTable* table_;
    size_t i_;
  };
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, size_); }

 private:
  struct Chunk {
    std::array<NodeStatePtr, kChunk> states;
    std::array<uint64_t, kChunk> generations{};
  };
  std::vector<std::shared_ptr<const Chunk>> chunks_;
  size_t size_ = 0;
};

}  // namespace gpusched::inventory
