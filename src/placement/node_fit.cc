// File: node_fit.cc
//
// Node selection as kube-scheduler filters it: unschedulable and NoSchedule/NoExecute taints
// against tolerations, nodeSelector, required node affinity terms (Gt/Lt on integers, matchFields
// on the name); then the same with the node's resources; host ports against one other pod; and the
// names of relations left unjudged.
#include "gpusched/placement/node_fit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "gpusched/placement/pod_relations.h"
#include "gpusched/placement/resource_fit.h"

namespace gpusched::placement {
namespace {

constexpr std::string_view kUnschedulableTaint = "node.kubernetes.io/unschedulable";

bool Matches(const Toleration& t, const Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;  // an empty key is valid with Exists only
  if (t.op == "Exists") return true;
  return (t.op.empty() || t.op == "Equal") && t.value == taint.value;
}

// Reads `text` as a decimal integer into *out; false if it is not one.
bool Integer(std::string_view text, int64_t* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

// One requirement against the value of its key (nullopt: absent).
bool Holds(const NodeRequirement& r, const std::optional<std::string_view>& value) {
  bool listed = value && std::find(r.values.begin(), r.values.end(), *value) != r.values.end();
  if (r.op == "In") return listed;
  if (r.op == "NotIn") return !listed;
  if (r.op == "Exists") return value.has_value();
  if (r.op == "DoesNotExist") return !value.has_value();
  if (r.op == "Gt" || r.op == "Lt") {
    int64_t have = 0, bound = 0;
    if (!value || r.values.size() != 1 || !Integer(*value, &have) || !Integer(r.values[0], &bound)) return false;
    return r.op == "Gt" ? have > bound : have < bound;
  }
  return false;
}

bool TermMatches(const NodeTerm& term, const Node& node) {
  if (term.expressions.empty() && term.fields.empty()) return false;
  for (const NodeRequirement& r : term.expressions) {
    auto it = node.labels.find(r.key);
    if (!Holds(r, it == node.labels.end() ? std::nullopt : std::optional<std::string_view>(it->second))) return false;
  }
  for (const NodeRequirement& r : term.fields) {
    if (r.key != "metadata.name" || (r.op != "In" && r.op != "NotIn")) return false;
    if (!Holds(r, std::string_view(node.name))) return false;
  }
  return true;
}

std::string TaintText(const Taint& t) {
  return t.value.empty() ? fmt::format("{}:{}", t.key, t.effect) : fmt::format("{}={}:{}", t.key, t.value, t.effect);
}

}  // namespace

bool Tolerates(const std::vector<Toleration>& tolerations, const Taint& taint) {
  return std::any_of(tolerations.begin(), tolerations.end(), [&](const Toleration& t) { return Matches(t, taint); });
}

bool MatchesNodeTerms(const std::vector<NodeTerm>& terms, const Node& node) {
  return std::any_of(terms.begin(), terms.end(), [&](const NodeTerm& t) { return TermMatches(t, node); });
}

std::string NodeSelectionProblem(const PodConstraints& pod, const Node& node) {
  const NodeSchedulability& s = node.schedulability;
  if (s.unschedulable && !Tolerates(pod.tolerations, Taint{.key = std::string(kUnschedulableTaint), .effect = "NoSchedule"})) {
    return "node is cordoned (spec.unschedulable)";
  }
  for (const Taint& t : s.taints) {
    if ((t.effect == "NoSchedule" || t.effect == "NoExecute") && !Tolerates(pod.tolerations, t)) {
      return fmt::format("taint {} is not tolerated", TaintText(t));
    }
  }
  for (const auto& [key, value] : pod.node_selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) {
      return it == node.labels.end() ? fmt::format("nodeSelector {}={} does not match (no label {})", key, value, key)
                                     : fmt::format("nodeSelector {}={} does not match ({}={})", key, value, key, it->second);
    }
  }
  if (pod.node_affinity && !MatchesNodeTerms(*pod.node_affinity, node)) return "required node affinity does not match";
  return "";
}

NodeFitJudgement JudgeNodeFit(const Pod& pod, const ResourceList& requests, const NodeState& node) {
  if (std::string why = NodeSelectionProblem(pod.constraints, node.node); !why.empty()) {
    return {Outcome::kUnresolvable, std::move(why)};
  }
  ResourceFit fit(node, requests);
  fit.CountNominated(pod.uid, pod.priority);
  if (const PodUse* own = fit.Find(pod.uid)) fit.Remove(*own);  // explained where it runs
  std::string why = fit.Why();
  if (why.empty()) return {};
  return {fit.Unresolvable() ? Outcome::kUnresolvable : Outcome::kUnschedulable, std::move(why)};
}

std::string HostPortProblem(const std::vector<HostPort>& ports, const PodUse& other) {
  if (other.labels == nullptr) return "";
  for (const HostPort& p : ports) {
    if (PortsConflict({p}, other.labels->constraints.host_ports)) {
      return fmt::format("host port {}/{} is used by {}/{}", p.port, p.protocol, other.labels->namespace_name, other.name);
    }
  }
  return "";
}

namespace {

std::string Unjudged(const PodConstraints& pod, bool ports_judged) {
  std::vector<std::string_view> parts;
  if (!pod.affinity.empty()) parts.push_back("required pod affinity");
  if (!pod.anti_affinity.empty()) parts.push_back("required pod anti-affinity");
  if (std::any_of(pod.spread.begin(), pod.spread.end(), [](const SpreadConstraint& c) { return c.Filters(); })) {
    parts.push_back("topology spread constraints");
  }
  if (!pod.host_ports.empty() && !ports_judged) parts.push_back("host ports");
  if (pod.filter_volumes) parts.push_back("volumes");
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::string UnjudgedRelations(const PodConstraints& pod) { return Unjudged(pod, /*ports_judged=*/false); }

std::string UnjudgedBesidesHostPorts(const PodConstraints& pod) { return Unjudged(pod, /*ports_judged=*/true); }

}  // namespace gpusched::placement
