// File: explain.cc
//
// The explain verb: the pod judged on every node (without its own allocation and lower-priority
// holds), node fit and per-GPU reasons, the evictions that would make room in kube-scheduler's
// candidate order, and the answer as JSON (half on the helper) or text.
#include "gpusched/extender/explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <span>
#include <tuple>

#include "gpusched/json/writer.h"
#include "gpusched/model/units.h"
#include "gpusched/extender/cheapest_eviction.h"
#include "gpusched/extender/victim_chooser.h"
#include "gpusched/placement/node_fit.h"
#include "gpusched/placement/node_links.h"
#include "gpusched/placement/what_if.h"
#include "gpusched/placement/resource_fit.h"
#include "gpusched/placement/victims.h"

namespace gpusched::extender {
namespace {

using placement::NodeState;
using placement::NodeVerdict;
using placement::PodRequest;

std::string RequestJson(const Pod& pod, const PodRequest& r) {
  json::Writer w;
  const DeviceKind* kind = KindOf(r.kind);
  w.StartObject().Member("kind", kind != nullptr ? kind->short_name : "none");
  if (HasPayload(r.kind, Payload::kCount)) w.Member("wholeGpus", r.whole_gpus);
  if (HasPayload(r.kind, Payload::kShares)) {
    w.Key("containers").StartArray();
    for (const placement::MgpuContainerRequest& c : r.containers) {
      w.StartObject().Member("name", c.container).Member("corePercent", c.core_percent);
      w.Member("memoryMiB", c.memory_mib).Member("gpus", c.cards).EndObject();
    }
    w.EndArray();
  }
  if (r.claims_only()) {
    w.Key("claims").StartArray();
    for (const PodClaimRef& claim : pod.resource_claims) w.String(claim.name);
    w.EndArray();
  }
  w.EndObject();
  return w.Take();
}

// One mGPU slot judged for the pod's most demanding container.
GpuExplanation JudgeGpu(const placement::GpuSlot& s, const PodRequest& r) {
  int64_t milli = 0, mib = 0;
  bool whole = false;
  for (const placement::MgpuContainerRequest& c : r.containers) {
    milli = std::max(milli, c.milli_per_card);
    mib = std::max(mib, c.mib_per_card);
    whole = whole || c.whole_card;
  }
  GpuExplanation g{.index = s.index,
                   .free_core_percent = std::max<int64_t>(0, s.free_milli()) / 10,
                   .free_memory_mib = std::max<int64_t>(0, s.free_mib()),
                   .free_instances = std::max(0, kMaxInstancesPerGpu - s.instances)};
  using V = GpuExplanation::Verdict;
  g.instances = s.instances;
  if (s.mig) {
    g.verdict = V::kMig;
  } else if (!s.healthy) {
    g.verdict = V::kUnhealthy;
  } else if (s.exclusive) {
    g.verdict = V::kExclusive;
  } else if (whole && !s.idle()) {
    g.verdict = V::kNotIdle;
  } else if (s.instances >= kMaxInstancesPerGpu) {
    g.verdict = V::kFull;
  } else if (s.free_milli() < milli) {
    g.verdict = V::kCore;
    g.needs = milli / 10;
  } else if (s.free_mib() < mib) {
    g.verdict = V::kMemory;
    g.needs = mib;
  }
  return g;
}

std::string Summary(const Pod& pod, const std::vector<NodeExplanation>& nodes, const std::map<std::string, size_t>& refusals) {
  size_t fit = std::count_if(nodes.begin(), nodes.end(), [](const NodeExplanation& n) { return n.fits; });
  if (fit > 0) {
    const NodeExplanation& best = nodes.front();  // fitting nodes come first, by rank
    return fmt::format("{}/{} nodes fit; gpusched would place it on {} (score {:.4f})", fit, nodes.size(), best.node, *best.score);
  }
  std::vector<std::pair<size_t, std::string>> by_count;
  for (const auto& [reason, n] : refusals) by_count.emplace_back(n, reason);
  std::sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out = fmt::format("0/{} nodes fit:", nodes.size());
  for (size_t i = 0; i < by_count.size() && i < 4; ++i) out += fmt::format("{} {} {}", i ? "," : "", by_count[i].first, by_count[i].second);
  const NodeExplanation* cheapest = nullptr;
  for (const NodeExplanation& n : nodes) {
    if (n.would_fit_after && (cheapest == nullptr || Cheaper(*n.would_fit_after, n.node, *cheapest->would_fit_after, cheapest->node))) {
      cheapest = &n;
    }
  }
  if (pod.never_preempts) return out + "; its preemptionPolicy is Never: it evicts no pod";
  if (cheapest == nullptr) return out + "; no eviction of lower-priority pods makes room";
  size_t v = cheapest->would_fit_after->pods.size();
  return out + fmt::format("; evicting {} pod{} on {} makes room", v, v == 1 ? "" : "s", cheapest->node);
}

// Moves the nodes of `fits` where kube-scheduler's other filters refuse the pod (node_fit.h) to
// `refused`, with their status code: a shortage that evicting pods could end stays unschedulable
// (explain then asks which evictions make room); node selection makes any refusal unresolvable.
void JudgeNodesFit(const Pod& pod, const ResourceList& requests, const ResolvedNodes& nodes,
                   std::vector<placement::RankedNode>* fits, std::map<size_t, NodeVerdict>* refused) {
  std::erase_if(*fits, [&](const placement::RankedNode& f) {
    placement::NodeFitJudgement fit = placement::JudgeNodeFit(pod, requests, *nodes.nodes[f.pos]);
    if (fit.outcome == placement::Outcome::kFits) return false;
    refused->emplace(f.pos, NodeVerdict{.outcome = fit.outcome, .reject = placement::Reject::kNodeFit,
                                        .reason = "kube-scheduler would refuse it: " + fit.reason});
    return true;
  });
  for (auto& [pos, verdict] : *refused) {
    std::string why = placement::NodeSelectionProblem(pod.constraints, nodes.nodes[pos]->node);
    if (why.empty() || verdict.reject == placement::Reject::kNodeFit) continue;
    if (verdict.outcome == placement::Outcome::kUnschedulable) verdict.outcome = placement::Outcome::kUnresolvable;
    verdict.reason += "; and kube-scheduler would refuse it: " + why;
  }
}

// Fills what a node says beyond the verdict: mode, state, GPUs and the reasons.
NodeExplanation Describe(const NodeState& node, const PodRequest& request, const NodeVerdict* refused) {
  NodeExplanation n{.node = node.node.name, .fits = refused == nullptr, .mode = std::string(ModeName(node.mode)),
                    .state = std::string(placement::ConditionName(node.condition))};
  bool per_gpu = HasPayload(request.kind, Payload::kShares) && node.mode == ModeServing(request.kind) && node.ready();
  if (per_gpu) {
    for (const placement::GpuSlot& s : node.gpus) n.gpus.push_back(JudgeGpu(s, request));
  }
  if (refused == nullptr) return n;
  // Where GPUs decide (too little room), one reason per GPU says which; otherwise (mode, state,
  // compute policy, a placement no single GPU explains) the verdict's reason does.
  n.per_gpu_reasons = refused->reject == placement::Reject::kInsufficient &&
                      std::any_of(n.gpus.begin(), n.gpus.end(), [](const GpuExplanation& g) { return !g.fits(); });
  if (!n.per_gpu_reasons) n.reasons.push_back(refused->reason);
  return n;
}

}  // namespace

namespace {

// True if filter steers `pod`, which asks for no GPU, to the fullest domain in use: topology.steer
// is on, it is outside groups, and some node carries the lowest level's label.
bool SteersWithoutGpus(const Pod& pod, const EvaluationInputs& inputs) {
  const ServiceOptions& options = *inputs.options;
  if (pod.group || !options.topology_steer || options.topology_levels.empty()) return false;
  DomainFullness local(options);
  return !(inputs.domains != nullptr ? inputs.domains : &local)->Of(*inputs.snapshot, options.topology_levels.front())->domains.empty();
}

// A pod without GPUs that filter steers (SteersWithoutGpus): each node kept, or refused by
// kube-scheduler's other filters (node_fit.h) or by the domain steering (domain_steering.h).
Explanation ExplainWithoutGpus(const Pod& pod, const std::optional<Allocation>& placed, const EvaluationInputs& inputs) {
  const inventory::InventorySnapshot& snapshot = *inputs.snapshot;
  ResolvedNodes all;
  std::vector<placement::RankedNode> fits;
  for (size_t i = 0; i < snapshot.nodes().size(); ++i) {
    all.nodes.push_back(snapshot.nodes()[i].get());
    all.index.push_back(static_cast<uint32_t>(i));
    all.generations.push_back(snapshot.nodes().generation(i));
    fits.push_back(placement::RankedNode{i, 0});
  }
  std::map<size_t, NodeVerdict> refused;
  JudgeNodesFit(pod, EffectiveRequests(pod), all, &fits, &refused);
  std::string steered;
  RefuseOutsideFullestDomain(pod, SteeredPod::kWithoutGpus, *inputs.options, inputs.domains, snapshot, all, &fits,
                             [&](std::span<const size_t> positions, const std::string& reason) {
                               if (steered.empty()) steered = reason;
                               for (size_t pos : positions) refused.emplace(pos, NodeVerdict{.reason = reason});
                             });
  Explanation e{.pod = pod.namespace_name + "/" + pod.name, .request_json = "{}", .placed = placed};
  auto describe = [&](size_t pos, const NodeVerdict* verdict) {
    const NodeState& node = *all.nodes[pos];
    NodeExplanation n{.node = node.node.name, .fits = verdict == nullptr, .mode = std::string(ModeName(node.mode)),
                      .state = std::string(placement::ConditionName(node.condition))};
    if (verdict != nullptr) n.reasons.push_back(verdict->reason);
    e.nodes.push_back(std::move(n));
  };
  for (const placement::RankedNode& f : fits) describe(f.pos, nullptr);
  for (const auto& [pos, verdict] : refused) describe(pos, &verdict);
  e.summary = fmt::format("{}/{} nodes kept for a pod without GPUs; kube-scheduler chooses among them", fits.size(),
                          e.nodes.size());
  if (!steered.empty()) e.summary += "; " + steered;
  return e;
}

}  // namespace

StatusOr<Explanation> Explain(const Pod& pod, const std::optional<Allocation>& placed, const EvaluationInputs& inputs) {
  PodRequest request = placement::AnalyzePod(pod);
  if (!request.asks_gpu() && SteersWithoutGpus(pod, inputs)) return ExplainWithoutGpus(pod, placed, inputs);
  if (!request.asks_gpu()) {
    return InvalidArgumentError(fmt::format("pod {}/{} asks for no GPU: every node takes it as far as gpusched is concerned",
                                            pod.namespace_name, pod.name));
  }
  if (!request.schedulable()) return InvalidArgumentError(request.RefusalReason());
  std::unique_ptr<PodEvaluation> evaluation = MakeEvaluation(pod, request, inputs);
  if (Status problem = evaluation->Problem(); !problem.ok()) return InvalidArgumentError(problem.message());
  const inventory::InventorySnapshot& snapshot = *inputs.snapshot;
  ResolvedNodes resolved;
  std::vector<std::optional<NodeState>> own(snapshot.nodes().size());
  for (size_t i = 0; i < snapshot.nodes().size(); ++i) {
    const NodeState* node = snapshot.nodes()[i].get();
    // The node as the pod sees it: without its own allocation (a placed pod), its own hold and
    // the holds that do not bind it (what_if.h).
    placement::WhatIf view(*node);
    if (view.SeenBy(placement::Viewer::Of(pod)).Without(pod.uid).changed()) own[i] = std::move(view).Take();
    resolved.nodes.push_back(own[i] ? &*own[i] : node);
    resolved.index.push_back(static_cast<uint32_t>(i));
    resolved.generations.push_back(own[i] ? 0 : snapshot.nodes().generation(i));
  }
  std::map<size_t, NodeVerdict> refused;
  GPUSCHED_ASSIGN_OR_RETURN(std::vector<placement::RankedNode> fits,
                            evaluation->Evaluate(resolved, /*rank=*/true, [&](size_t pos, NodeVerdict&& v) { refused.emplace(pos, std::move(v)); }));
  const ResourceList requests = EffectiveRequests(pod);  // besides GPUs
  JudgeNodesFit(pod, requests, resolved, &fits, &refused);
  RefuseAmongFitting(pod, request, *evaluation, *inputs.options, inputs.domains, snapshot, resolved, &fits,
                     [&](std::span<const size_t> positions, const std::string& reason) {
                       for (size_t pos : positions) {
                         refused.emplace(pos, NodeVerdict{.outcome = placement::Outcome::kUnschedulable,
                                                          .reject = placement::Reject::kInsufficient, .reason = reason});
                       }
                     });
  std::stable_sort(fits.begin(), fits.end(), [](const auto& a, const auto& b) { return a.score > b.score; });
  Explanation e{.pod = pod.namespace_name + "/" + pod.name, .request_json = RequestJson(pod, request), .placed = placed};
  // The fitting nodes by rank, then the others in node order; each described apart (its GPUs one
  // by one, the evictions that would make room), on this thread and the helper's.
  std::vector<std::pair<size_t, const NodeVerdict*>> order;  // position, verdict (null: fits)
  for (const placement::RankedNode& f : fits) order.emplace_back(f.pos, nullptr);
  std::map<std::string, size_t> refusals;
  for (const auto& [pos, verdict] : refused) {
    order.emplace_back(pos, &verdict);
    ++refusals[std::string(placement::RejectName(verdict.reject))];
  }
  e.nodes.resize(order.size());
  ShareItems(inputs.helper, order.size(), 64, [&](auto& take) {
    VictimChooser chooser(pod, request, inputs);  // one per thread: it keeps buffers
    for (size_t begin = 0, end = 0; take(&begin, &end);) {
      for (size_t k = begin; k < end; ++k) {
        const auto& [pos, verdict] = order[k];
        NodeExplanation& n = e.nodes[k] = Describe(*resolved.nodes[pos], request, verdict);
        if (verdict == nullptr) {
          n.score = fits[k].score;
          n.rank = static_cast<int>(k) + 1;
          n.links = placement::LinksNote(*resolved.nodes[pos], request, inputs.options->placement);
          if (n.links.empty()) n.links = evaluation->LinksNote(pos);
        } else if (pod.never_preempts) {
          // kube-scheduler evicts nothing for it: no eviction to offer
        } else if (verdict->resolvable() && verdict->reject == placement::Reject::kNodeFit) {
          n.would_fit_after = ResourceEvictionsOn(pod, requests, *resolved.nodes[pos], snapshot.budgets());
        } else if (verdict->resolvable()) {
          n.would_fit_after = EvictionsOn(pod, *resolved.nodes[pos], snapshot.budgets(), chooser);
        }
      }
    }
  });
  e.summary = Summary(pod, e.nodes, refusals);
  if (std::string unjudged = placement::UnjudgedRelations(pod.constraints); !unjudged.empty()) {
    e.summary += fmt::format("; not judged by gpusched, left to kube-scheduler: {}", unjudged);
  }
  return e;
}

namespace {

// The answer is large (about 1 KB a node with its GPUs): numbers and verdicts are spelled into
// one scratch string reused across GPUs, never a string per GPU.
void Int(std::string* out, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, end);
}

void AppendVerdict(std::string* out, const GpuExplanation& g) {
  using V = GpuExplanation::Verdict;
  switch (g.verdict) {
    case V::kFits:
      out->append("fits");
      return;
    case V::kUnhealthy:
      out->append("unhealthy");
      return;
    case V::kMig:
      out->append("MIG enabled: its slices are not whole GPUs or mGPU shares");
      return;
    case V::kExclusive:
      out->append("held whole by one container");
      return;
    case V::kNotIdle:
      out->append("a whole card needs an idle GPU; ");
      Int(out, g.instances);
      out->append(g.instances == 1 ? " container here" : " containers here");
      return;
    case V::kFull:
      Int(out, g.instances);
      out->append(" containers already");
      return;
    case V::kCore:
      Int(out, g.free_core_percent);
      out->append("% core free, needs ");
      Int(out, g.needs);
      out->push_back('%');
      return;
    case V::kMemory:
      Int(out, g.free_memory_mib);
      out->append(" MiB free, needs ");
      Int(out, g.needs);
      out->append(" MiB");
      return;
  }
}

void WriteEvictions(json::Writer& w, const NodeExplanation& n) {
  if (!n.would_fit_after) {
    w.Null();
    return;
  }
  w.StartObject().Key("evict").StartArray();
  int32_t highest = INT32_MIN;
  for (const Eviction& v : n.would_fit_after->pods) {
    highest = std::max(highest, v.priority);
    w.StartObject().Member("pod", v.pod).Member("uid", v.uid).Member("priority", v.priority).EndObject();
  }
  w.EndArray().Key("cost").StartObject();
  w.Member("victims", static_cast<int64_t>(n.would_fit_after->pods.size())).Member("maxPriority", highest);
  w.Member("pdbViolations", n.would_fit_after->pdb_violations).EndObject().EndObject();
}

// `scratch`: reused for the per-GPU texts.
void WriteNode(json::Writer& w, const NodeExplanation& n, std::string& scratch) {
  w.StartObject().Member("node", n.node).Member("fits", n.fits).Member("mode", n.mode).Member("state", n.state);
  w.Key("reasons").StartArray();
  for (const std::string& r : n.reasons) w.String(r);
  for (size_t k = 0; n.per_gpu_reasons && k < n.gpus.size(); ++k) {
    if (n.gpus[k].fits()) continue;
    scratch.assign("GPU ");
    Int(&scratch, n.gpus[k].index);
    scratch.append(": ");
    AppendVerdict(&scratch, n.gpus[k]);
    w.String(scratch);
  }
  w.EndArray().Key("gpus").StartArray();
  for (const GpuExplanation& g : n.gpus) {
    scratch.clear();
    AppendVerdict(&scratch, g);
    w.StartObject().Member("index", g.index).Member("freeCorePercent", g.free_core_percent);
    w.Member("freeMemoryMiB", g.free_memory_mib).Member("freeInstances", g.free_instances);
    w.Member("verdict", scratch).EndObject();
  }
  w.EndArray().Key("score");
  if (n.score) {
    w.Fixed(*n.score, 6).Member("rank", *n.rank);
  } else {
    w.Null().Key("rank").Null();
  }
  w.Key("wouldFitAfter");
  WriteEvictions(w, n);
  if (!n.links.empty()) w.Member("links", n.links);
  w.EndObject();
}

// The nodes [begin, end) of `e`, as an array.
std::string NodeArray(const Explanation& e, size_t begin, size_t end, size_t per_node) {
  json::Writer w(2 + (end - begin) * per_node);
  std::string scratch;
  w.StartArray();
  for (size_t i = begin; i < end; ++i) WriteNode(w, e.nodes[i], scratch);
  w.EndArray();
  return w.Take();
}

void WritePlaced(json::Writer& w, const std::optional<Allocation>& placed) {
  if (!placed) {
    w.Null();
    return;
  }
  w.StartObject().Member("node", placed->node_name).Member("wholeGpus", placed->placement.whole_gpus);
  w.Key("gpus").StartArray();
  for (const ContainerAssignment& c : placed->placement.containers) {
    for (int i : c.gpu_indices) w.Int(i);
  }
  w.EndArray().EndObject();
}

}  // namespace

std::string ExplanationJson(const Explanation& e, HelperThread* helper) {
  size_t per_node = e.nodes.empty() || e.nodes[0].gpus.empty() ? 256 : 1280;
  // The second half of the nodes is written on the helper meanwhile (about 1 KB a node).
  size_t half = e.nodes.size() / 2;
  std::string second;
  bool written = false;
  std::function<void()> write_second = [&] {
    second = NodeArray(e, e.nodes.size() - half, e.nodes.size(), per_node);
    written = true;
  };
  bool shared = helper != nullptr && half >= 256 && helper->Start(write_second);
  if (!shared) half = 0;
  json::Writer w(512 + e.nodes.size() * per_node);
  w.StartObject().Member("pod", e.pod).Key("request").Raw(e.request_json).Key("placed");
  WritePlaced(w, e.placed);
  w.Key("nodes").StartArray();
  std::string scratch;
  for (size_t i = 0; i < e.nodes.size() - half; ++i) WriteNode(w, e.nodes[i], scratch);
  if (shared) {
    helper->Wait();
    if (!written) write_second();  // taken back before the helper started it
    w.RawElements(std::string_view(second).substr(1, second.size() - 2));  // without its brackets
  }
  w.EndArray().Member("summary", e.summary).EndObject();
  return w.TakeLine();
}

std::string GpuExplanation::VerdictText() const {
  std::string out;
  AppendVerdict(&out, *this);
  return out;
}

std::vector<std::string> Reasons(const NodeExplanation& n) {
  std::vector<std::string> out = n.reasons;
  for (size_t k = 0; n.per_gpu_reasons && k < n.gpus.size(); ++k) {
    if (!n.gpus[k].fits()) out.push_back("GPU " + std::to_string(n.gpus[k].index) + ": " + n.gpus[k].VerdictText());
  }
  return out;
}

std::string ExplanationText(const Explanation& e) {
  std::string out = fmt::format("pod {}\nrequest {}\n", e.pod, e.request_json);
  if (e.placed) out += fmt::format("placed on {}\n", e.placed->node_name);
  out += e.summary + "\n\n";
  out += fmt::format("{:<24} {:<4} {:<10} {:<12} {:>4} {:>9}  {}\n", "NODE", "FITS", "MODE", "STATE", "RANK", "SCORE", "WHY NOT / EVICT TO FIT");
  for (const NodeExplanation& n : e.nodes) {
    std::string why = fmt::format("{}", fmt::join(Reasons(n), "; "));
    if (n.would_fit_after) {
      std::vector<std::string> pods;
      for (const Eviction& v : n.would_fit_after->pods) pods.push_back(fmt::format("{} (priority {})", v.pod, v.priority));
      why += fmt::format(" | evict {}", fmt::join(pods, ", "));
    }
    if (!n.links.empty()) why += (why.empty() ? "" : "; ") + n.links;
    out += fmt::format("{:<24} {:<4} {:<10} {:<12} {:>4} {:>9}  {}\n", n.node, n.fits ? "yes" : "no", n.mode, n.state,
                       n.rank ? std::to_string(*n.rank) : "-", n.score ? fmt::format("{:.4f}", *n.score) : "-", why);
  }
  return out;
}

}  // namespace gpusched::extender
