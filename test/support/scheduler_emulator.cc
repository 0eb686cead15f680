// File: scheduler_emulator.cc
//
// kube-scheduler's cycles as an extender sees them: node totals, filter, prioritize when more
// than one node is left, bind; a gang's members assumed until enough fit.
#include "scheduler_emulator.h"

#include <rapidjson/document.h>

#include "cluster_json.h"

namespace gpusched::testing {
namespace {

// A container's GPU resource as the API server defaults it: the request, else the limit.
int64_t Asked(const std::optional<int64_t>& request, const std::optional<int64_t>& limit) {
  return request.value_or(limit.value_or(0));
}

// The best-scored host of a HostPriorityList (the first of equals), or "".
std::string BestHost(const std::string& reply) {
  rapidjson::Document d;
  d.Parse(reply.data(), reply.size());
  std::string best;
  int64_t best_score = -1;
  if (d.HasParseError() || !d.IsArray()) return best;
  for (const auto& v : d.GetArray()) {
    if (v["Score"].GetInt64() > best_score) {
      best_score = v["Score"].GetInt64();
      best = v["Host"].GetString();
    }
  }
  return best;
}

}  // namespace

EmulatedPod Emulated(const std::string& pod_json) { return EmulatedPod{.pod = DecodedPod(pod_json), .json = pod_json}; }

SchedulerEmulator::SchedulerEmulator(ExtenderCall call, const ClusterObjects& cluster) : call_(std::move(call)) {
  for (const Node& n : cluster.nodes) {
    names_.push_back(n.name);
    allocatable_[n.name] = Totals{.gpus = n.allocatable.nvidia_gpus, .core = n.allocatable.mgpu_core_percent,
                                  .memory = n.allocatable.mgpu_memory_mib};
  }
  for (const Pod& p : cluster.pods) {
    if (p.bound() && !p.terminal() && allocatable_.contains(p.node_name)) Add(p, p.node_name, +1);
  }
}

SchedulerEmulator::Totals SchedulerEmulator::Asks(const Pod& pod) {
  Totals t;
  for (const Container& c : pod.containers) {
    t.gpus += Asked(c.requests.nvidia_gpus, c.limits.nvidia_gpus);
    t.core += Asked(c.requests.mgpu_core_percent, c.limits.mgpu_core_percent);
    t.memory += Asked(c.requests.mgpu_memory_mib, c.limits.mgpu_memory_mib);
  }
  return t;
}

void SchedulerEmulator::Add(const Pod& pod, const std::string& node, int sign) {
  Totals asks = Asks(pod);
  Totals& t = used_[node];
  t.gpus += sign * asks.gpus;
  t.core += sign * asks.core;
  t.memory += sign * asks.memory;
}

bool SchedulerEmulator::FitsTotals(const Pod& pod, const std::string& node) const {
  Totals want = Asks(pod);
  const Totals& cap = allocatable_.at(node);
  auto it = used_.find(node);
  Totals used = it == used_.end() ? Totals{} : it->second;
  // NodeResourcesFit checks only the resources the pod asks for.
  return (want.gpus == 0 || used.gpus + want.gpus <= cap.gpus) && (want.core == 0 || used.core + want.core <= cap.core) &&
         (want.memory == 0 || used.memory + want.memory <= cap.memory);
}

std::optional<std::string> SchedulerEmulator::Place(const EmulatedPod& pod) {
  std::vector<std::string> fitting;
  for (const std::string& n : names_) {
    if (FitsTotals(pod.pod, n)) fitting.push_back(n);
  }
  if (fitting.empty()) return std::nullopt;
  std::vector<std::string> kept = KeptNodes(call_("filter", ArgsWithNames(pod.json, fitting)));
  if (kept.empty()) return std::nullopt;
  if (kept.size() == 1) return kept[0];  // kube-scheduler does not prioritize a single feasible node
  std::string best = BestHost(call_("prioritize", ArgsWithNames(pod.json, kept)));
  return best.empty() ? kept[0] : best;
}

bool SchedulerEmulator::Bind(const EmulatedPod& pod, const std::string& node) {
  std::string reply = call_("bind", BindJson(pod.pod.name, pod.pod.namespace_name, pod.pod.uid, node));
  if (reply.find(R"("Error":"")") == std::string::npos) {
    ++failed_binds_;
    return false;
  }
  Add(pod.pod, node, +1);
  bound_[pod.pod.uid] = node;
  return true;
}

bool SchedulerEmulator::Schedule(const EmulatedPod& pod) {
  std::optional<std::string> node = Place(pod);
  return node && Bind(pod, *node);
}

GangOutcome SchedulerEmulator::ScheduleGang(const std::vector<EmulatedPod>& members, size_t min_count, GangFlow flow) {
  GangOutcome out{.members = members.size(), .min_count = min_count};
  std::vector<std::pair<const EmulatedPod*, std::string>> assumed;
  for (const EmulatedPod& m : members) {
    std::optional<std::string> node = Place(m);
    if (!node) {
      if (flow == GangFlow::kCoscheduling) break;  // PostFilter rejects the waiting members
      continue;                                    // the pod-group cycle tries every member
    }
    Add(m.pod, *node, +1);
    assumed.emplace_back(&m, *node);
  }
  for (const auto& [pod, node] : assumed) Add(pod->pod, node, -1);  // forgotten, or bound below
  if (assumed.size() < min_count) return out;
  size_t failed_before = failed_binds_;
  for (const auto& [pod, node] : assumed) out.bound += Bind(*pod, node) ? 1 : 0;
  out.failed_binds = failed_binds_ - failed_before;
  return out;
}

void SchedulerEmulator::Deleted(const EmulatedPod& pod) {
  auto it = bound_.find(pod.pod.uid);
  if (it == bound_.end()) return;
  Add(pod.pod, it->second, -1);
  bound_.erase(it);
}

}  // namespace gpusched::testing
