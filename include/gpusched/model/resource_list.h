// File: resource_list.h
//
// A Kubernetes ResourceList as kube-scheduler's NodeResourcesFit counts it: integers in base
// units, cpu in millicores and every other resource in its own unit (bytes, counts), a fraction
// rounded up as Quantity.Value() does. Used for what the GPU rules do not cover: a node's CPU,
// memory, pod count and other extended resources, checked when preemption picks victims.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/model/disruption_budget.h"

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

// What one bound pod asks of its node, for NodeResourcesFit: its effective requests
// (pod_resources.h), and what preemption weighs of it.
struct PodUse {
  std::string uid;
  std::string name;
  int32_t priority = 0;
  bool terminating = false;
  ResourceList requests;
  std::shared_ptr<const PodLabels> labels;  // namespace and labels, for PodDisruptionBudgets

  bool operator==(const PodUse& o) const {
    return uid == o.uid && name == o.name && priority == o.priority && terminating == o.terminating &&
           requests == o.requests && (labels == o.labels || (labels && o.labels && *labels == *o.labels));
  }
};

// Every bound pod's use of one node, by UID, and their sum.
struct NodeUses {
  std::vector<PodUse> pods;  // sorted by uid
  ResourceList total;

  bool operator==(const NodeUses&) const = default;
};

}  // namespace gpusched
