// File: inventory_json.cc
//
// The /debug/inventory document: the stats, per node its mode, state, capacity, GPUs with the
// agent's findings, allocations and switch blockers; and DRA per node: devices, taints, holders,
// pods a NoExecute taint will evict, and recent decisions.
#include "gpusched/extender/inventory_json.h"

#include <fmt/format.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "gpusched/dra/node_selection.h"
#include "gpusched/extender/domain_steering.h"
#include "gpusched/kubejson/dra_allocation_json.h"
#include "gpusched/kubejson/dra_objects.h"
#include "gpusched/kubejson/objects.h"
#include "gpusched/placement/node_links.h"
#include "gpusched/model/units.h"
#include "gpusched/placement/node_state.h"

namespace gpusched::extender {
namespace {

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;
using placement::NodeState;

void Key(Writer& w, std::string_view k) { w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size())); }
void Str(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

std::string_view OriginName(AllocationOrigin o) {
  switch (o) {
    case AllocationOrigin::kObserved:
      return "observed";
    case AllocationOrigin::kCommitted:
      return "committed";
    case AllocationOrigin::kBooked:
      return "booked";
    case AllocationOrigin::kHeld:
      return "held";
    case AllocationOrigin::kNominated:
      return "nominated";
  }
  return "observed";
}

void WriteAllocation(Writer& w, const Allocation& a) {
  w.StartObject();
  Key(w, "pod");
  Str(w, a.pod_namespace + "/" + a.pod_name);
  Key(w, "uid");
  Str(w, a.pod_uid);
  Key(w, "mode");
  Str(w, ModeName(a.mode));
  Key(w, "origin");
  Str(w, OriginName(a.origin));
  Key(w, "priority");  // what preemption weighs
  w.Int(a.priority);
  Key(w, "terminating");
  w.Bool(a.terminating);
  if (!a.problem.empty()) {
    Key(w, "problem");
    Str(w, a.problem);
  }
  if (!a.warning.empty()) {
    Key(w, "warning");
    Str(w, a.warning);
  }
  if (HasPayload(a.placement.kind, Payload::kCount)) {
    Key(w, "wholeGpus");
    w.Int64(a.placement.whole_gpus);
  }
  if (HasPayload(a.placement.kind, Payload::kDevices)) {
    Key(w, "devices");
    w.StartArray();
    for (const std::string& d : a.placement.devices) Str(w, d);
    w.EndArray();
  }
  if (HasPayload(a.placement.kind, Payload::kShares)) {
    Key(w, "containers");
    w.StartArray();
    for (const ContainerAssignment& c : a.placement.containers) {
      w.StartObject();
      Key(w, "name");
      Str(w, c.container);
      Key(w, "gpus");
      w.StartArray();
      for (int i : c.gpu_indices) w.Int(i);
      w.EndArray();
      Key(w, "corePercentPerGpu");
      w.Int64(CorePercentFromMilli(c.milli_per_gpu));
      Key(w, "memoryMiBPerGpu");
      w.Int64(c.mib_per_gpu);
      Key(w, "wholeCard");
      w.Bool(c.exclusive);
      Key(w, "runs");
      Str(w, c.init_position == 0 ? "app" : c.sidecar ? "sidecar" : "init");
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

// The node's published resources and its whole-GPU and mGPU totals.
void WriteCapacity(Writer& w, const NodeState& n) {
  Key(w, "allocatable");
  w.StartObject();
  Key(w, "nvidia.com/gpu");
  w.Int64(n.node.allocatable.nvidia_gpus);
  Key(w, "vke.volcengine.com/mgpu-core");
  w.Int64(n.node.allocatable.mgpu_core_percent);
  Key(w, "vke.volcengine.com/mgpu-memory");
  w.Int64(n.node.allocatable.mgpu_memory_mib);
  w.EndObject();
  Key(w, "gpuDescription");
  Str(w, n.node.published_gpus ? "annotation" : "allocatable");
  Key(w, "wholeGpus");
  w.StartObject();
  Key(w, "total");
  w.Int64(n.whole_total);
  Key(w, "used");
  w.Int64(n.whole_used);
  w.EndObject();
  Key(w, "mgpu");
  w.StartObject();
  Key(w, "capacityCorePercent");
  w.Int64(CorePercentFromMilli(n.capacity_milli));
  Key(w, "usedCorePercent");
  w.Int64(CorePercentFromMilli(n.used_milli));
  Key(w, "capacityMemoryMiB");
  w.Int64(n.capacity_mib);
  Key(w, "usedMemoryMiB");
  w.Int64(n.used_mib);
  w.EndObject();
}

void WriteIndices(Writer& w, std::string_view key, const std::vector<int>& list) {
  Key(w, key);
  w.StartArray();
  for (int i : list) w.Int(i);
  w.EndArray();
}

// What the node agent published beyond the basics: MIG, peers, pods (PodResources), drift.
void WriteAgentFindings(Writer& w, const GpuDevice& d) {
  Key(w, "migEnabled");
  w.Bool(d.mig_enabled);
  Key(w, "migSlices");
  w.Int(d.mig_slices);
  Key(w, "migInstances");
  w.StartArray();
  for (const MigInstance& m : d.mig_instances) {
    w.StartObject();
    Key(w, "profile");
    Str(w, m.profile);
    Key(w, "start");
    w.Int(m.start);
    Key(w, "size");
    w.Int(m.size);
    Key(w, "memoryMiB");
    w.Int64(m.memory_mib);
    w.EndObject();
  }
  w.EndArray();
  WriteIndices(w, "nvlinkPeers", d.nvlink_peers);
  WriteIndices(w, "pcieSwitchPeers", d.pcie_peers);
  if (d.pods) {
    Key(w, "pods");  // the agent's PodResources reading: absent when not read
    w.StartArray();
    for (const std::string& pod : *d.pods) Str(w, pod);
    w.EndArray();
  }
  Key(w, "drift");
  Str(w, kubejson::GpuDriftName(d.drift));
}

void WriteGpu(Writer& w, const placement::GpuSlot& g, const GpuDevice& d) {
  w.StartObject();
  Key(w, "index");
  w.Int(g.index);
  Key(w, "uuid");
  Str(w, d.uuid);
  Key(w, "model");
  Str(w, d.model);
  Key(w, "memoryMiB");
  w.Int64(g.memory_mib);
  Key(w, "numa");
  w.Int(g.numa_node);
  Key(w, "healthy");
  w.Bool(d.healthy);
  WriteAgentFindings(w, d);
  Key(w, "usedCorePercent");
  w.Int64(CorePercentFromMilli(g.used_milli));
  Key(w, "usedMemoryMiB");
  w.Int64(g.used_mib);
  Key(w, "instances");
  w.Int(g.instances);
  Key(w, "wholeCard");
  w.Bool(g.exclusive);
  w.EndObject();
}

// Where the node's GPUs form NVLink islands: "nvlink": {"islands": [[0,1],[2,3]],
// "largestFreeConnected": [2,3] ([] when which GPUs are free is unknown or none is)}.
void WriteNvlink(Writer& w, const NodeState& n) {
  std::vector<std::vector<int>> islands = placement::Islands(n);
  if (islands.empty()) return;
  Key(w, "nvlink");
  w.StartObject();
  Key(w, "islands");
  w.StartArray();
  for (const std::vector<int>& island : islands) {
    w.StartArray();
    for (int i : island) w.Int(i);
    w.EndArray();
  }
  w.EndArray();
  WriteIndices(w, "largestFreeConnected", placement::LargestFreeConnected(n));
  w.EndObject();
}

void WriteBlockers(Writer& w, const std::vector<placement::Blocker>& blockers) {
  Key(w, "blockers");
  w.StartArray();
  for (const placement::Blocker& b : blockers) {
    w.StartObject();
    Key(w, "pod");
    Str(w, b.pod_key);
    Key(w, "uid");
    Str(w, b.pod_uid);
    Key(w, "mode");
    Str(w, ModeName(b.mode));
    w.EndObject();
  }
  w.EndArray();
}

void WriteNode(Writer& w, const NodeState& n, const std::string& domain_key) {
  w.StartObject();
  Key(w, "name");
  Str(w, n.node.name);
  Key(w, "label");
  if (n.node.mode_label) {
    Str(w, *n.node.mode_label);
  } else {
    w.Null();
  }
  Key(w, "mode");
  Str(w, ModeName(n.mode));
  Key(w, "state");
  Str(w, placement::ConditionName(n.condition));
  Key(w, "reason");
  Str(w, n.condition_reason);
  if (HasPayload(n.mode, Payload::kShares)) {
    Key(w, "computePolicy");
    Str(w, n.compute_policy);
  }
  WriteCapacity(w, n);
  Key(w, "gpus");
  w.StartArray();
  for (size_t i = 0; i < n.gpus.size(); ++i) WriteGpu(w, n.gpus[i], n.devices[i]);
  w.EndArray();
  WriteNvlink(w, n);
  if (auto label = n.node.labels.find(domain_key); !domain_key.empty() && label != n.node.labels.end()) {
    Key(w, "domain");  // its value of the first topology level's label
    Str(w, label->second);
  }
  Key(w, "allocations");
  w.StartArray();
  for (const Allocation& a : n.allocations) WriteAllocation(w, a);
  w.EndArray();
  // GPUs held, counted as used: for pods nominated here (origin "nominated"), and by gpusched
  // for pending pods and controllers' next pods (defrag, gang slots: origin "held").
  Key(w, "holds");
  w.StartArray();
  for (const Allocation& h : n.holds) WriteAllocation(w, h);
  w.EndArray();
  WriteBlockers(w, n.blockers);
  w.EndObject();
}

void WriteResults(Writer& w, const std::vector<dra::AllocationResult>& results) {
  w.StartArray();
  for (const dra::AllocationResult& r : results) {
    std::string json;
    kubejson::AppendAllocationResult(&json, r);
    w.RawValue(json.data(), json.size(), rapidjson::kObjectType);
  }
  w.EndArray();
}

// The pods that run on `device` although a NoExecute taint on it (the driver's, or a
// DeviceTaintRule's) is not tolerated by their claim's allocation: Kubernetes' device taint
// eviction controller evicts them; until then they block the device. "namespace/pod" with the
// taint, as "key=value:effect".
std::vector<std::pair<std::string, std::string>> NoExecuteBlockers(const dra::ClusterState& dra, const dra::DeviceId& id,
                                                                   const dra::Device& device) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const dra::DeviceTaint& taint : device.taints) {
    if (taint.effect != "NoExecute") continue;
    for (const dra::ResourceClaim* claim : dra.HoldersOf(id)) {
      bool tolerated = false;
      for (const dra::DeviceResult& r : claim->allocation->results) {
        if (r.id != id) continue;
        tolerated = std::any_of(r.tolerations.begin(), r.tolerations.end(), [&](const dra::DeviceToleration& t) { return dra::ToleratesTaint(t, taint); });
      }
      if (tolerated) continue;
      for (const dra::ConsumerRef& ref : claim->reserved_for) {
        out.emplace_back(fmt::format("{}/{}", claim->namespace_name, ref.name), fmt::format("{}={}:{}", taint.key, taint.value, taint.effect));
      }
    }
  }
  return out;
}

// A partitionable device's place on its GPU: the counter set it draws from (the physical GPU), the
// memory slices it takes (counters "memory-slice-N", the NVIDIA DRA driver's names) and its MIG
// profile; "" and [] for a device that draws on no counters.
void WritePartition(Writer& w, const dra::Device& d) {
  Key(w, "counterSet");
  Str(w, d.consumes_counters.empty() ? "" : d.consumes_counters.front().counter_set);
  Key(w, "memorySlices");
  w.StartArray();
  constexpr std::string_view kSlice = "memory-slice-";
  for (const dra::CounterConsumption& c : d.consumes_counters) {
    for (const auto& [name, milli] : c.counters_milli) {
      if (milli > 0 && name.starts_with(kSlice)) w.Int(std::atoi(name.c_str() + kSlice.size()));
    }
  }
  w.EndArray();
  auto profile = d.attributes.find("profile");
  Key(w, "profile");
  Str(w, profile == d.attributes.end() ? "" : profile->second.text);
}

// DRA: per node its devices (node-local slices) with their taints, who holds them and the pods a
// NoExecute taint will evict; decoding errors; the last decisions with the upstream-compatible
// and the ranked device choice.
void WriteDra(Writer& w, const dra::ClusterState& dra, std::string_view node, const std::vector<DraDecisionView>& decisions) {
  Key(w, "dra");
  w.StartObject();
  Key(w, "errors");
  w.StartArray();
  for (const std::string& e : dra.errors()) Str(w, e);
  w.EndArray();
  Key(w, "nodes");
  w.StartObject();
  std::map<std::string_view, std::vector<const dra::IndexedSlice*>> by_node;
  for (const auto& s : dra.slices().all()) {
    if (!s->slice().node_name.empty() && (node.empty() || s->slice().node_name == node)) by_node[s->slice().node_name].push_back(s.get());
  }
  for (const auto& [name, slices] : by_node) {
    Key(w, name);
    w.StartArray();
    for (const dra::IndexedSlice* s : slices) {
      for (const dra::Device& d : s->slice().devices) {
        dra::DeviceId id{s->slice().driver, s->slice().pool, d.name};
        w.StartObject();
        Key(w, "device");
        Str(w, dra::DeviceName(id));
        Key(w, "heldBy");
        Str(w, dra.Holder(id));
        WritePartition(w, d);
        Key(w, "taints");
        w.StartArray();
        for (const dra::DeviceTaint& t : d.taints) Str(w, fmt::format("{}={}:{}", t.key, t.value, t.effect));
        w.EndArray();
        Key(w, "blockers");
        w.StartArray();
        for (const auto& [pod, taint] : NoExecuteBlockers(dra, id, d)) {
          w.StartObject();
          Key(w, "pod");
          Str(w, pod);
          Key(w, "taint");
          Str(w, taint);
          w.EndObject();
        }
        w.EndArray();
        w.EndObject();
      }
    }
    w.EndArray();
  }
  w.EndObject();
  Key(w, "decisions");
  w.StartArray();
  for (const DraDecisionView& d : decisions) {
    if (!node.empty() && d.node != node) continue;
    w.StartObject();
    Key(w, "pod");
    Str(w, d.pod);
    Key(w, "node");
    Str(w, d.node);
    Key(w, "score");
    w.Double(d.verdict->score);
    Key(w, "topologyAligned");
    w.Bool(d.verdict->topology_aligned);
    Key(w, "upstreamChoice");
    WriteResults(w, d.verdict->compat);
    Key(w, "rankedChoice");
    WriteResults(w, d.verdict->ranked);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

// The pod groups the cluster declares, as their objects say.
void WriteGroups(Writer& w, const inventory::GroupTable::Groups& groups) {
  Key(w, "podGroups");
  w.StartArray();
  for (const auto& [key, g] : groups) {
    w.StartObject();
    Key(w, "api");
    Str(w, GroupApiName(g.api));
    Key(w, "namespace");
    Str(w, g.namespace_name);
    Key(w, "name");
    Str(w, g.name);
    Key(w, "minCount");
    w.Int(g.min_count);
    if (!g.topology_key.empty()) {
      Key(w, "topologyKey");
      Str(w, g.topology_key);
    }
    w.EndObject();
  }
  w.EndArray();
}

// The nodes grouped by the domains of label `key`, as "domains": the key; "items", one per domain
// with its nodes, idleNodes (whole: IsWholeNode), freeGpus and strandedGpus (free, on nodes that
// are not whole, a CPU-only job's too: no gang member of whole nodes can use them) and
// otherSchedulerNodes (nodes running a pod of another scheduler: RunsOtherSchedulersPod); and
// "largestGang", the domain with the most idle nodes; "gangGpus", what the cluster's gangs ask
// (GangDemands: steering's target); "keptFor", the domain kept for a waiting gang and the gang,
// when `index` has one, with "drains" (gangs may wait topology.drainWaitSeconds for it). The
// index is of label `key` on `snapshot`.
void WriteDomains(Writer& w, const inventory::InventorySnapshot& snapshot, const std::string& key, const DomainIndex& index) {
  struct Sums {
    int nodes = 0, idle_nodes = 0;
    int64_t free_milli = 0, stranded_milli = 0;
  };
  std::map<std::string, Sums> domains;
  for (const inventory::NodeStatePtr& n : snapshot.nodes()) {
    auto label = n->node.labels.find(key);
    if (label == n->node.labels.end()) continue;
    Sums& d = domains[label->second];
    int64_t idle = n->view.IdleMilli();
    bool whole = IsWholeNode(*n);
    ++d.nodes;
    d.idle_nodes += whole ? 1 : 0;
    d.free_milli += idle;
    d.stranded_milli += whole ? 0 : idle;
  }
  if (domains.empty()) return;
  Key(w, "domains");
  w.StartObject();
  Key(w, "key");
  Str(w, key);
  Key(w, "items");
  w.StartArray();
  const std::pair<const std::string, Sums>* largest = nullptr;
  for (const auto& entry : domains) {
    const auto& [value, d] = entry;
    if (largest == nullptr || d.idle_nodes > largest->second.idle_nodes) largest = &entry;
    w.StartObject();
    Key(w, "domain");
    Str(w, value);
    Key(w, "nodes");
    w.Int(d.nodes);
    Key(w, "idleNodes");
    w.Int(d.idle_nodes);
    Key(w, "freeGpus");
    w.Double(static_cast<double>(d.free_milli) / 1000);
    Key(w, "strandedGpus");
    w.Double(static_cast<double>(d.stranded_milli) / 1000);
    auto use = index.domains.find(value);
    Key(w, "otherSchedulerNodes");
    w.Int(use != index.domains.end() ? use->second.other_scheduler_nodes : 0);
    w.EndObject();
  }
  w.EndArray();
  Key(w, "largestGang");
  w.StartObject();
  Key(w, "domain");
  Str(w, largest->first);
  Key(w, "idleNodes");
  w.Int(largest->second.idle_nodes);
  w.EndObject();
  Key(w, "gangGpus");
  w.StartArray();
  for (int64_t milli : index.gang_demands) w.Double(static_cast<double>(milli) / 1000);
  w.EndArray();
  if (const std::optional<DomainReservation>& kept = index.reserved) {
    Key(w, "keptFor");
    w.StartObject();
    Key(w, "domain");
    Str(w, kept->domain);
    Key(w, "gang");
    Str(w, kept->gang);
    Key(w, "priority");
    w.Int(kept->priority);
    Key(w, "gpus");
    w.Double(static_cast<double>(kept->needs_milli) / 1000);
    Key(w, "drains");
    w.Bool(kept->drains);
    w.EndObject();
  }
  w.EndObject();
}

}  // namespace

std::string EncodeInventory(const inventory::InventorySnapshot& snapshot, const inventory::InventoryStats& s,
                            std::string_view node, const std::vector<DraDecisionView>& dra_decisions,
                            const std::vector<std::string>& errors, std::optional<double> fragmented_pct, bool compact,
                            const std::string& domain_key, const DomainIndex* domains) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.SetIndent(' ', compact ? 0 : 2);
  w.StartObject();
  Key(w, "version");
  w.Uint64(snapshot.version());
  Key(w, "ledgerSize");
  w.Uint64(s.ledger_size);
  Key(w, "podsKnown");
  w.Uint64(s.pods_known);
  Key(w, "pendingPods");
  w.Uint64(s.pending_pods);
  Key(w, "draObjects");
  w.Uint64(s.dra_objects);
  if (fragmented_pct) {
    Key(w, "summary");
    w.StartObject();
    Key(w, "fragmentedPct");
    w.Double(*fragmented_pct);
    w.EndObject();
  }
  Key(w, "errors");
  w.StartArray();
  for (const std::string& e : errors) Str(w, e);
  w.EndArray();
  Key(w, "nodes");
  w.StartArray();
  for (const inventory::NodeStatePtr& n : snapshot.nodes()) {
    if (!node.empty() && n->node.name != node) continue;
    WriteNode(w, *n, domain_key);
  }
  w.EndArray();
  WriteDra(w, snapshot.dra(), node, dra_decisions);
  WriteGroups(w, snapshot.groups());
  if (node.empty() && domains != nullptr) WriteDomains(w, snapshot, domain_key, *domains);
  w.EndObject();
  return std::string(b.GetString(), b.GetSize());
}

}  // namespace gpusched::extender
