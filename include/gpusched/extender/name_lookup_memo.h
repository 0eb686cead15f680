// File: name_lookup_memo.h
//
// The snapshot positions of the last few NodeNames lists. kube-scheduler sends the same list
// (every node) pod after pod: looking 5,000 names up in the name index costs about 65 µs,
// comparing them with a remembered list about a tenth of that. A list is remembered with the
// name index it was looked up in, so a change of the node set is never answered from an old one.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/inventory/name_index.h"

namespace gpusched::extender {

class NameLookupMemo {
 public:
  using Positions = std::vector<size_t>;  // NameIndex::kNone for a name the index does not hold

  explicit NameLookupMemo(size_t capacity = 4) : capacity_(capacity) {}

  // Returns the position of each of `names` in `index`.
  std::shared_ptr<const Positions> Lookup(std::span<const std::string_view> names,
                                          const std::shared_ptr<const inventory::NameIndex>& index)
      GPUSCHED_EXCLUDES(mu_);

 private:
  struct Entry {
    std::shared_ptr<const inventory::NameIndex> index;
    std::vector<uint32_t> lengths;  // of each name, so that no two lists share one spelling
    std::string bytes;              // the names back to back
    std::shared_ptr<const Positions> positions;

    bool Matches(std::span<const std::string_view> names, const inventory::NameIndex* in) const;
  };

  const size_t capacity_;
  Mutex mu_;
  std::vector<std::shared_ptr<const Entry>> entries_ GPUSCHED_GUARDED_BY(mu_);  // most recently used last
};

}  // namespace gpusched::extender
