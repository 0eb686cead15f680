// File: node_table.cc
//
// The chunked node table: built from a node list, and each new version copying only the chunks that
// hold changed positions (each once) while sharing every other chunk with the last.
#include "gpusched/inventory/node_table.h"

namespace gpusched::inventory {

NodeTable NodeTable::Of(std::span<const NodeStatePtr> nodes) {
  NodeTable t;
  t.size_ = nodes.size();
  for (size_t begin = 0; begin < nodes.size(); begin += kChunk) {
    auto chunk = std::make_shared<Chunk>();
    for (size_t i = begin; i < nodes.size() && i < begin + kChunk; ++i) {
      chunk->states[i - begin] = nodes[i];
      chunk->generations[i - begin] = nodes[i] == nullptr ? 0 : nodes[i]->generation;
    }
    t.chunks_.push_back(std::move(chunk));
  }
  return t;
}

NodeTable NodeTable::With(std::span<const std::pair<size_t, NodeStatePtr>> changes) const {
  NodeTable t = *this;
  // Each touched chunk is copied once, however many of its nodes change.
  std::vector<std::pair<size_t, std::shared_ptr<Chunk>>> copied;
  for (const auto& [pos, state] : changes) {
    size_t c = pos / kChunk;
    std::shared_ptr<Chunk> chunk;
    for (auto& [index, copy] : copied) {
      if (index == c) chunk = copy;
    }
    if (chunk == nullptr) {
      chunk = std::make_shared<Chunk>(*chunks_[c]);
      copied.emplace_back(c, chunk);
      t.chunks_[c] = chunk;
    }
    chunk->states[pos % kChunk] = state;
    chunk->generations[pos % kChunk] = state == nullptr ? 0 : state->generation;
  }
  return t;
}

}  // namespace gpusched::inventory
