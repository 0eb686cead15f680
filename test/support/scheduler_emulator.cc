// File: scheduler_emulator.cc
//
// kube-scheduler's cycles as an extender sees them: node totals, filter, prioritize when more
// than one node is left, bind; a gang's members assumed until enough fit; claims allocated at
// PreBind.
#include "scheduler_emulator.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

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

SchedulerEmulator::SchedulerEmulator(ExtenderCall call, const ClusterObjects& cluster, ClaimWrite on_claim, PodWrite on_pod)
    : call_(std::move(call)), on_claim_(std::move(on_claim)), on_pod_(std::move(on_pod)) {
  for (const Node& n : cluster.nodes) {
    names_.push_back(n.name);
    nodes_[n.name] = n;
    labels_[n.name] = n.labels;
    allocatable_[n.name] = Totals{.gpus = n.allocatable.nvidia_gpus, .core = n.allocatable.mgpu_core_percent,
                                  .memory = n.allocatable.mgpu_memory_mib};
  }
  for (const dra::DraObject& o : cluster.dra_objects) {
    const dra::SlicePtr* slice = std::get_if<dra::SlicePtr>(&o.value);
    if (slice == nullptr || !allocatable_.contains((*slice)->node_name)) continue;
    for (const dra::Device& d : (*slice)->devices) {
      dra::DeviceId id{.driver = (*slice)->driver, .pool = (*slice)->pool, .device = d.name};
      devices_[(*slice)->node_name].push_back(id);
      device_node_[id] = (*slice)->node_name;
      ++allocatable_[(*slice)->node_name].devices;
    }
  }
  for (const dra::DraObject& o : cluster.dra_objects) {
    if (const dra::DeviceClass* c = std::get_if<dra::DeviceClass>(&o.value)) classes_[c->name] = *c;
    const dra::ResourceClaim* claim = std::get_if<dra::ResourceClaim>(&o.value);
    if (claim == nullptr) continue;
    claims_[claim->namespace_name + "/" + claim->name] = *claim;
    if (!claim->allocation) continue;
    for (const dra::DeviceResult& r : claim->allocation->results) {
      if (device_node_.contains(r.id) && taken_.insert(r.id).second) ++taken_on_[device_node_[r.id]];
    }
  }
  for (const Pod& p : cluster.pods) {
    if (p.bound() && !p.terminal() && allocatable_.contains(p.node_name)) Add(p, p.node_name, +1);
  }
}

SchedulerEmulator::Totals SchedulerEmulator::Asks(const Pod& pod, const std::string& node) const {
  Totals t;
  for (const Container& c : pod.containers) {
    t.gpus += Asked(c.requests.nvidia_gpus, c.limits.nvidia_gpus);
    t.core += Asked(c.requests.mgpu_core_percent, c.limits.mgpu_core_percent);
    t.memory += Asked(c.requests.mgpu_memory_mib, c.limits.mgpu_memory_mib);
  }
  for (const std::string& key : ClaimKeys(pod)) {
    auto it = claims_.find(key);
    if (it == claims_.end() || it->second.allocation) continue;
    for (const dra::DeviceRequest& r : it->second.requests) t.devices += r.exactly ? r.exactly->count : 1;
  }
  if (t.gpus > 0 && ServedByDra(pod, node)) {  // DynamicResources, not NodeResourcesFit
    if (!specials_.contains(pod.uid)) t.devices += t.gpus;  // allocated ones are taken_
    t.gpus = 0;
  }
  return t;
}

bool SchedulerEmulator::ServedByDra(const Pod& pod, const std::string& node) const {
  auto it = nodes_.find(node);
  return it != nodes_.end() && dra::ServedThroughDra(pod, it->second, classes_);
}

void SchedulerEmulator::AllocateOn(const Pod& pod, const std::string& node, dra::ResourceClaim* claim) {
  dra::AllocationResult result;
  auto free = devices_[node].begin();
  for (const dra::DeviceRequest& r : claim->requests) {
    for (int64_t k = 0; k < (r.exactly ? r.exactly->count : 1); ++k) {
      while (free != devices_[node].end() && taken_.contains(*free)) ++free;
      if (free == devices_[node].end()) break;  // the node totals said it fits: not reached
      taken_.insert(*free);
      ++taken_on_[node];
      result.results.push_back(dra::DeviceResult{.request = r.name, .id = *free});
    }
  }
  claim->allocation = std::move(result);
  claim->reserved_for = {dra::ConsumerRef{.resource = "pods", .name = pod.name, .uid = pod.uid}};
  if (on_claim_) on_claim_(*claim);
}

void SchedulerEmulator::AllocateSpecialClaim(const Pod& pod, const std::string& node) {
  std::vector<std::string> served = dra::ServedOn(nodes_.at(node), dra::MappedResources(pod, classes_));
  std::optional<dra::SpecialClaim> special = dra::BuildSpecialClaim(pod, classes_, served);
  if (!special) return;
  dra::ResourceClaim& claim = special->claim;
  claim.name += std::to_string(++special_serial_);  // the API server completes generateName
  claim.uid = "uid-" + claim.name;
  std::string key = claim.namespace_name + "/" + claim.name;
  claims_[key] = claim;
  specials_[pod.uid] = key;
  AllocateOn(pod, node, &claims_[key]);
  Pod written = pod;
  written.extended_resource_claim = claim.name;
  if (on_pod_) on_pod_(written);
}

std::vector<std::string> SchedulerEmulator::ClaimKeys(const Pod& pod) {
  std::vector<std::string> keys;
  for (const PodClaimRef& ref : pod.resource_claims) {
    std::string name = !ref.claim_name.empty() ? ref.claim_name : ref.generated.value_or("");
    if (!name.empty()) keys.push_back(pod.namespace_name + "/" + name);
  }
  return keys;
}

void SchedulerEmulator::AllocateClaims(const Pod& pod, const std::string& node) {
  for (const std::string& key : ClaimKeys(pod)) {
    auto it = claims_.find(key);
    if (it == claims_.end() || it->second.allocation) continue;
    AllocateOn(pod, node, &it->second);
  }
  if (ServedByDra(pod, node)) AllocateSpecialClaim(pod, node);
}

void SchedulerEmulator::DeallocateClaims(const Pod& pod) {
  std::vector<std::string> keys = ClaimKeys(pod);
  auto special = specials_.find(pod.uid);
  if (special != specials_.end()) keys.push_back(special->second);
  for (const std::string& key : keys) {
    auto it = claims_.find(key);
    if (it == claims_.end() || !it->second.allocation) continue;
    dra::ResourceClaim& claim = it->second;
    for (const dra::DeviceResult& r : claim.allocation->results) {
      if (taken_.erase(r.id) > 0) --taken_on_[device_node_[r.id]];
    }
    claim.allocation.reset();
    claim.reserved_for.clear();
    if (on_claim_) on_claim_(claim);
  }
  if (special != specials_.end()) specials_.erase(special);  // Unreserve deletes it; a retry makes a new one
}

void SchedulerEmulator::Add(const Pod& pod, const std::string& node, int sign) {
  Totals asks = Asks(pod, node);
  Totals& t = used_[node];
  t.gpus += sign * asks.gpus;
  t.core += sign * asks.core;
  t.memory += sign * asks.memory;
  t.devices += sign * asks.devices;  // claims not allocated: assumed pods'; allocated ones are taken_
}

bool SchedulerEmulator::FitsTotals(const Pod& pod, const std::string& node) const {
  Totals want = Asks(pod, node);
  const Totals& cap = allocatable_.at(node);
  auto it = used_.find(node);
  Totals used = it == used_.end() ? Totals{} : it->second;
  auto taken = taken_on_.find(node);
  int64_t devices = used.devices + (taken == taken_on_.end() ? 0 : taken->second);
  // NodeResourcesFit checks only the resources the pod asks for; DynamicResources the claims.
  return (want.gpus == 0 || used.gpus + want.gpus <= cap.gpus) && (want.core == 0 || used.core + want.core <= cap.core) &&
         (want.memory == 0 || used.memory + want.memory <= cap.memory) && (want.devices == 0 || devices + want.devices <= cap.devices);
}

std::vector<std::string> SchedulerEmulator::Filter(const EmulatedPod& pod, const std::vector<std::string>& nodes) {
  ++filter_calls_;
  filtered_nodes_ += nodes.size();
  auto nominated = nominated_.find(pod.pod.uid);
  if (nominated == nominated_.end()) return KeptNodes(call_("filter", ArgsWithNames(pod.json, nodes)));
  rapidjson::Document d;
  d.Parse(pod.json.data(), pod.json.size());
  if (!d.HasMember("status")) d.AddMember("status", rapidjson::Value(rapidjson::kObjectType), d.GetAllocator());
  rapidjson::Value node(nominated->second.c_str(), d.GetAllocator());
  d["status"].RemoveMember("nominatedNodeName");
  d["status"].AddMember("nominatedNodeName", node, d.GetAllocator());
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> writer(out);
  d.Accept(writer);
  return KeptNodes(call_("filter", ArgsWithNames(out.GetString(), nodes)));
}

std::optional<std::string> SchedulerEmulator::Place(const EmulatedPod& pod, const std::vector<std::string>& candidates) {
  if (auto n = nominated_.find(pod.pod.uid); n != nominated_.end()) {  // PreferNominatedNode
    std::string node = n->second;
    bool offered = std::find(candidates.begin(), candidates.end(), node) != candidates.end();
    if (offered && FitsTotals(pod.pod, node) && !Filter(pod, {node}).empty()) return node;
  }
  std::vector<std::string> fitting;
  for (const std::string& n : candidates) {
    if (FitsTotals(pod.pod, n)) fitting.push_back(n);
  }
  std::vector<std::string> kept = fitting.empty() ? fitting : Filter(pod, fitting);
  if (kept.empty()) {
    nominated_.erase(pod.pod.uid);  // a failed cycle clears the nomination
    return std::nullopt;
  }
  if (kept.size() == 1) return kept[0];  // kube-scheduler does not prioritize a single feasible node
  std::string best = BestHost(call_("prioritize", ArgsWithNames(pod.json, kept)));
  return best.empty() ? kept[0] : best;
}

bool SchedulerEmulator::Bind(const EmulatedPod& pod, const std::string& node) {
  AllocateClaims(pod.pod, node);  // PreBind comes before the extender's bind
  std::string reply = call_("bind", BindJson(pod.pod.name, pod.pod.namespace_name, pod.pod.uid, node));
  if (reply.find(R"("Error":"")") == std::string::npos) {
    ++failed_binds_;
    DeallocateClaims(pod.pod);
    return false;
  }
  Add(pod.pod, node, +1);
  bound_[pod.pod.uid] = node;
  nominated_.erase(pod.pod.uid);  // binding clears it
  return true;
}

bool SchedulerEmulator::Schedule(const EmulatedPod& pod) {
  std::optional<std::string> node = Place(pod, names_);
  return node && Bind(pod, *node);
}

std::vector<std::pair<const EmulatedPod*, std::string>> SchedulerEmulator::Assume(const std::vector<EmulatedPod>& members,
                                                                                GangFlow flow,
                                                                                const std::vector<std::string>& candidates) {
  std::vector<std::pair<const EmulatedPod*, std::string>> assumed;
  for (const EmulatedPod& m : members) {
    std::optional<std::string> node = Place(m, candidates);
    if (!node) {
      if (flow == GangFlow::kCoscheduling) break;  // PostFilter rejects the waiting members
      continue;                                    // the pod-group cycle tries every member
    }
    Add(m.pod, *node, +1);
    assumed.emplace_back(&m, *node);
  }
  return assumed;
}

void SchedulerEmulator::Forget(const std::vector<std::pair<const EmulatedPod*, std::string>>& assumed) {
  for (const auto& [pod, node] : assumed) Add(pod->pod, node, -1);
}

GangOutcome SchedulerEmulator::ScheduleGang(const std::vector<EmulatedPod>& members, size_t min_count, GangFlow flow,
                                            const std::string& topology_key) {
  GangOutcome out{.members = members.size(), .min_count = min_count};
  // By label value (nodes without the key are in no domain); one of every node without a topology key.
  std::map<std::string, std::vector<std::string>> domains;
  for (const std::string& n : names_) {
    if (topology_key.empty()) {
      domains[""].push_back(n);
    } else if (auto it = labels_[n].find(topology_key); it != labels_[n].end()) {
      domains[it->second].push_back(n);
    }
  }
  std::vector<std::pair<const EmulatedPod*, std::string>> assumed;
  for (const auto& [domain, nodes] : domains) {
    assumed = Assume(members, flow, nodes);
    Forget(assumed);  // forgotten, or bound below
    if (assumed.size() >= min_count) break;
  }
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
  DeallocateClaims(pod.pod);
  bound_.erase(it);
}

}  // namespace gpusched::testing
