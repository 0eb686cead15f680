// test/data/apiserver: objects shaped as a real API server returns them (canonical quantities,
// managedFields, ownerReferences, native sidecars, a terminating pod, every pod phase, DRA v1, a gang,
// its PodGroup, a gang of plain pods Kueue still gates, and a node with the agent's GPU annotation),
// through snapshot mode and through live sync against the in-process API server: both give the
// inventory the objects describe.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <fstream>
#include <sstream>

#include "cluster_json.h"
#include "fake_apiserver.h"
#include "gpusched/common/time_format.h"
#include "gpusched/extender/domain_steering.h"
#include "gpusched/extender/gang_reservation.h"
#include "gpusched/kubejson/dra_objects.h"
#include "gpusched/kubejson/snapshot_source.h"
#include "gpusched/kubeapi/cluster_sync.h"
#include "gpusched/placement/whole_gpu_sets.h"
#include "http_client.h"
#include "live_replica.h"
#include "test_server.h"

namespace gpusched::kubejson {
namespace apiserver_corpus_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kDir = std::string(GPUSCHED_SOURCE_DIR) + "/test/data/apiserver/";
const std::vector<std::pair<std::string, std::string>> kFiles = {{"nodes", "nodes.json"},
                                                                 {"pods", "pods.json"},
                                                                 {"resourceslices", "resourceslices.json"},
                                                                 {"resourceclaims", "resourceclaims.json"},
                                                                 {"deviceclasses", "deviceclasses.json"},
                                                                 {"podgroups", "podgroups.json"}};

std::string Read(const std::string& file) {
  std::ifstream in(kDir + file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What the inventory says about each node, as comparable text: state, whole GPUs, each GPU's use,
// and who holds what.
std::string Describe(const inventory::InventorySnapshot& s) {
  std::string out;
  for (const inventory::NodeStatePtr& n : s.nodes()) {
    out += fmt::format("{} {} {} whole {}/{}\n", n->node.name, placement::ConditionName(n->condition), n->condition_reason,
                       n->whole_used, n->whole_total);
    for (const placement::GpuSlot& g : n->gpus) {
      out += fmt::format("  gpu{} {}m {}MiB x{}{}\n", g.index, g.used_milli, g.used_mib, g.instances, g.exclusive ? " whole" : "");
    }
    for (const Allocation& a : n->allocations) {
      out += fmt::format("  {}/{} {} {}\n", a.pod_namespace, a.pod_name, ModeName(a.mode), fmt::join(a.placement.devices, ","));
    }
  }
  return out;
}

// gb200-c01-n01: no mode label (nvidia), GPU Feature Discovery's clique label, and the node
// agent's annotation: four GPUs joined by NVSwitch, GPUs 0 and 1 given by the kubelet to
// ml/pretrain-0; the gang ml/train of two pending members, its PodGroup requiring one clique.
void ExpectTheGangAndItsNode(const inventory::InventorySnapshot& s) {
  const placement::NodeState* gb200 = s.FindNode("gb200-c01-n01");
  ASSERT_NE(gb200, nullptr);
  ASSERT_TRUE(gb200->ready()) << gb200->condition_reason;
  EXPECT_EQ(gb200->whole_total, 4);
  EXPECT_EQ(gb200->whole_used, 2);
  EXPECT_EQ(gb200->node.labels.at("nvidia.com/gpu.clique"), "7f3c9a52-1e4b-4c8d-9a0f-2b6d8e1c4a57.1");
  ASSERT_TRUE(gb200->node.published_gpus.has_value());
  ASSERT_EQ(gb200->node.published_gpus->size(), 4u);
  EXPECT_THAT((*gb200->node.published_gpus)[0].nvlink_peers, ElementsAre(1, 2, 3));
  EXPECT_THAT(*(*gb200->node.published_gpus)[1].pods, ElementsAre("ml/pretrain-0"));
  // By that reading against the pods bound there, GPUs 2 and 3 are free (filter reads it only on
  // nodes with islands, which NVSwitch is not).
  EXPECT_EQ(placement::FreeByPublishedPods(*gb200), placement::GpuSet{0b1100});
  EXPECT_TRUE(gb200->links == nullptr || !gb200->links->islands) << "NVSwitch: every set alike";
  auto group = s.groups().find("PodGroup/ml/train");
  ASSERT_NE(group, s.groups().end());
  EXPECT_EQ(group->second.min_count, 2);
  EXPECT_EQ(group->second.topology_key, "nvidia.com/gpu.clique");
  EXPECT_EQ(s.MembersOf("PodGroup/ml/train").pending.size(), 2u);
  // spec.schedulerName as the API server writes it (the kept domain counts only gpusched's
  // gangs), and no scheduling gates (a gated gang waits for its gates, not for room).
  for (const std::shared_ptr<const Pod>& member : s.MembersOf("PodGroup/ml/train").pending) {
    EXPECT_EQ(member->scheduler_name, "gpu-scheduler");
    EXPECT_FALSE(member->gated);
  }
  // ml/finetune's members, plain pods of Kueue's pod integration, carry its admission gate.
  ASSERT_EQ(s.MembersOf("PodGroup/ml/finetune").pending.size(), 2u);
  for (const std::shared_ptr<const Pod>& member : s.MembersOf("PodGroup/ml/finetune").pending) EXPECT_TRUE(member->gated);
}

void ExpectTheCorpusInventory(const inventory::Inventory& inv) {
  std::shared_ptr<const inventory::InventorySnapshot> s = inv.Snapshot();
  ASSERT_EQ(s->nodes().size(), 5u);
  ExpectTheGangAndItsNode(*s);
  EXPECT_THAT(inv.Errors(), IsEmpty());
  // A defrag hold a replica wrote to gpu-h100-01 on 2026-11-30 is read, and long past its time.
  const placement::NodeState* held = s->FindNode("gpu-h100-01");
  ASSERT_EQ(held->node.holds.size(), 1u);
  EXPECT_EQ(held->node.holds[0].hold.pod_name, "train-old");
  EXPECT_TRUE(held->holds.empty());
  EXPECT_THAT(s->dra().errors(), IsEmpty());
  // 2 (trainer) + 3 (sidecar 1 beside init 2) + 1 (terminating) + 1 (phase Unknown); Succeeded
  // and Failed pods hold nothing.
  const placement::NodeState* h100 = s->FindNode("gpu-h100-01");
  ASSERT_TRUE(h100->ready()) << h100->condition_reason;
  EXPECT_EQ(h100->whole_total, 8);
  EXPECT_EQ(h100->whole_used, 7);
  // "96k" MiB over 4 GPUs; 50% and "12k" MiB on GPU 1, GPUs 2 and 3 whole.
  const placement::NodeState* a10 = s->FindNode("mgpu-a10-01");
  ASSERT_TRUE(a10->ready()) << a10->condition_reason;
  EXPECT_EQ(a10->capacity_mib, 96000);
  ASSERT_EQ(a10->gpus.size(), 4u);
  EXPECT_EQ(a10->gpus[1].used_milli, 500);
  EXPECT_EQ(a10->gpus[1].used_mib, 12000);
  EXPECT_TRUE(a10->gpus[2].exclusive);
  EXPECT_TRUE(a10->gpus[3].exclusive);
  EXPECT_TRUE(a10->gpus[0].idle());
  const placement::NodeState* h200 = s->FindNode("dra-h200-01");
  ASSERT_TRUE(h200->ready()) << h200->condition_reason;
  ASSERT_EQ(h200->allocations.size(), 1u);
  EXPECT_EQ(h200->allocations[0].pod_name, "h200-pod");
  EXPECT_THAT(h200->allocations[0].placement.devices, ElementsAre("gpu.nvidia.com/dra-h200-01/gpu-2"));
  EXPECT_EQ(s->FindNode("gpu-badlabel-01")->condition, placement::NodeCondition::kInvalid);
  EXPECT_EQ(inv.Stats().ledger_size, 8u);
  // The pod with a deletionTimestamp still holds its GPU, marked terminating (never a victim).
  std::optional<Allocation> leaving = inv.AllocationOf("3b2c1d0e-aaaa-4bbb-8ccc-000000000003");
  ASSERT_TRUE(leaving.has_value());
  EXPECT_EQ(leaving->pod_name, "trainer-7d9f8c6b5-old1");
  EXPECT_TRUE(leaving->terminating);
  EXPECT_EQ(leaving->priority, 0);
  EXPECT_FALSE(inv.AllocationOf("3b2c1d0e-aaaa-4bbb-8ccc-000000000001")->terminating);
}

TEST(ApiServerCorpus, SnapshotModeReadsWhatTheObjectsDescribe) {
  std::vector<std::string> files;
  for (const auto& [resource, file] : kFiles) files.push_back(kDir + file);
  StatusOr<ClusterObjects> objects = LoadSnapshotFiles(files);
  ASSERT_TRUE(objects.ok()) << objects.status().message();
  EXPECT_THAT(objects->errors, IsEmpty());
  EXPECT_EQ(objects->pods.size(), 15u);
  inventory::Inventory inv;
  inv.ReplaceCluster(std::move(objects).value());
  ExpectTheCorpusInventory(inv);
  // The pending pod's metadata.creationTimestamp, beside managedFields' own times: when a gang's
  // wait for one topology domain starts (gang_domains.h).
  std::optional<Pod> pending = inv.FindPod("3b2c1d0e-aaaa-4bbb-8ccc-000000000010");
  ASSERT_TRUE(pending.has_value());
  EXPECT_EQ(pending->created_ms, ParseRfc3339("2026-11-30T07:12:44Z").value());
}

TEST(ApiServerCorpus, LiveSyncReadsTheSame) {
  testing::FakeApiServer api(testing::FakeApiServerOptions{.pod_group_version = "v1beta1"});
  for (const auto& [resource, file] : kFiles) {
    rapidjson::Document list;
    list.Parse(Read(file).c_str());
    ASSERT_TRUE(list.IsObject()) << file;
    for (const rapidjson::Value& item : list["items"].GetArray()) {
      rapidjson::StringBuffer sb;
      rapidjson::Writer<rapidjson::StringBuffer> w(sb);
      item.Accept(w);
      api.Put(resource, std::string(sb.GetString(), sb.GetSize()));
    }
  }
  kubeapi::ApiConfig config;
  ASSERT_TRUE(kubeapi::ParseServerUrl(api.url(), &config).ok());
  std::unique_ptr<kubeapi::ApiClient> client = std::move(kubeapi::ApiClient::Create(config)).value();
  inventory::Inventory live;
  kubeapi::ClusterSync sync(client.get(), &live, {});
  sync.Start();
  ASSERT_TRUE(sync.WaitSynced(std::chrono::seconds(10)));
  ExpectTheCorpusInventory(live);

  std::vector<std::string> files;
  for (const auto& [resource, file] : kFiles) files.push_back(kDir + file);
  inventory::Inventory snapshot;
  snapshot.ReplaceCluster(std::move(LoadSnapshotFiles(files)).value());
  EXPECT_EQ(Describe(*live.Snapshot()), Describe(*snapshot.Snapshot()));
}

// Every object of the corpus in one List.
std::string CorpusList() {
  std::string list = "{\"kind\":\"List\",\"items\":[";
  for (const auto& [resource, file] : kFiles) {
    std::string text = Read(file);
    size_t begin = text.find('[', text.find("\"items\"")) + 1;
    size_t end = text.rfind(']', text.find("\"kind\": \"List\""));
    if (list.back() != '[') list += ',';
    list += text.substr(begin, end - begin);
  }
  return list + "]}";
}

// Kueue gates ml/finetune's members (priority 1000) until it admits them: a gated gang is not in
// kube-scheduler's queue, so the clique of gb200-c01-n01 is kept for ml/train (priority 0, placed
// per clique), which waits. With the gates taken out (admitted), ml/finetune waits too, comes
// first by its priority, and the clique (two of its 2-GPU members fit there when empty) is kept
// for it.
TEST(ApiServerCorpus, NoDomainIsKeptForAGangKueueStillGates) {
  auto kept = [](const std::string& list) -> std::optional<extender::DomainReservation> {
    ClusterObjects objects;
    EXPECT_TRUE(AppendClusterJson(list, &objects).ok());
    inventory::Inventory inv;
    inv.ReplaceCluster(std::move(objects));
    return extender::DomainFullness(extender::ServiceOptions{}).Of(*inv.Snapshot(), "nvidia.com/gpu.clique")->reserved;
  };
  std::string list = CorpusList();
  std::optional<extender::DomainReservation> gated = kept(list);
  ASSERT_TRUE(gated.has_value());
  EXPECT_EQ(gated->gang, "ml/train");
  std::string gate = R"("schedulingGates": [)";
  size_t cut = 0, cuts = 0;
  while ((cut = list.find(gate, cut)) != std::string::npos) {
    size_t end = list.find(']', cut);
    list.replace(cut, end - cut + 1, R"("schedulingGates": [])");
    ++cut;
    ++cuts;
  }
  ASSERT_EQ(cuts, 2u);
  std::optional<extender::DomainReservation> admitted = kept(list);
  ASSERT_TRUE(admitted.has_value());
  EXPECT_EQ(admitted->gang, "ml/finetune");
  EXPECT_EQ(admitted->domain, "7f3c9a52-1e4b-4c8d-9a0f-2b6d8e1c4a57.1");
}

// The pending pod asks for "8k" MiB: it schedules and binds where it fits.
TEST(ApiServerCorpus, ThePendingPodWithCanonicalQuantitiesSchedules) {
  testing::TestServer server(CorpusList());
  rapidjson::Document pods;
  pods.Parse(Read("pods.json").c_str());
  const rapidjson::Value& pending = pods["items"][9];
  ASSERT_STREQ(pending["metadata"]["name"].GetString(), "infer-pending");
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  pending.Accept(w);
  std::string body = testing::ArgsWithNames(std::string(sb.GetString(), sb.GetSize()),
                                            {"gpu-h100-01", "mgpu-a10-01", "dra-h200-01", "gpu-badlabel-01"});
  testing::HttpClient client(server.port());
  EXPECT_THAT(client.Post("/filter", body).body, HasSubstr(R"("NodeNames":["mgpu-a10-01"])"));
  EXPECT_THAT(client.Post("/bind", testing::BindJson("infer-pending", "infer", "3b2c1d0e-aaaa-4bbb-8ccc-000000000010",
                                                     "mgpu-a10-01"))
                  .body,
              HasSubstr(R"("Error":"")"));
  // Binpack: beside llm-0 on GPU 1 (50% + 30%, 12000 + 8000 MiB).
  const placement::NodeState* a10 = server.inventory().Snapshot()->FindNode("mgpu-a10-01");
  EXPECT_EQ(a10->gpus[1].used_milli, 800);
  EXPECT_EQ(a10->gpus[1].used_mib, 20000);
}

}  // namespace apiserver_corpus_test
}  // namespace gpusched::kubejson
