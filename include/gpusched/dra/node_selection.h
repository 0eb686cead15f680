// File: node_selection.h
//
// Which nodes a slice, a device or an allocation selects: core/v1 NodeSelector semantics (terms
// ORed, requirements ANDed, an empty term matches nothing, Gt/Lt on integers only, matchFields on
// metadata.name), and device taints against a request's tolerations.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/dra/types.h"

namespace gpusched::dra {

// The node being judged. REQUIRES: what the pointers and views refer to outlives the use.
struct NodeInfo {
  std::string_view name;
  const std::map<std::string, std::string, std::less<>>* labels = nullptr;  // null: no labels
};

// Returns true if `selector` selects the node (terms ORed, requirements ANDed).
bool NodeSelectorMatches(const NodeSelector& selector, const NodeInfo& node);

// Returns true if `device` (of a slice with perDeviceNodeSelection) is available on `node`.
bool DeviceNodeMatches(const Device& device, const NodeInfo& node);

// The selector that pins an allocation to `node` (matchFields metadata.name In [node]).
NodeSelector PinnedTo(std::string_view node);

// Returns true if `toleration` tolerates `taint` (resourceclaim.ToleratesTaint).
bool ToleratesTaint(const DeviceToleration& toleration, const DeviceTaint& taint);

// Returns true if every NoSchedule/NoExecute taint of `device` is tolerated by `tolerations`.
bool TaintsTolerated(const Device& device, const std::vector<DeviceToleration>& tolerations);

}  // namespace gpusched::dra
