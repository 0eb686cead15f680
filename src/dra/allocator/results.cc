// File: results.cc
//
// A claim's AllocationResult from the chosen devices: the device results, the configs (each class's
// once, then the claim's own), and the nodeSelector pinned to the node or merged from the slices'
// and devices' selectors.
#include "gpusched/dra/allocator/results.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "gpusched/dra/node_selection.h"

namespace gpusched::dra {
namespace {

// Configs (Kubernetes ≤ 1.36): class configs once per class, listing the requests using it;
// then the claim's configs for the requests (or chosen subrequests) they name.
std::vector<ResultConfig> Configs(const ClaimData& cd) {
  std::vector<ResultConfig> out;
  std::vector<std::pair<const DeviceClass*, std::vector<std::string>>> by_class;
  std::vector<std::string> chosen_names;
  for (size_t r = 0; r < cd.requests.size(); ++r) {
    const RequestData& rd = cd.requests[r][cd.requests[r].front().is_sub ? cd.chosen_sub[r] : 0];
    chosen_names.push_back(rd.name);
    auto it = std::find_if(by_class.begin(), by_class.end(), [&](const auto& e) { return e.first == rd.device_class; });
    if (it == by_class.end()) {
      by_class.emplace_back(rd.device_class, std::vector<std::string>{rd.name});
    } else {
      it->second.push_back(rd.name);
    }
  }
  for (const auto& [cls, requests] : by_class) {
    for (const OpaqueConfig& config : cls->configs) out.push_back(ResultConfig{.source = "FromClass", .requests = requests, .opaque = config});
  }
  auto names = [](const ClaimConfig& config, const std::string& name) {
    return std::find(config.requests.begin(), config.requests.end(), name) != config.requests.end();
  };
  for (const ClaimConfig& config : cd.claim->configs) {
    if (config.requests.empty()) {
      out.push_back(ResultConfig{.source = "FromClaim", .requests = {}, .opaque = config.opaque});
      continue;
    }
    for (size_t r = 0; r < cd.requests.size(); ++r) {
      const std::string& parent = cd.claim->requests[r].name;
      if (names(config, parent) || (chosen_names[r] != parent && names(config, chosen_names[r]))) {
        out.push_back(ResultConfig{.source = "FromClaim", .requests = config.requests, .opaque = config.opaque});
      }
    }
  }
  return out;
}

void MergeRequirements(std::vector<NodeSelectorRequirement>* into, const std::vector<NodeSelectorRequirement>& from) {
  for (const NodeSelectorRequirement& r : from) {
    if (std::find(into->begin(), into->end(), r) == into->end()) into->push_back(r);
  }
}

std::optional<NodeSelector> ResultNodeSelector(const std::vector<const Candidate*>& devices, std::string_view node) {
  bool local = false;
  bool any_selector = false;
  NodeSelectorTerm merged;
  for (const Candidate* cand : devices) {
    const ResourceSlice& s = cand->slice->slice();
    const Device& d = *cand->device;
    const std::optional<NodeSelector>& sel = s.per_device_node_selection ? d.node_selector : s.node_selector;
    local = local || (s.per_device_node_selection ? !d.node_name.empty() : !s.node_name.empty()) || d.binds_to_node;
    if (sel && !sel->terms.empty()) {
      any_selector = true;
      MergeRequirements(&merged.match_expressions, sel->terms[0].match_expressions);
      MergeRequirements(&merged.match_fields, sel->terms[0].match_fields);
    }
  }
  if (local) return PinnedTo(node);
  if (any_selector) return NodeSelector{.terms = {std::move(merged)}};
  return std::nullopt;
}

}  // namespace

AllocationResult BuildResult(const ClaimData& claim, std::vector<DeviceResult> results, const std::vector<const Candidate*>& devices,
                             std::string_view node) {
  AllocationResult out;
  out.results = std::move(results);
  out.config = Configs(claim);
  out.node_selector = ResultNodeSelector(devices, node);
  return out;
}

}  // namespace gpusched::dra
