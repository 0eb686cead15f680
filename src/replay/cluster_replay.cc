// File: cluster_replay.cc
//
// A recorded cluster replayed through the Service: each pod's filter, prioritize and bind bodies in
// order (or kube-scheduler's own pick, for comparison), then the final state measured (DRA topology
// and packing, device-plugin fragmentation) and written as CSV.
#include "gpusched/replay/cluster_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "gpusched/common/random.h"
#include "gpusched/extender/inventory_claim_writer.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/json/json.h"
#include "gpusched/placement/node_ranking.h"
#include "gpusched/placement/pod_request.h"
#include "gpusched/scoring/fragmentation.h"
#include "gpusched/scoring/target_workload.h"
#include "kube_scheduler_score.h"

namespace gpusched::replay {
namespace {

double Pct(int64_t used, int64_t total) { return total > 0 ? 100.0 * static_cast<double>(used) / static_cast<double>(total) : 0.0; }

std::string NodeNamesJson(const inventory::InventorySnapshot& snapshot) {
  std::string out = "[";
  for (size_t i = 0; i < snapshot.nodes().size(); ++i) {
    if (i > 0) out.push_back(',');
    json::AppendString(&out, snapshot.nodes()[i]->node.name);
  }
  out.push_back(']');
  return out;
}

// The names a filter reply kept, and its reasons for the rest.
struct FilterOutcome {
  std::vector<std::string> kept;
  std::string reasons;
};

FilterOutcome ReadFilter(const std::string& reply) {
  FilterOutcome out;
  rapidjson::Document doc;
  if (!json::Parse(reply, &doc).ok() || !doc.IsObject()) return out;
  if (const rapidjson::Value* names = json::Find(doc, "NodeNames"); names != nullptr && names->IsArray()) {
    for (const auto& n : names->GetArray()) {
      if (n.IsString()) out.kept.emplace_back(json::View(n));
    }
  }
  if (const rapidjson::Value* error = json::Find(doc, "Error"); error != nullptr && error->IsString()) {
    out.reasons = std::string(json::View(*error));
  }
  for (const char* key : {"FailedNodes", "FailedAndUnresolvableNodes"}) {
    const rapidjson::Value* m = json::Find(doc, key);
    if (m == nullptr || !m->IsObject()) continue;
    for (auto it = m->MemberBegin(); it != m->MemberEnd() && out.reasons.size() < 2000; ++it) {
      if (!out.reasons.empty()) out.reasons += "; ";
      out.reasons += fmt::format("{}: {}", json::View(it->name), it->value.IsString() ? json::View(it->value) : "");
    }
  }
  return out;
}

std::string PickByPriorities(const std::string& reply, const std::vector<std::string>& kept, Rng& rng) {
  rapidjson::Document doc;
  std::vector<std::string> best;
  int64_t top = -1;
  if (json::Parse(reply, &doc).ok() && doc.IsArray()) {
    for (const auto& hp : doc.GetArray()) {
      if (!hp.IsObject()) continue;
      const rapidjson::Value* host = json::Find(hp, "Host");
      const rapidjson::Value* score = json::Find(hp, "Score");
      if (host == nullptr || score == nullptr || !host->IsString() || !score->IsInt64()) continue;
      if (score->GetInt64() > top) {
        top = score->GetInt64();
        best.clear();
      }
      if (score->GetInt64() == top) best.emplace_back(json::View(*host));
    }
  }
  if (best.empty()) best = kept;  // no scores: every kept node ties
  return best.size() == 1 ? best[0] : best[rng.Below(best.size())];
}

struct PodMeta {
  std::string namespace_name;
  std::string name;
  std::string uid;
};

PodMeta ReadMeta(const std::string& pod_json) {
  rapidjson::Document doc;
  PodMeta out;
  if (!json::Parse(pod_json, &doc).ok() || !doc.IsObject()) return out;
  if (const rapidjson::Value* meta = json::Find(doc, "metadata"); meta != nullptr && meta->IsObject()) {
    (void)json::ReadString(*meta, "namespace", "metadata", &out.namespace_name);
    (void)json::ReadString(*meta, "name", "metadata", &out.name);
    (void)json::ReadString(*meta, "uid", "metadata", &out.uid);
  }
  return out;
}

std::string BindBody(const PodMeta& pod, const std::string& node) {
  std::string out = R"({"PodName":)";
  json::AppendString(&out, pod.name);
  out += R"(,"PodNamespace":)";
  json::AppendString(&out, pod.namespace_name);
  out += R"(,"PodUID":)";
  json::AppendString(&out, pod.uid);
  out += R"(,"Node":)";
  json::AppendString(&out, node);
  out += "}";
  return out;
}

// kube-scheduler's pick without gpusched's scores: the best UpstreamScore, ties at random.
std::string PickUpstream(const inventory::InventorySnapshot& snapshot, const Pod& pod, const std::vector<std::string>& kept,
                         FitStrategy strategy, Rng& rng) {
  ResourceList requests = EffectiveRequests(pod);
  std::vector<std::string> best;
  int64_t top = -1;
  for (const std::string& name : kept) {
    const placement::NodeState* node = snapshot.FindNode(name);
    int64_t score = node == nullptr ? 0 : UpstreamScore(*node, requests, strategy);
    if (score > top) {
      top = score;
      best.clear();
    }
    if (score == top) best.push_back(name);
  }
  return best.size() == 1 ? best[0] : best[rng.Below(best.size())];
}

// The GPUs `pod` asks: nvidia.com/gpu, or the ExactCount requests of its claims.
int GpusAsked(const Pod& pod, const dra::ClusterState& state) {
  placement::PodRequest request = placement::AnalyzePod(pod);
  if (request.whole_gpus > 0) return static_cast<int>(request.whole_gpus);
  int64_t n = 0;
  for (const dra::ResourceClaim* c : state.Resolve(pod).claims) {
    for (const dra::DeviceRequest& r : c->requests) {
      if (r.exactly && r.exactly->allocation_mode == "ExactCount") n += r.exactly->count;
    }
  }
  return static_cast<int>(n);
}

bool IsGpuDriver(std::string_view driver, const std::vector<std::string>& drivers) {
  return std::find(drivers.begin(), drivers.end(), driver) != drivers.end();
}

// The PCIe root of every GPU device of the DRA state, by device.
std::map<dra::DeviceId, std::string> Roots(const dra::ClusterState& state, const std::vector<std::string>& drivers, std::string_view attribute) {
  std::map<dra::DeviceId, std::string> out;
  for (const auto& indexed : state.slices().all()) {
    const dra::ResourceSlice& slice = indexed->slice();
    if (!IsGpuDriver(slice.driver, drivers)) continue;
    for (const dra::Device& d : slice.devices) {
      auto it = d.attributes.find(std::string(attribute));
      out[dra::DeviceId{slice.driver, slice.pool, d.name}] = it == d.attributes.end() ? "" : it->second.text;
    }
  }
  return out;
}

// Fills the DRA measures of `r` from the final state; `asked` holds the GPUs each replayed pod asked.
void MeasureDra(const inventory::InventorySnapshot& snapshot, const std::vector<int>& asked, const std::vector<Pod>& placed,
                const placement::DraOptions& options, ClusterReplayResult* r) {
  const dra::ClusterState& state = snapshot.dra();
  std::map<std::string, std::pair<int, int>> per_node;  // name -> (devices, free)
  for (const auto& indexed : state.slices().all()) {
    const dra::ResourceSlice& slice = indexed->slice();
    const placement::NodeState* node = snapshot.FindNode(slice.node_name);
    if (!IsGpuDriver(slice.driver, options.gpu_drivers) || node == nullptr || !node->ready() || node->mode != ClaimsMode()) continue;
    for (const dra::Device& d : slice.devices) {
      auto& [devices, free] = per_node[slice.node_name];
      ++devices;
      if (!state.allocated().Holds(dra::DeviceId{slice.driver, slice.pool, d.name})) ++free;
    }
  }
  std::map<int, int> sizes;  // GPUs asked -> pods
  for (int n : asked) {
    if (n > 0) ++sizes[n];
  }
  int64_t used = 0;
  double fragmented = 0;
  for (const auto& [name, counts] : per_node) {
    auto [devices, free] = counts;
    r->dra_gpus += devices;
    used += devices - free;
    r->dra_idle_nodes += free == devices ? 1 : 0;
    r->largest_free = std::max(r->largest_free, free);
    for (const auto& [gpus, pods] : sizes) {
      if (free < gpus) fragmented += static_cast<double>(free) * pods / static_cast<double>(asked.size());
    }
  }
  r->dra_gpu_used_pct = Pct(used, r->dra_gpus);
  r->dra_fragmented_pct = r->dra_gpus > 0 ? 100.0 * fragmented / static_cast<double>(r->dra_gpus) : 0;
  std::map<dra::DeviceId, std::string> roots = Roots(state, options.gpu_drivers, options.topology_attribute);
  std::map<std::pair<std::string, std::string>, int> root_size;  // (pool, root) -> GPUs under it
  for (const auto& [id, root] : roots) ++root_size[{id.pool, root}];
  for (const Pod& pod : placed) {
    std::set<std::pair<std::string, std::string>> pod_roots;
    int gpus = 0;
    for (const dra::ResourceClaim* c : state.Resolve(pod).claims) {
      for (const dra::DeviceResult& d : c->allocation ? c->allocation->results : std::vector<dra::DeviceResult>{}) {
        if (auto it = roots.find(d.id); it != roots.end()) {
          ++gpus;
          pod_roots.insert({d.id.pool, it->second});
        }
      }
    }
    r->dra_pod_gpus += gpus;
    if (gpus < 2) continue;
    ++r->multi_gpu_pods;
    // Split: across more roots than the fewest that could hold its GPUs (the largest roots of its pool).
    std::vector<int> sizes;
    for (const auto& [key, n] : root_size) {
      if (key.first == pod_roots.begin()->first) sizes.push_back(n);
    }
    std::sort(sizes.rbegin(), sizes.rend());
    size_t needed = 0;
    for (int held = 0; held < gpus && needed < sizes.size(); ++needed) held += sizes[needed];
    r->split_pods += pod_roots.size() > std::max<size_t>(needed, 1) ? 1 : 0;
  }
}

// Fills the device-plugin measures of `r` (nvidia and mgpu nodes) from the final state, for the
// workload of `pods` (the replayed pods gpusched knows).
void MeasureDevicePlugin(const inventory::InventorySnapshot& snapshot, const std::vector<Pod>& pods, ClusterReplayResult* r) {
  std::vector<scoring::WorkloadSample> samples;
  for (const Pod& pod : pods) {
    scoring::PodShape shape = placement::ScoringShape(placement::AnalyzePod(pod));
    if (shape.uses_gpu()) samples.push_back({shape, ""});
  }
  scoring::TargetWorkload workload = scoring::BuildTargetWorkload(samples);
  double fragmented = 0;
  int64_t gpus = 0;
  for (const inventory::NodeStatePtr& n : snapshot.nodes()) {
    if (!n->ready() || !HasDevicePlugin(n->mode)) continue;
    gpus += n->view.gpu_count;
    r->idle_gpus += n->view.FullyFree();
    if (!samples.empty()) fragmented += scoring::FgdFragmentation(n->view, workload);
    if (HasPayload(n->mode, Payload::kCount)) r->largest_whole_fit = std::max(r->largest_whole_fit, n->view.FullyFree());
    for (const placement::GpuSlot& g : HasPayload(n->mode, Payload::kShares) ? n->gpus : std::vector<placement::GpuSlot>{}) {
      if (!g.healthy || g.exclusive) continue;
      r->largest_mgpu_core_pct = std::max(r->largest_mgpu_core_pct, static_cast<int>(g.free_milli() / 10));
      r->largest_mgpu_mib = std::max(r->largest_mgpu_mib, g.memory_mib - g.used_mib);
    }
  }
  r->gpu_fragmented_pct = gpus > 0 ? 100.0 * fragmented / (static_cast<double>(gpus) * kMilliPerGpu) : 0;
}

}  // namespace

int64_t UpstreamScore(const placement::NodeState& node, const ResourceList& pod, FitStrategy strategy) {
  std::array<ScoredResource, 2> resources;
  size_t i = 0;
  for (const std::pair<std::string_view, int64_t>& resource : {std::pair<std::string_view, int64_t>{"cpu", 100}, {"memory", int64_t{200} << 20}}) {
    std::string_view name = resource.first;  // its non-zero default: resource.second
    auto nonzero = [&](const ResourceList& asks) { return asks.Get(name) > 0 ? asks.Get(name) : resource.second; };
    ScoredResource& r = resources[i++];
    r = ScoredResource{.capacity = node.node.other_allocatable.Get(name), .nonzero_requested = nonzero(pod), .requested = pod.Get(name)};
    if (node.uses == nullptr) continue;
    for (const PodUse& use : node.uses->pods()) r.nonzero_requested += nonzero(use.requests);
    r.requested += node.uses->total().Get(name);
  }
  return DefaultResourceScore(resources, strategy == FitStrategy::kMostAllocated);
}

ClusterReplayResult RunClusterReplay(const ClusterObjects& cluster, const std::vector<std::string>& pods_json,
                                     const ClusterReplayOptions& options) {
  auto start = std::chrono::steady_clock::now();
  inventory::Inventory inventory(inventory::InventoryOptions{.scheduler_name = options.service.scheduler_name});
  inventory.ReplaceCluster(ClusterObjects(cluster));
  extender::InventoryClaimWriter claims(&inventory);
  extender::ServiceOptions service_options = options.service;
  service_options.dra_upstream_devices = options.upstream.has_value();
  extender::Service service(&inventory, service_options, extender::ServiceCollaborators{.claim_writer = &claims});
  Rng rng(options.seed);
  std::string names = NodeNamesJson(*inventory.Snapshot());

  std::string policy = !options.upstream                                        ? options.service.node_policy
                       : *options.upstream == FitStrategy::kLeastAllocated ? "upstream"
                                                                           : "upstream-packing";
  ClusterReplayResult result{.policy = policy, .seed = options.seed};
  std::vector<int> asked;
  std::vector<Pod> placed_pods, known_pods;
  for (const std::string& pod : pods_json) {
    ++result.pods;
    PodMeta meta = ReadMeta(pod);
    std::string args = fmt::format(R"({{"Pod":{},"Nodes":null,"NodeNames":{}}})", pod, names);
    FilterOutcome filtered = ReadFilter(service.Filter(args));
    std::optional<Pod> record = inventory.FindPod(meta.uid);
    if (record) {
      asked.push_back(GpusAsked(*record, inventory.Snapshot()->dra()));
      known_pods.push_back(*record);
    }
    Placed placed{.pod = fmt::format("{}/{}", meta.namespace_name, meta.name)};
    if (filtered.kept.empty()) {
      placed.error = filtered.reasons.empty() ? "no node fits" : filtered.reasons;
    } else {
      std::string node = filtered.kept.size() == 1 ? filtered.kept[0]
                         : options.upstream && record ? PickUpstream(*inventory.Snapshot(), *record, filtered.kept, *options.upstream, rng)
                                                      : PickByPriorities(service.Prioritize(args), filtered.kept, rng);
      rapidjson::Document bind;
      std::string reply = service.Bind(BindBody(meta, node));
      std::string error = "malformed bind reply";
      if (json::Parse(reply, &bind).ok() && bind.IsObject()) {
        const rapidjson::Value* e = json::Find(bind, "Error");
        error = e != nullptr && e->IsString() ? std::string(json::View(*e)) : "";
      }
      if (error.empty()) {
        placed.node = node;
        if (std::optional<Pod> bound = inventory.FindPod(meta.uid)) placed_pods.push_back(std::move(*bound));
      } else {
        placed.error = error;
      }
    }
    (placed.node.empty() ? result.failed : result.placed) += 1;
    result.placements.push_back(std::move(placed));
  }

  int64_t whole_used = 0, whole_total = 0, core_used = 0, core_total = 0, mem_used = 0, mem_total = 0;
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory.Snapshot();
  for (const inventory::NodeStatePtr& n : snapshot->nodes()) {
    if (!n->ready()) continue;
    if (HasPayload(n->mode, Payload::kCount)) {
      whole_used += n->whole_used;
      whole_total += n->whole_total;
    } else if (HasPayload(n->mode, Payload::kShares)) {
      core_used += n->used_milli;
      core_total += n->capacity_milli;
      mem_used += n->used_mib;
      mem_total += n->capacity_mib;
    }
  }
  result.whole_gpu_used_pct = Pct(whole_used, whole_total);
  result.mgpu_core_used_pct = Pct(core_used, core_total);
  result.mgpu_memory_used_pct = Pct(mem_used, mem_total);
  MeasureDra(*snapshot, asked, placed_pods, service_options.dra, &result);
  MeasureDevicePlugin(*snapshot, known_pods, &result);
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string ClusterSummaryCsv(const std::vector<ClusterReplayResult>& results) {
  // New columns go after the existing ones: scripts read these by position.
  std::string out =
      "policy,seed,pods,placed,failed_pods,whole_gpu_used_pct,mgpu_core_used_pct,mgpu_memory_used_pct,wall_s,"
      "dra_gpus,dra_gpu_used_pct,dra_fragmented_pct,dra_idle_nodes,largest_free,multi_gpu_pods,split_pods,"
      "idle_gpus,gpu_fragmented_pct,largest_whole_fit,largest_mgpu_core_pct,largest_mgpu_mib\n";
  for (const ClusterReplayResult& r : results) {
    out += fmt::format("{},{},{},{},{},{:.2f},{:.2f},{:.2f},{:.3f},{},{:.2f},{:.2f},{},{},{},{},{},{:.2f},{},{},{}\n", r.policy, r.seed,
                       r.pods, r.placed, r.failed, r.whole_gpu_used_pct, r.mgpu_core_used_pct, r.mgpu_memory_used_pct, r.wall_s,
                       r.dra_gpus, r.dra_gpu_used_pct, r.dra_fragmented_pct, r.dra_idle_nodes, r.largest_free, r.multi_gpu_pods,
                       r.split_pods, r.idle_gpus, r.gpu_fragmented_pct, r.largest_whole_fit, r.largest_mgpu_core_pct,
                       r.largest_mgpu_mib);
  }
  return out;
}

std::string PlacementsCsv(const std::vector<ClusterReplayResult>& results) {
  std::string out = "policy,seed,pod,node,error\n";
  for (const ClusterReplayResult& r : results) {
    for (const Placed& p : r.placements) {
      std::string error = p.error;
      for (char& c : error) {
        if (c == '"') c = '\'';
      }
      out += fmt::format("{},{},{},{},\"{}\"\n", r.policy, r.seed, p.pod, p.node, error);
    }
  }
  return out;
}

}  // namespace gpusched::replay
