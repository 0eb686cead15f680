#include "gpusched/extender/service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::extender {
namespace service_test {

using testing::ArgsWithNames;
using testing::PodJson;
using testing::WholeGpus;

class ServiceTest : public ::testing::Test {
 protected:
  ServiceTest() {
    std::vector<std::string> items;
    for (int i = 0; i < 6; ++i) items.push_back(testing::NvidiaNode("n" + std::to_string(i), 8).ToJson());
    for (int i = 0; i < 6; ++i) {
      items.push_back(PodJson{.name = "busy" + std::to_string(i), .uid = "busy" + std::to_string(i),
                              .node = "n" + std::to_string(i), .phase = "Running", .containers = {WholeGpus("c", i)}}
                          .ToJson());
    }
    ClusterObjects objects;
    EXPECT_TRUE(kubejson::AppendClusterJson(testing::ListJson(items), &objects).ok());
    inventory_.ReplaceCluster(std::move(objects));
  }

  static std::string Body(const PodJson& pod, const std::vector<std::string>& names) {
    return ArgsWithNames(pod.ToJson(), names);
  }

  inventory::Inventory inventory_;
  Service service_{&inventory_, {}};
};

TEST_F(ServiceTest, PrioritizeAfterFilterEqualsAFreshEvaluation) {
  PodJson pod{.name = "p", .uid = "u", .resource_version = "7", .containers = {WholeGpus("c", 2)}};
  service_.Filter(Body(pod, {"n0", "n1", "n2", "n3"}));
  // n5 was not in the filter call: it is evaluated now; n4 fits; n0-n3 come from the memo. "gone"
  // is left out of the answer: kube-scheduler gives a host it is not told about 0.
  std::string memoized = service_.Prioritize(Body(pod, {"n3", "n1", "n4", "n5", "gone"}));
  Service fresh(&inventory_, {});
  EXPECT_EQ(memoized, fresh.Prioritize(Body(pod, {"n3", "n1", "n4", "n5", "gone"})));
  EXPECT_EQ(memoized,
            R"([{"Host":"n3","Score":8},{"Host":"n1","Score":7},{"Host":"n4","Score":9},{"Host":"n5","Score":10}])");
}

TEST_F(ServiceTest, MemoIsNotReusedOnceTheInventoryChanged) {
  PodJson pod{.name = "p", .uid = "u", .resource_version = "7", .containers = {WholeGpus("c", 2)}};
  service_.Filter(Body(pod, {"n1", "n4"}));
  // Another pod takes n4's last free GPUs between filter and prioritize (booked directly, so the
  // memo of `pod` stays the last filter's).
  Pod other{.uid = "o", .namespace_name = "default", .name = "o"};
  ASSERT_TRUE(inventory_.Commit(other, "n4", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 4}).ok());
  EXPECT_EQ(service_.Prioritize(Body(pod, {"n1", "n4"})), R"([{"Host":"n1","Score":10}])");
}

TEST_F(ServiceTest, MemoIsKeyedByPodVersion) {
  PodJson pod{.name = "p", .uid = "u", .resource_version = "7", .containers = {WholeGpus("c", 2)}};
  service_.Filter(Body(pod, {"n4", "n5"}));
  // The same pod, updated: it now asks for 4 GPUs, which n5 (5 of 8 used) cannot give.
  pod.resource_version = "8";
  pod.containers = {WholeGpus("c", 4)};
  EXPECT_EQ(service_.Prioritize(Body(pod, {"n4", "n5"})), R"([{"Host":"n4","Score":10}])");
}

// Scores are reused across pods of one shape only for nodes that did not change: each answer
// equals that of a service that never saw the earlier pods.
TEST_F(ServiceTest, AnEarlierPodsScoresAreReusedOnlyWhereTheNodeIsUnchanged) {
  std::vector<std::string> names = {"n0", "n1", "n2", "n3", "n4", "n5"};
  PodJson first{.name = "a", .uid = "a", .resource_version = "1", .containers = {WholeGpus("c", 2)}};
  PodJson second{.name = "b", .uid = "b", .resource_version = "1", .containers = {WholeGpus("main", 2)}};
  service_.Filter(Body(first, names));
  service_.Prioritize(Body(first, names));
  // n2 fills up and n5 frees GPUs between the two pods.
  Pod other{.uid = "o", .namespace_name = "default", .name = "o"};
  ASSERT_TRUE(inventory_.Commit(other, "n2", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 6}).ok());
  inventory_.DeletePod("busy5");
  Service fresh(&inventory_, {});
  EXPECT_EQ(service_.Filter(Body(second, names)), fresh.Filter(Body(second, names)));
  EXPECT_EQ(service_.Prioritize(Body(second, names)), fresh.Prioritize(Body(second, names)));
  EXPECT_THAT(service_.Filter(Body(second, names)), ::testing::HasSubstr(R"("n2":"insufficient)"));
  // n5, the best node for the first pod, is now the emptiest; n2 is gone from the answer.
  EXPECT_EQ(service_.Prioritize(Body(second, names)),
            R"([{"Host":"n0","Score":7},{"Host":"n1","Score":8},{"Host":"n3","Score":9},{"Host":"n4","Score":10},{"Host":"n5","Score":6}])");
}

// Issue 34 §1: two nvidia nodes of two NVLink pairs each; on "scattered" the pods hold GPU0 and
// GPU2, on "paired" GPU0 and GPU1 (as the agent publishes the kubelet's PodResources). A 2-GPU
// pod is kept on "paired" only; the device plugin then picks the free pair.
TEST(WholeGpuLinks, FilterKeepsOnlyNodesWhereTheGpusCanBeNvlinkConnected) {
  // A node of two pairs whose GPUs `busy` the kubelet gave to the pods named there.
  auto node = [](const std::string& name, const std::map<int, std::string>& busy) {
    testing::NodeJson n = testing::NvidiaNode(name, 4);
    n.extra_annotations["gpusched.io/gpu-devices"] = testing::LinkedGpusAnnotation(name, {{1}, {0}, {3}, {2}}, busy);
    return n.ToJson();
  };
  std::vector<std::string> items = {node("scattered", {{0, "s0"}, {2, "s2"}}), node("paired", {{0, "p0"}, {1, "p1"}})};
  for (const auto& [uid, on] : std::vector<std::pair<std::string, std::string>>{{"s0", "scattered"}, {"s2", "scattered"}, {"p0", "paired"}, {"p1", "paired"}}) {
    items.push_back(PodJson{.name = uid, .uid = uid, .node = on, .phase = "Running", .containers = {WholeGpus("c", 1)}}.ToJson());
  }
  ClusterObjects objects;
  ASSERT_TRUE(kubejson::AppendClusterJson(testing::ListJson(items), &objects).ok());
  inventory::Inventory inventory;
  inventory.ReplaceCluster(std::move(objects));
  Service service(&inventory, {});
  PodJson pod{.name = "p", .uid = "u", .containers = {WholeGpus("c", 2)}};
  std::string reply = service.Filter(ArgsWithNames(pod.ToJson(), {"scattered", "paired"}));
  EXPECT_THAT(testing::KeptNodes(reply), ::testing::ElementsAre("paired"));
  EXPECT_THAT(reply, ::testing::HasSubstr("no NVLink-connected set of 2 free GPUs (free: GPU1, GPU3)"));
  // Two containers of one GPU each: the device plugin allocates each alone, links do not matter.
  PodJson two{.name = "q", .uid = "q", .containers = {WholeGpus("a", 1), WholeGpus("b", 1)}};
  EXPECT_THAT(testing::KeptNodes(service.Filter(ArgsWithNames(two.ToJson(), {"scattered", "paired"}))),
              ::testing::ElementsAre("scattered", "paired"));
  // Alone, "scattered" is kept: no offered node is better, and the pod still runs there.
  EXPECT_THAT(testing::KeptNodes(service.Filter(ArgsWithNames(pod.ToJson(), {"scattered"}))), ::testing::ElementsAre("scattered"));
}

}  // namespace service_test
}  // namespace gpusched::extender
