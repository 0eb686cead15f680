// DRA owner mode against the in-process API server: bind writes the claim's finalizer and
// status (allocation, reservedFor) with resourceVersion preconditions, then the Binding.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "dra_json.h"
#include "fake_apiserver.h"
#include "gpusched/json/json.h"
#include "live_replica.h"

namespace gpusched {
namespace {

using testing::Eventually;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string BindError(const std::string& reply) {
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(reply, &d).ok()) << reply;
  return d["Error"].GetString();
}

struct Fixture {
  testing::FakeApiServer api;
  std::unique_ptr<testing::LiveReplica> replica;
  std::string pod;

  Fixture() {
    api.Put("nodes", testing::DraNode("dra-a"));
    api.Put("resourceslices", testing::GpuSlice("dra-a", 4));
    api.Put("deviceclasses", std::string(testing::kGpuClass));
    api.Put("resourceclaims", testing::Claim("train", testing::ClaimSpec(2, "")));
    pod = api.Put("pods", testing::ClaimPod("trainer", "train"));
    replica = std::make_unique<testing::LiveReplica>(api.url(), extender::ServiceOptions{}, inventory::InventoryOptions{},
                                                     kubeapi::ApiBinderOptions{}, /*dra_owner=*/true);
    EXPECT_TRUE(replica->sync->WaitSynced(std::chrono::seconds(10)));
    EXPECT_TRUE(Eventually([&] { return replica->inventory->Snapshot()->dra().FindClaim("ml", "train") != nullptr; }));
  }

  std::vector<std::string> Writes() const {
    std::vector<std::string> out;
    for (const auto& r : api.Requests()) {
      if (r.method != "GET") out.push_back(r.method + " " + r.target);
    }
    return out;
  }
};

TEST(DraOwnerLive, BindWritesFinalizerThenAllocationAndReservedForThenTheBinding) {
  Fixture f;
  std::string rv = f.replica->inventory->Snapshot()->dra().FindClaim("ml", "train")->resource_version;
  f.api.ClearRequests();
  f.replica->service->Filter(testing::ArgsWithNames(f.pod, {"dra-a"}));
  EXPECT_EQ(BindError(f.replica->service->Bind(testing::BindJson("trainer", "ml", "trainer", "dra-a"))), "");
  EXPECT_THAT(f.Writes(), ElementsAre("PATCH /apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/train",
                                      "PATCH /apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/train/status",
                                      "POST /api/v1/namespaces/ml/pods/trainer/binding"));
  std::vector<testing::RecordedRequest> writes;
  for (const auto& r : f.api.Requests()) {
    if (r.method == "PATCH") writes.push_back(r);
  }
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[0].body, R"({"metadata":{"resourceVersion":")" + rv + R"(","finalizers":["resource.kubernetes.io/delete-protection"]}})");
  EXPECT_THAT(writes[1].body, HasSubstr(R"("status":{"allocation":{"devices":{"results":[{"request":"gpus","driver":"gpu.nvidia.com","pool":"dra-a","device":"gpu-0"},)"));
  EXPECT_THAT(writes[1].body, HasSubstr(R"("reservedFor":[{"resource":"pods","name":"trainer","uid":"trainer"}])"));
  // The API server holds it; the watch brings it back and the ledger books the devices.
  EXPECT_THAT(*f.api.Get("resourceclaims", "ml", "train"), HasSubstr(R"("allocation":)"));
  ASSERT_TRUE(Eventually([&] {
    std::optional<Allocation> a = f.replica->inventory->AllocationOf("trainer");
    return a && a->mode == NodeMode::kNvidiaDra && a->placement.devices.size() == 2;
  }));
}

TEST(DraOwnerLive, AClaimChangedMeanwhileIsReadAgainAndAllocatedOnce) {
  Fixture f;
  f.replica->service->Filter(testing::ArgsWithNames(f.pod, {"dra-a"}));
  f.api.FailNext("PATCH", "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/train/status", 409);
  EXPECT_EQ(BindError(f.replica->service->Bind(testing::BindJson("trainer", "ml", "trainer", "dra-a"))), "");
  std::string claim = *f.api.Get("resourceclaims", "ml", "train");
  EXPECT_THAT(claim, HasSubstr(R"("allocation":)"));
  // One finalizer, one reservation.
  EXPECT_EQ(claim.find("delete-protection"), claim.rfind("delete-protection"));
  EXPECT_EQ(claim.find(R"("uid":"trainer")"), claim.rfind(R"("uid":"trainer")"));
}

}  // namespace
}  // namespace gpusched
