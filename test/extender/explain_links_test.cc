// Explain on nodes with NVLink islands (issue 34 §1): it refuses what filter refuses among the
// fitting nodes, and says how the pod's GPUs stand on the links where it fits.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/extender/explain.h"
#include "gpusched/extender/inventory_json.h"
#include "gpusched/json/json.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::extender {
namespace explain_links_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::PodJson;

// "scattered" and "paired": nvidia nodes of two NVLink pairs with GPU0+GPU2 and GPU0+GPU1 busy;
// "shared": an mGPU node of two pairs with GPU0 partly used.
struct Cluster {
  Cluster() {
    std::vector<std::string> items;
    auto whole = [&](const std::string& name, const std::map<int, std::string>& busy) {
      testing::NodeJson n = testing::NvidiaNode(name, 4);
      n.extra_annotations["gpusched.io/gpu-devices"] = testing::LinkedGpusAnnotation(name, {{1}, {0}, {3}, {2}}, busy);
      items.push_back(n.ToJson());
      for (const auto& [gpu, pod] : busy) {
        items.push_back(PodJson{.name = pod, .uid = pod, .node = name, .phase = "Running", .containers = {testing::WholeGpus("c", 1)}}.ToJson());
      }
    };
    whole("scattered", {{0, "s0"}, {2, "s2"}});
    whole("paired", {{0, "p0"}, {1, "p1"}});
    testing::NodeJson shared = testing::MgpuNode("shared", 4, 81920);
    shared.gpus = std::nullopt;
    shared.extra_annotations["gpusched.io/gpu-devices"] = testing::LinkedGpusAnnotation("shared", {{1}, {0}, {3}, {2}});
    items.push_back(shared.ToJson());
    items.push_back(PodJson{.name = "m0", .uid = "m0", .node = "shared", .phase = "Running", .containers = {testing::Mgpu("c", 30, 1024)},
                            .annotations = {{"vke.volcengine.com/gpu-index-container-c", "0"}}}
                        .ToJson());
    ClusterObjects objects;
    EXPECT_TRUE(kubejson::AppendClusterJson(testing::ListJson(items), &objects).ok());
    inventory.ReplaceCluster(std::move(objects));
    snapshot = inventory.Snapshot();
  }
  Explanation Of(const PodJson& pod) {
    StatusOr<Explanation> e = Explain(testing::DecodedPod(pod.ToJson()), std::nullopt,
                                      EvaluationInputs{.snapshot = snapshot.get(), .options = &options, .programs = &programs});
    EXPECT_TRUE(e.ok()) << e.status().message();
    return e.ok() ? *e : Explanation{};
  }
  inventory::Inventory inventory;
  std::shared_ptr<const inventory::InventorySnapshot> snapshot;
  ServiceOptions options;
  dra::cel::ProgramCache programs;
};

std::string Compact(const rapidjson::Value& v) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  v.Accept(w);
  return sb.GetString();
}

const NodeExplanation* Find(const Explanation& e, const std::string& node) {
  for (const NodeExplanation& n : e.nodes) {
    if (n.node == node) return &n;
  }
  return nullptr;
}

TEST(ExplainLinks, WholeGpusFitOnlyWhereTheyCanBeNvlinkConnectedAsFilterSays) {
  Cluster c;
  Explanation e = c.Of(PodJson{.name = "p", .uid = "p", .containers = {testing::WholeGpus("c", 2)}});
  const NodeExplanation* scattered = Find(e, "scattered");
  const NodeExplanation* paired = Find(e, "paired");
  ASSERT_TRUE(scattered != nullptr && paired != nullptr);
  EXPECT_FALSE(scattered->fits);
  EXPECT_THAT(Reasons(*scattered), ElementsAre(HasSubstr("no NVLink-connected set of 2 free GPUs (free: GPU1, GPU3)")));
  EXPECT_TRUE(paired->fits);
  EXPECT_EQ(paired->links, "an NVLink-connected set of 2 free GPUs is here (the device plugin picks the cards)");
  EXPECT_THAT(ExplanationJson(e), HasSubstr(R"("links":"an NVLink-connected set of 2 free GPUs is here)"));
}

TEST(ExplainLinks, AnMgpuContainerSaysWhichConnectedSetItGetsAndWhatItLeaves) {
  Cluster c;
  Explanation e = c.Of(PodJson{.name = "p", .uid = "p", .containers = {testing::Mgpu("c", 200, std::nullopt)}});
  const NodeExplanation* shared = Find(e, "shared");
  ASSERT_NE(shared, nullptr);
  ASSERT_TRUE(shared->fits) << ::testing::PrintToString(Reasons(*shared));
  EXPECT_EQ(shared->links, "container c: NVLink-connected GPU2+GPU3; largest NVLink-connected idle set left: GPU1");
  EXPECT_THAT(ExplanationText(e), HasSubstr("container c: NVLink-connected GPU2+GPU3"));
}

// DRA where kube-scheduler allocates: dra-l's first free pair (GPU1+GPU2) crosses the NVLink
// pairs (GPU0+GPU2, GPU1+GPU3), dra-m's (GPU0+GPU2) is one. Explain refuses dra-l as filter does;
// but where the pod's node selector keeps it off dra-m, as kube-scheduler's own filters would
// before asking gpusched, no offered node is better and dra-l fits.
TEST(ExplainLinks, ADraNodeIsRefusedForItsScatteredFirstFitOnlyWhenABetterNodeCouldTakeThePod) {
  std::vector<std::vector<int>> pairs = {{2}, {3}, {0}, {1}};
  std::string dra_l = testing::DraNodeWithLinks("dra-l", pairs);
  dra_l.replace(dra_l.find(R"("labels":{)"), 10, R"("labels":{"pool":"a",)");
  ClusterObjects objects;
  ASSERT_TRUE(kubejson::AppendClusterJson(
                  testing::ListJson({dra_l, testing::GpuSlice("dra-l", 4), testing::DraNodeWithLinks("dra-m", pairs),
                                     testing::GpuSlice("dra-m", 4), std::string(testing::kGpuClass),
                                     testing::Claim("pair", testing::ClaimSpec(2, "")),
                                     testing::Claim("on-l", testing::ClaimSpec(1, ""), {"dra-l/gpu-0"}, {"a"}),
                                     testing::Claim("on-m", testing::ClaimSpec(1, ""), {"dra-m/gpu-1"}, {"b"})}),
                  &objects)
                  .ok());
  inventory::Inventory inventory;
  inventory.ReplaceCluster(std::move(objects));
  auto snapshot = inventory.Snapshot();
  ServiceOptions options;
  dra::cel::ProgramCache programs;
  auto explain = [&](const std::string& pod_json) {
    StatusOr<Explanation> e = Explain(testing::DecodedPod(pod_json), std::nullopt,
                                      EvaluationInputs{.snapshot = snapshot.get(), .options = &options, .programs = &programs});
    EXPECT_TRUE(e.ok()) << e.status().message();
    return e.ok() ? *e : Explanation{};
  };
  std::string pod = testing::ClaimPod("trainer", "pair");
  Explanation e = explain(pod);
  ASSERT_TRUE(Find(e, "dra-l") != nullptr && Find(e, "dra-m") != nullptr);
  EXPECT_FALSE(Find(e, "dra-l")->fits);
  EXPECT_THAT(Reasons(*Find(e, "dra-l")),
              ElementsAre("the devices allocated here for claim pair request gpus would be GPU1+GPU2, not NVLink-connected; "
                          "other nodes offered have a connected set"));
  EXPECT_TRUE(Find(e, "dra-m")->fits);
  EXPECT_EQ(Find(e, "dra-m")->links, "the devices allocated here for claim pair request gpus would be GPU0+GPU2, NVLink-connected");
  std::string kept_off_m = pod;
  kept_off_m.replace(kept_off_m.find(R"("spec":{)"), 8, R"("spec":{"nodeSelector":{"pool":"a"},)");
  Explanation selected = explain(kept_off_m);
  EXPECT_TRUE(Find(selected, "dra-l")->fits) << ::testing::PrintToString(Reasons(*Find(selected, "dra-l")));
  EXPECT_FALSE(Find(selected, "dra-m")->fits);
}

// /debug/inventory (and /ui, which reads it) shows each node's islands and its largest
// NVLink-connected set of free GPUs, and each GPU's pods as the agent read them.
TEST(InventoryLinks, TheInventoryShowsIslandsAndTheLargestFreeConnectedSet) {
  Cluster c;
  rapidjson::Document d;
  ASSERT_TRUE(json::Parse(EncodeInventory(*c.snapshot, {}, "scattered"), &d).ok());
  const auto& scattered = d["nodes"][0];
  EXPECT_EQ(Compact(scattered["nvlink"]), R"({"islands":[[0,1],[2,3]],"largestFreeConnected":[1]})");
  EXPECT_EQ(Compact(scattered["gpus"][0]["pods"]), R"(["default/s0"])");
  ASSERT_TRUE(json::Parse(EncodeInventory(*c.snapshot, {}, "shared"), &d).ok());
  EXPECT_EQ(Compact(d["nodes"][0]["nvlink"]), R"({"islands":[[0,1],[2,3]],"largestFreeConnected":[2,3]})");
}

}  // namespace explain_links_test
}  // namespace gpusched::extender
