// File: resource_list.h
//
// A Kubernetes ResourceList as kube-scheduler's NodeResourcesFit counts it: integers in base
// units, cpu in millicores and every other resource in its own unit (bytes, counts), a fraction
// rounded up as Quantity.Value() does. Used for what the GPU rules do not cover: a node's CPU,
// memory, pod count and other extended resources, checked when preemption picks victims.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>


namespace gpusched {

class ResourceList {
 public:
  // Returns the amount of `name`, 0 if absent.
  int64_t Get(std::string_view name) const;
  // Adds `amount` of `name` (saturating at the int64 bounds).
  void Add(std::string_view name, int64_t amount);
  // Adds (sign 1) or subtracts (sign -1) every entry of `other`.
  void Add(const ResourceList& other, int sign = 1);
  // Raises each entry to at least `other`'s.
  void RaiseTo(const ResourceList& other);

  bool empty() const { return items_.empty(); }
  // By name.
  const std::vector<std::pair<std::string, int64_t>>& items() const { return items_; }
  bool operator==(const ResourceList&) const = default;

 private:
  std::vector<std::pair<std::string, int64_t>> items_;  // sorted by name, no duplicates
};

}  // namespace gpusched
