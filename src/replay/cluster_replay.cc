#include "gpusched/replay/cluster_replay.h"

#include <fmt/format.h>

#include <chrono>

#include "gpusched/common/random.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/json/json.h"

namespace gpusched::replay {
namespace {

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

std::string PodKey(const std::string& pod_json) {
  rapidjson::Document doc;
  if (!json::Parse(pod_json, &doc).ok() || !doc.IsObject()) return "?";
  std::string ns;
  std::string name;
  if (const rapidjson::Value* meta = json::Find(doc, "metadata"); meta != nullptr && meta->IsObject()) {
    (void)json::ReadString(*meta, "namespace", "metadata", &ns);
    (void)json::ReadString(*meta, "name", "metadata", &name);
  }
  return fmt::format("{}/{}", ns, name);
}

std::string BindBody(const std::string& pod_json, const std::string& node) {
  rapidjson::Document doc;
  std::string ns;
  std::string name;
  std::string uid;
  if (json::Parse(pod_json, &doc).ok() && doc.IsObject()) {
    if (const rapidjson::Value* meta = json::Find(doc, "metadata"); meta != nullptr && meta->IsObject()) {
      (void)json::ReadString(*meta, "namespace", "metadata", &ns);
      (void)json::ReadString(*meta, "name", "metadata", &name);
      (void)json::ReadString(*meta, "uid", "metadata", &uid);
    }
  }
  std::string out = R"({"PodName":)";
  json::AppendString(&out, name);
  out += R"(,"PodNamespace":)";
  json::AppendString(&out, ns);
  out += R"(,"PodUID":)";
  json::AppendString(&out, uid);
  out += R"(,"Node":)";
  json::AppendString(&out, node);
  out += "}";
  return out;
}

double Pct(int64_t used, int64_t total) { return total > 0 ? 100.0 * static_cast<double>(used) / static_cast<double>(total) : 0.0; }

}  // namespace

ClusterReplayResult RunClusterReplay(const ClusterObjects& cluster, const std::vector<std::string>& pods_json,
                                     const ClusterReplayOptions& options) {
  auto start = std::chrono::steady_clock::now();
  inventory::Inventory inventory;
  inventory.ReplaceCluster(ClusterObjects(cluster));
  extender::Service service(&inventory, options.service);
  Rng rng(options.seed);
  std::string names = NodeNamesJson(*inventory.Snapshot());

  ClusterReplayResult result{.policy = options.service.node_policy, .seed = options.seed};
  for (const std::string& pod : pods_json) {
    ++result.pods;
    std::string args = fmt::format(R"({{"Pod":{},"Nodes":null,"NodeNames":{}}})", pod, names);
    FilterOutcome filtered = ReadFilter(service.Filter(args));
    Placed placed{.pod = PodKey(pod)};
    if (filtered.kept.empty()) {
      placed.error = filtered.reasons.empty() ? "no node fits" : filtered.reasons;
    } else {
      std::string node = filtered.kept.size() == 1 ? filtered.kept[0]
                                                    : PickByPriorities(service.Prioritize(args), filtered.kept, rng);
      rapidjson::Document bind;
      std::string reply = service.Bind(BindBody(pod, node));
      std::string error = "malformed bind reply";
      if (json::Parse(reply, &bind).ok() && bind.IsObject()) {
        const rapidjson::Value* e = json::Find(bind, "Error");
        error = e != nullptr && e->IsString() ? std::string(json::View(*e)) : "";
      }
      if (error.empty()) {
        placed.node = node;
      } else {
        placed.error = error;
      }
    }
    (placed.node.empty() ? result.failed : result.placed) += 1;
    result.placements.push_back(std::move(placed));
  }

  int64_t whole_used = 0, whole_total = 0, core_used = 0, core_total = 0, mem_used = 0, mem_total = 0;
  for (const inventory::NodeStatePtr& n : inventory.Snapshot()->nodes()) {
    if (!n->ready()) continue;
    if (n->mode == NodeMode::kNvidia) {
      whole_used += n->whole_used;
      whole_total += n->whole_total;
    } else if (n->mode == NodeMode::kMgpu) {
      core_used += n->used_milli;
      core_total += n->capacity_milli;
      mem_used += n->used_mib;
      mem_total += n->capacity_mib;
    }
  }
  result.whole_gpu_used_pct = Pct(whole_used, whole_total);
  result.mgpu_core_used_pct = Pct(core_used, core_total);
  result.mgpu_memory_used_pct = Pct(mem_used, mem_total);
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string ClusterSummaryCsv(const std::vector<ClusterReplayResult>& results) {
  std::string out = "policy,seed,pods,placed,failed_pods,whole_gpu_used_pct,mgpu_core_used_pct,mgpu_memory_used_pct,wall_s\n";
  for (const ClusterReplayResult& r : results) {
    out += fmt::format("{},{},{},{},{},{:.2f},{:.2f},{:.2f},{:.3f}\n", r.policy, r.seed, r.pods, r.placed, r.failed,
                       r.whole_gpu_used_pct, r.mgpu_core_used_pct, r.mgpu_memory_used_pct, r.wall_s);
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
