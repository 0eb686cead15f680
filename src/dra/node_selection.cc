// File: node_selection.cc
//
// Node selection for DRA objects: NodeSelector terms and requirements (In, NotIn, Exists,
// DoesNotExist, Gt/Lt on integers, matchFields on the name), a device's own node selection, the
// selector pinning one node, and device taints against tolerations.
#include "gpusched/dra/node_selection.h"

#include <algorithm>
#include <charconv>

namespace gpusched::dra {

namespace {

bool ParseInt64(std::string_view s, int64_t* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool RequirementMatches(const NodeSelectorRequirement& r, const std::string* value) {
  auto in = [&] { return value != nullptr && std::find(r.values.begin(), r.values.end(), *value) != r.values.end(); };
  if (r.op == "In") return in();
  if (r.op == "NotIn") return !in();
  if (r.op == "Exists") return value != nullptr;
  if (r.op == "DoesNotExist") return value == nullptr;
  if ((r.op == "Gt" || r.op == "Lt") && value != nullptr && r.values.size() == 1) {
    // As the Kubernetes node selector: both sides integers, or the requirement does not match.
    int64_t have = 0, want = 0;
    if (!ParseInt64(*value, &have) || !ParseInt64(r.values[0], &want)) return false;
    return r.op == "Gt" ? have > want : have < want;
  }
  return false;
}

}  // namespace

bool NodeSelectorMatches(const NodeSelector& selector, const NodeInfo& node) {
  for (const NodeSelectorTerm& term : selector.terms) {
    if (term.match_expressions.empty() && term.match_fields.empty()) continue;  // an empty term matches nothing
    bool all = true;
    for (const NodeSelectorRequirement& r : term.match_expressions) {
      const std::string* value = nullptr;
      if (node.labels != nullptr) {
        auto it = node.labels->find(r.key);
        if (it != node.labels->end()) value = &it->second;
      }
      if (!RequirementMatches(r, value)) all = false;
    }
    std::string name(node.name);
    for (const NodeSelectorRequirement& r : term.match_fields) {
      if (r.key != "metadata.name" || !RequirementMatches(r, &name)) all = false;
    }
    if (all) return true;
  }
  return false;
}

bool ToleratesTaint(const DeviceToleration& t, const DeviceTaint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.op == "Exists") return true;
  if (t.op == "Equal" || t.op.empty()) return t.value == taint.value;
  return false;
}

bool DeviceNodeMatches(const Device& d, const NodeInfo& node) {
  if (!d.node_name.empty()) return d.node_name == node.name;
  if (d.all_nodes) return true;
  if (d.node_selector) return NodeSelectorMatches(*d.node_selector, node);
  return false;
}

NodeSelector PinnedTo(std::string_view node) {
  return NodeSelector{.terms = {NodeSelectorTerm{
                          .match_fields = {NodeSelectorRequirement{.key = "metadata.name", .op = "In", .values = {std::string(node)}}}}}};
}

bool TaintsTolerated(const Device& device, const std::vector<DeviceToleration>& tolerations) {
  for (const DeviceTaint& taint : device.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (std::none_of(tolerations.begin(), tolerations.end(), [&](const DeviceToleration& t) { return ToleratesTaint(t, taint); })) {
      return false;
    }
  }
  return true;
}

}  // namespace gpusched::dra
