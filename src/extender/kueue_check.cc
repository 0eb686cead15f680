// File: kueue_check.cc
//
// kueue_check.h: a Workload's admitted pods made from its templates and flavors, planned as one
// group, and the verdict said in explain's words.
#include "gpusched/extender/kueue_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <deque>
#include <map>

#include "gpusched/dra/object_set.h"
#include "gpusched/extender/defrag.h"
#include "gpusched/extender/explain.h"
#include "gpusched/extender/gang_domains.h"
#include "gpusched/extender/gang_holds.h"
#include "gpusched/json/writer.h"

namespace gpusched::extender {
namespace {

constexpr std::string_view kPodSetLabel = "kueue.x-k8s.io/podset";

// Adds the node labels and tolerations of the flavors pod set `set` is assigned to `pod`.
Status AddFlavors(const kueue::Workload& w, const kueue::PodSet& set, const KueueFlavors& flavors, Pod* pod) {
  for (const kueue::PodSetAssignment& a : w.assignments) {
    if (a.name != set.name) continue;
    std::set<std::string_view> named;
    for (const auto& [resource, flavor] : a.flavors) named.insert(flavor);
    for (std::string_view name : named) {
      auto f = flavors.find(name);
      if (f == flavors.end()) {
        return NotFoundError(fmt::format("status.admission.podSetAssignments[{}].flavors: ResourceFlavor \"{}\" is not known", set.name, name));
      }
      for (const auto& [key, value] : f->second.node_labels) pod->constraints.node_selector.insert_or_assign(key, value);
      pod->constraints.tolerations.insert(pod->constraints.tolerations.end(), f->second.tolerations.begin(), f->second.tolerations.end());
    }
  }
  return OkStatus();
}

// Adds to `pod` the node selector and tolerations that the Ready checks' podSetUpdates give pod
// set `set` (Kueue merges them into the pods it starts).
void AddChecksUpdates(const kueue::Workload& w, const kueue::PodSet& set, Pod* pod) {
  for (const kueue::CheckStatus& c : w.checks) {
    if (c.state != kueue::CheckState::kReady) continue;
    for (const kueue::CheckPodSetUpdate& u : c.updates) {
      if (u.name != set.name) continue;
      for (const auto& [key, value] : u.node_selector) pod->constraints.node_selector.insert_or_assign(key, value);
      pod->constraints.tolerations.insert(pod->constraints.tolerations.end(), u.tolerations.begin(), u.tolerations.end());
    }
  }
}

// The domain of a topologyAssignment that pod `k` of its pod set goes to (the domains take their
// counts of pods in order), or null beyond them.
const kueue::TopologyDomain* DomainOf(const std::vector<kueue::TopologyDomain>& domains, int32_t k) {
  for (const kueue::TopologyDomain& d : domains) {
    if (k < d.count) return &d;
    k -= d.count;
  }
  return nullptr;
}

// The snapshot's nodes as they would be with nothing on them, Ready, and without cordons or taints
// (each may go: a drain, maintenance, pressure, an autoscaler's mark), but those whose label
// takes no GPU pods; or none when some node's GPUs cannot be judged now (a mode switch, a
// contradiction, a description that cannot be read), since such a node may hold the pods once
// it can.
std::deque<placement::NodeState> EmptyNodes(const inventory::InventorySnapshot& snapshot) {
  std::deque<placement::NodeState> out;
  for (const inventory::NodeStatePtr& n : snapshot.nodes()) {
    if (n->condition == placement::NodeCondition::kInvalid) continue;  // its label takes no GPU pods: configured so
    if (n->condition != placement::NodeCondition::kReady || !n->node.spec_error.empty()) return {};
    Node node = n->node;
    node.schedulability = NodeSchedulability{.ready = true};
    node.bookings.clear();
    node.holds.clear();
    out.push_back(placement::BuildNodeState(std::move(node), {}));
  }
  return out;
}

// The first pod set (by the pods' order) none of whose pods fits any node even empty (EmptyNodes),
// or "" when each fits some, or when that cannot be told now. DRA is not judged so (devices come
// from claims and slices, which an empty node does not reset): a cluster with nvidia-dra nodes,
// or a pod with claims, is never said to fit nowhere.
std::string PodSetThatNeverFits(const kueue::Workload& w, const std::vector<Pod>& pods, const EvaluationInputs& in) {
  std::deque<placement::NodeState> empty = EmptyNodes(*in.snapshot);
  std::vector<const placement::NodeState*> nodes;
  for (const placement::NodeState& n : empty) {
    if (HasPayload(n.mode, Payload::kDevices)) return "";  // devices from claims
    nodes.push_back(&n);
  }
  if (nodes.empty()) return "";
  size_t at = 0;
  for (size_t i = 0; i < w.pod_sets.size(); at += static_cast<size_t>(w.AdmittedCount(i)), ++i) {
    if (w.AdmittedCount(i) == 0 || !pods[at].resource_claims.empty()) continue;
    placement::GangPlan one = PlanOn({pods[at]}, nodes, *in.snapshot, *in.options, in.programs);
    if (!one.fits && !one.unplannable) return w.pod_sets[i].name;
  }
  return "";
}

// The claims the resourceclaim controller would make for `pods`' template claims, from the
// templates in `kueue`; each pod's claim reference then names its claim (as
// status.resourceClaimStatuses will). Errors: NotFound naming a template not read.
StatusOr<std::vector<dra::ResourceClaim>> TemplateClaims(const inventory::KueueState& kueue, std::vector<Pod>* pods) {
  std::vector<dra::ResourceClaim> out;
  for (Pod& pod : *pods) {
    for (PodClaimRef& ref : pod.resource_claims) {
      if (ref.template_name.empty()) continue;
      auto t = kueue.claim_templates.find(pod.namespace_name + "/" + ref.template_name);
      if (t == kueue.claim_templates.end()) {
        return NotFoundError(fmt::format("pod {}: ResourceClaimTemplate {}/{} is not known", pod.name, pod.namespace_name, ref.template_name));
      }
      dra::ResourceClaim claim = t->second;
      claim.name = fmt::format("{}-{}", pod.name, ref.name);
      claim.uid = fmt::format("{}/claim/{}", pod.uid, ref.name);
      claim.owner_pod_uid = pod.uid;
      ref.generated = claim.name;
      out.push_back(std::move(claim));
    }
  }
  return out;
}

// Where the plan puts the pods: "3 pods fit on 2 nodes: a (2), b (1)".
std::string FitsText(const placement::GangPlan& plan) {
  std::map<std::string, int> per_node;
  for (const placement::GangSlot& s : plan.slots) ++per_node[s.node];
  std::string out = fmt::format("{} pod{} fit on {} node{}:", plan.slots.size(), plan.slots.size() == 1 ? "" : "s",
                                per_node.size(), per_node.size() == 1 ? "" : "s");
  int shown = 0;
  for (const auto& [node, n] : per_node) {
    if (shown++ == 8) return out + " ...";
    out += fmt::format("{} {} ({})", shown > 1 ? "," : "", node, n);
  }
  return out;
}

// Why `pod` fits no node now, in explain's words: each distinct reason with the nodes that give
// it, most nodes first, at most three ("insufficient nvidia.com/gpu: pod needs 8, node has 4 of
// 8 free (2 nodes: g1, g2)"); "fits" when some node holds it alone; "" when explain cannot judge it.
std::string WhyNoNode(const Pod& pod, const EvaluationInputs& in) {
  StatusOr<Explanation> e = Explain(pod, std::nullopt, in);
  if (!e.ok()) return "";
  std::map<std::string, std::vector<std::string>> nodes_by_reason;
  for (const NodeExplanation& n : e->nodes) {
    if (n.fits) return "fits";
    for (const std::string& r : Reasons(n)) nodes_by_reason[r].push_back(n.node);
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> ranked(nodes_by_reason.begin(), nodes_by_reason.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  std::string out = fmt::format("fits on 0 of {} nodes:", e->nodes.size());
  for (size_t i = 0; i < ranked.size() && i < 3; ++i) {
    const std::vector<std::string>& on = ranked[i].second;
    std::string names = fmt::format("{}", fmt::join(on.begin(), on.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(on.size(), 3)), ", "));
    out += fmt::format("{} {} ({} node{}: {}{})", i ? ";" : "", ranked[i].first, on.size(), on.size() == 1 ? "" : "s", names,
                       on.size() > 3 ? ", ..." : "");
  }
  return ranked.size() > 3 ? out + fmt::format("; and {} other reasons", ranked.size() - 3) : out;
}

// True if Kueue's topology scheduling assigns domains to some pod set of `w`.
bool KueueAssignsDomains(const kueue::Workload& w) {
  return std::any_of(w.assignments.begin(), w.assignments.end(),
                     [](const kueue::PodSetAssignment& a) { return a.topology_assigned || a.topology_delayed; });
}

// Plans v->pods: inside one domain of the topology levels where they are configured and Kueue
// assigns none, else across the cluster (Kueue's domains confine the pods' node selection). Off
// the domain kept for a waiting gang either way, where the pods stay off it (KeptOffFor): filter
// would keep them off it.
void PlanPods(const kueue::Workload& w, const EvaluationInputs& in, WorkloadVerdict* v) {
  std::optional<DomainReservation> kept = KeptReservation(in);
  if (in.options->topology_levels.empty() || KueueAssignsDomains(w)) {
    v->plan = PlanPendingOffKept(v->pods, kept ? &*kept : nullptr, *in.snapshot, *in.options, in.programs);
    return;
  }
  GangPlacement g = PlanGangInDomains(v->pods, v->pods.size(), "", {}, DomainWait{}, *in.snapshot, *in.options, in.programs,
                                      kept ? &*kept : nullptr);
  v->plan = std::move(g.plan);
  v->pods = std::move(g.planned);
  if (!g.domain.empty()) {
    v->domain_key = g.level;
    v->domain_value = g.domain;
  }
}

WorkloadVerdict Verdict(kueue::CheckState state, std::string message) {
  return WorkloadVerdict{.state = state, .message = std::move(message)};
}

}  // namespace

std::string AdmittedPodUid(const kueue::Workload& w, std::string_view pod_set, int32_t ordinal) {
  return fmt::format("kueue/{}/{}/{}/{}", w.namespace_name, w.name, pod_set, ordinal);
}

StatusOr<std::vector<Pod>> AdmittedPods(const kueue::Workload& w, const KueueFlavors& flavors) {
  std::vector<Pod> out;
  for (size_t i = 0; i < w.pod_sets.size(); ++i) {
    const kueue::PodSet& set = w.pod_sets[i];
    Pod proto = set.prototype;
    proto.priority = w.priority;
    GPUSCHED_RETURN_IF_ERROR(AddFlavors(w, set, flavors, &proto));
    AddChecksUpdates(w, set, &proto);
    const kueue::PodSetAssignment* assigned = nullptr;
    for (const kueue::PodSetAssignment& a : w.assignments) assigned = a.name == set.name ? &a : assigned;
    for (int32_t k = 0; k < w.AdmittedCount(i); ++k) {
      Pod& p = out.emplace_back(proto);
      // Kueue's topology scheduling: the pod goes to its domain, as Kueue's node selector sends it.
      if (const kueue::TopologyDomain* d = assigned != nullptr ? DomainOf(assigned->topology, k) : nullptr) {
        for (const auto& [key, value] : d->node_labels) p.constraints.node_selector.insert_or_assign(key, value);
      }
      p.name = fmt::format("{}-{}-{}", w.name, set.name, k);
      p.uid = AdmittedPodUid(w, set.name, k);
      p.labels.insert_or_assign(std::string(kPodSetLabel), set.name);  // as Kueue labels the pods it starts
    }
  }
  return out;
}

WorkloadVerdict JudgeWorkload(const kueue::Workload& w, const inventory::KueueState& kueue, const EvaluationInputs& given) {
  if (!w.quota_reserved || w.finished || w.evicted) {
    return Verdict(kueue::CheckState::kPending, "not judged: the Workload has no quota reserved, or is finished or evicted");
  }
  for (const kueue::PodSet& set : w.pod_sets) {
    if (!set.prototype.spec_error.empty()) return Verdict(kueue::CheckState::kRejected, fmt::format("pod set {}: {}", set.name, set.prototype.spec_error));
  }
  // An object not read yet (a flavor, a claim template) leaves the Workload waiting, undecided.
  StatusOr<std::vector<Pod>> pods = AdmittedPods(w, kueue.flavors);
  if (!pods.ok()) return Verdict(kueue::CheckState::kPending, fmt::format("not judged: {}", pods.status().message()));
  WorkloadVerdict v{.pods = *std::move(pods)};
  StatusOr<std::vector<dra::ResourceClaim>> claims = TemplateClaims(kueue, &v.pods);
  if (!claims.ok()) return Verdict(kueue::CheckState::kRetry, std::string(claims.status().message()));
  v.holdable = std::none_of(w.assignments.begin(), w.assignments.end(), [](const kueue::PodSetAssignment& a) { return a.topology_delayed; });
  std::shared_ptr<const inventory::InventorySnapshot> with_claims;
  EvaluationInputs in = given;
  if (!claims->empty()) {
    with_claims = given.snapshot->WithDra(dra::WithClaims(given.snapshot->dra(), *std::move(claims)));
    in.snapshot = with_claims.get();
  }
  PlanPods(w, in, &v);
  if (v.plan.fits) {
    v.state = kueue::CheckState::kReady;
    v.message = FitsText(v.plan);
    if (!v.domain_key.empty()) v.message += fmt::format(" (one domain: {}={})", v.domain_key, v.domain_value);
    return v;
  }
  v.state = kueue::CheckState::kRetry;
  v.message = v.plan.reason;
  if (v.plan.unplannable) return v;
  const Pod& failed = v.pods[v.plan.failed];
  std::string alone = WhyNoNode(failed, in);
  if (alone == "fits") {
    v.message = fmt::format("{} of {} pods fit together; {} fits alone, not beside the pods planned before it", v.plan.placed,
                            v.pods.size(), failed.name);
  } else if (!alone.empty()) {
    v.message = fmt::format("{} {}", failed.name, alone);
  }
  if (std::string never = in.options->kueue_reject_unplaceable ? PodSetThatNeverFits(w, v.pods, in) : ""; !never.empty()) {
    v.state = kueue::CheckState::kRejected;
    v.message = fmt::format("pod set {}: its pods fit no node even with every node empty; {}", never, v.message);
  }
  return v;
}

std::string GpuschedCheckOf(const kueue::Workload& w, const inventory::KueueState& kueue, std::string_view controller_name) {
  auto ours = [&](std::string_view name) {
    auto c = kueue.checks.find(name);
    return c != kueue.checks.end() && c->second.controller_name == controller_name;
  };
  if (auto q = kueue.queues.find(w.cluster_queue); q != kueue.queues.end()) {
    for (const kueue::QueueCheck& c : q->second.checks) {
      if (ours(c.name)) return c.name;
    }
  }
  for (const kueue::CheckStatus& c : w.checks) {
    if (ours(c.name)) return c.name;
  }
  return "";
}

std::string WorkloadExplanationJson(const WorkloadExplanation& e) {
  const kueue::Workload& w = e.workload;
  const WorkloadVerdict& v = e.verdict;
  json::Writer out;
  out.StartObject().Member("workload", w.namespace_name + "/" + w.name).Member("queue", w.queue_name);
  out.Member("clusterQueue", w.cluster_queue).Member("check", e.check).Member("checkState", e.check_state);
  out.Member("verdict", kueue::CheckStateName(v.state)).Member("message", v.message).Key("pods").StartArray();
  for (size_t i = 0; v.plan.fits && i < v.plan.slots.size(); ++i) {
    const placement::GangSlot& s = v.plan.slots[i];
    out.StartObject().Member("pod", v.pods[i].name).Member("podSet", v.pods[i].labels.at(std::string(kPodSetLabel)));
    out.Member("node", s.node).Member("gpus", GpusText(s.placement)).EndObject();
  }
  out.EndArray().Key("nodes").Uint(v.plan.fits ? v.plan.nodes : 0).EndObject();
  return out.TakeLine();
}

std::string WorkloadExplanationText(const WorkloadExplanation& e) {
  const kueue::Workload& w = e.workload;
  std::string out = fmt::format("Workload {}/{} (queue {}, ClusterQueue {}): {}\n", w.namespace_name, w.name, w.queue_name,
                                w.cluster_queue.empty() ? "none yet" : w.cluster_queue, kueue::CheckStateName(e.verdict.state));
  out += e.verdict.message + "\n";
  if (!e.check.empty()) out += fmt::format("check {} is {} in its status\n", e.check, e.check_state.empty() ? "not yet set" : e.check_state);
  for (size_t i = 0; e.verdict.plan.fits && i < e.verdict.plan.slots.size(); ++i) {
    const placement::GangSlot& s = e.verdict.plan.slots[i];
    out += fmt::format("  {:<40} {:<24} {}\n", e.verdict.pods[i].name, s.node, GpusText(s.placement));
  }
  return out;
}

}  // namespace gpusched::extender
