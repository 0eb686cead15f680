// The node policy on partitionable GPUs (MIG through shared counters, dra/mig.h): each GPU's fill
// is read from its counters, and a pod asking one MIG device takes its share, so binpack fills
// the GPU that is already partitioned and spread picks the idle one, as the policies do for
// device-plugin and whole DRA GPUs.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <fstream>
#include <map>
#include <sstream>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/dra/mig.h"
#include "gpusched/extender/service.h"
#include "gpusched/json/json.h"
#include "gpusched/kubejson/objects.h"
#include "gpusched/placement/dra_planner.h"

namespace gpusched::testing {
namespace dra_partition_scoring_test {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(GPUSCHED_TEST_DATA_DIR) + "/nvidia-h200/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr std::string_view kMigClass = R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"mig.nvidia.com"},
  "spec":{"selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"}}]}})";

// A claim for one MIG device of `profile`.
std::string MigClaim(const std::string& name, const std::string& profile) {
  return fmt::format(R"({{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{{"name":"{}","namespace":"ml","uid":"uid-{}"}},
    "spec":{{"devices":{{"requests":[{{"name":"gpus","exactly":{{"deviceClassName":"mig.nvidia.com","count":1,
    "selectors":[{{"cel":{{"expression":"device.attributes['gpu.nvidia.com'].profile == '{}'"}}}}]}}}}]}}}}}})",
                     name, name, profile);
}

// h200-a and h200-b: one H200 each, partitionable; on h200-a a 3g.71gb is held by a running pod.
struct MigCluster {
  // `split`: each pool publishes its counter set in a slice of its own (Kubernetes 1.35+).
  explicit MigCluster(const std::string& policy, bool split = false) {
    StatusOr<std::vector<dra::MigProfile>> profiles =
        dra::ParseMigProfiles(Fixture("nvidia-smi-mig-lgip.txt"), Fixture("nvidia-smi-mig-lgipp.txt"));
    EXPECT_TRUE(profiles.ok()) << profiles.status().message();
    ClusterObjects c;
    std::string held;
    for (const std::string node : {"h200-a", "h200-b"}) {
      dra::ResourceSlice slice = dra::PartitionableGpuSlice(
          node, dra::MigGpu{.index = 0, .uuid = "GPU-" + node, .product = "NVIDIA H200", .memory_mib = 143771}, *profiles);
      for (const dra::Device& d : slice.devices) {
        auto profile = d.attributes.find("profile");
        if (held.empty() && profile != d.attributes.end() && profile->second.text == "3g.71gb") held = node + "/" + d.name;
      }
      if (split) {
        dra::ResourceSlice counters = slice;
        counters.name += "-counters";
        counters.devices.clear();
        counters.slice_count = slice.slice_count = 2;
        slice.shared_counters.clear();
        c.dra_objects.push_back(dra::DraObject{.kind = dra::ObjectKind::kResourceSlice, .key = counters.name, .resource_version = "1",
                                               .value = std::make_shared<const dra::ResourceSlice>(std::move(counters))});
      }
      c.dra_objects.push_back(dra::DraObject{.kind = dra::ObjectKind::kResourceSlice, .key = slice.name, .resource_version = "1",
                                             .value = std::make_shared<const dra::ResourceSlice>(std::move(slice))});
      EXPECT_TRUE(kubejson::AppendClusterJson(DraNode(node), &c).ok());
    }
    for (const std::string& o : {std::string(kMigClass), MigClaim("small", "1g.18gb"), Claim("busy", ClaimSpec(1, ""), {held}, {"r"}),
                                 ClaimPod("r", "busy", "h200-a")}) {
      EXPECT_TRUE(kubejson::AppendClusterJson(o, &c).ok()) << o;
    }
    inventory.ReplaceCluster(std::move(c));
    extender::ServiceOptions options;
    options.node_policy = policy;
    service = std::make_unique<extender::Service>(&inventory, options);
  }
  // Prioritize's scores for a pod asking one 1g.18gb.
  std::map<std::string, int64_t> Scores() {
    rapidjson::Document d;
    EXPECT_TRUE(json::Parse(service->Prioritize(ArgsWithNames(ClaimPod("p", "small"), {"h200-a", "h200-b"})), &d).ok());
    std::map<std::string, int64_t> out;
    for (const auto& h : d.GetArray()) out[h["Host"].GetString()] = h["Score"].GetInt64();
    return out;
  }
  inventory::Inventory inventory;
  std::unique_ptr<extender::Service> service;
};

TEST(DraPartitionScoring, TheViewReadsEachGpusFillFromItsCountersAndTheMigPodTakesItsShare) {
  MigCluster c("binpack");
  std::shared_ptr<const inventory::InventorySnapshot> s = c.inventory.Snapshot();
  rapidjson::Document d;
  d.Parse(ClaimPod("p", "small").c_str());
  Pod pod = kubejson::DecodePod(d, "Pod").value();
  dra::cel::ProgramCache programs;
  placement::DraPlanner planner(s->dra(), pod, &programs);
  placement::DraVerdict a = planner.Evaluate(*s->FindNode("h200-a"), /*rank=*/true);
  placement::DraVerdict b = planner.Evaluate(*s->FindNode("h200-b"), /*rank=*/true);
  ASSERT_TRUE(a.fits() && b.fits());
  ASSERT_TRUE(a.gpu_view && b.gpu_view);
  EXPECT_EQ(b.gpu_view->gpu_count, 1);
  EXPECT_EQ(b.gpu_view->gpu_free[0], 1000);  // idle
  EXPECT_GT(a.gpu_view->gpu_free[0], 300);   // a 3g.71gb taken: about half left
  EXPECT_LT(a.gpu_view->gpu_free[0], 700);
  EXPECT_EQ(a.gpus_taken, 1);
  EXPECT_GT(a.milli_taken, 50);  // a 1g.18gb: about a seventh
  EXPECT_LT(a.milli_taken, 250);
}

TEST(DraPartitionScoring, BinpackFillsThePartitionedGpuAndSpreadTakesTheIdleOne) {
  for (bool split : {false, true}) {
    std::map<std::string, int64_t> packed = MigCluster("binpack", split).Scores();
    EXPECT_GT(packed["h200-a"], packed["h200-b"]) << "split " << split;
    std::map<std::string, int64_t> spread = MigCluster("spread", split).Scores();
    EXPECT_GT(spread["h200-b"], spread["h200-a"]) << "split " << split;
  }
}

}  // namespace dra_partition_scoring_test
}  // namespace gpusched::testing
