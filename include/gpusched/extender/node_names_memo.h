// File: node_names_memo.h
//
// The NodeNames lists of the last few requests, each with the JSON text kube-scheduler writes for
// it (Go's encoding/json: ["a","b"], no spaces). kube-scheduler sends the same list of every node
// pod after pod; when a body's NodeNames value starts with a remembered text, it is that list
// (a JSON array is self-delimiting), and its 5,000 strings need not be parsed, nor looked up in
// the name index, again.
//
// Thread-safe. Lists are immutable and shared with the requests that use them.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/inventory/name_index.h"

namespace gpusched::extender {

class NodeNamesMemo {
 public:
  struct List {
    std::string json;                     // the array as Go writes it
    std::string bytes;                    // the names back to back; views point into it
    std::vector<std::string_view> names;  // in list order

    // Returns the position of each name in `index` (NameIndex::kNone if absent), looked up on
    // the first call for that index and kept while the node set stays the same.
    std::shared_ptr<const std::vector<size_t>> PositionsIn(const std::shared_ptr<const inventory::NameIndex>& index) const
        GPUSCHED_EXCLUDES(mu);

   private:
    mutable Mutex mu;
    mutable std::shared_ptr<const inventory::NameIndex> index GPUSCHED_GUARDED_BY(mu);
    mutable std::shared_ptr<const std::vector<size_t>> positions GPUSCHED_GUARDED_BY(mu);
  };

  explicit NodeNamesMemo(size_t capacity = 4) : capacity_(capacity) {}

  // Returns the remembered list whose JSON text `text` starts with, or null.
  std::shared_ptr<const List> Match(std::string_view text) const GPUSCHED_EXCLUDES(mu_);
  // Remembers `names` (a list that was parsed in full). Names that Go would escape are not
  // remembered: their text would not be found again.
  void Remember(std::span<const std::string_view> names) GPUSCHED_EXCLUDES(mu_);

 private:
  // Marks `list` as just used.
  void Touch(const std::shared_ptr<const List>& list) const GPUSCHED_EXCLUDES(mu_);

  const size_t capacity_;
  mutable Mutex mu_;
  mutable std::vector<std::shared_ptr<const List>> lists_ GPUSCHED_GUARDED_BY(mu_);  // most recently used last
};

}  // namespace gpusched::extender
