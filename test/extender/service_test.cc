#include "gpusched/extender/service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::extender {
namespace {

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

}  // namespace
}  // namespace gpusched::extender
