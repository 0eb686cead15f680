// File: constraint.h
//
// One claim constraint (matchAttribute or distinctAttribute) over the devices the search has
// chosen so far: Add tests a device and records it, Remove undoes the last Add (LIFO, as the
// search backtracks). Devices of requests the constraint does not name pass through.
#pragma once

#include <optional>
#include <vector>

#include "gpusched/dra/allocator/pools.h"
#include "gpusched/dra/allocator/requests.h"

namespace gpusched::dra {

class Constraint {
 public:
  explicit Constraint(const DeviceConstraint& spec) : spec_(spec) {}

  // Returns false (recording nothing) if `c` for `request` breaks the constraint.
  bool Add(const RequestData& request, const Candidate& c);
  void Remove() { stack_.pop_back(); }

 private:
  bool InScope(const RequestData& request) const;
  const AttributeValue* Lookup(const Candidate& c) const;

  DeviceConstraint spec_;
  std::vector<std::optional<AttributeValue>> stack_;  // nullopt: a device out of scope
};

}  // namespace gpusched::dra
