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
namespace dra_owner_live_test {

using testing::Eventually;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string BindError(const std::string& reply) {
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(reply, &d).ok()) << reply;
  return d["Error"].GetString();
}

// The requests other than reads that `api` received: "METHOD target".
std::vector<std::string> WritesTo(const testing::FakeApiServer& api) {
  std::vector<std::string> out;
  for (const auto& r : api.Requests()) {
    if (r.method != "GET") out.push_back(r.method + " " + r.target);
  }
  return out;
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

  std::vector<std::string> Writes() const { return WritesTo(api); }
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
  EXPECT_THAT(writes[1].body, HasSubstr(R"("allocationTimestamp":"20)"));  // as kube-scheduler stamps it
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

// A bind that fails after the claims were allocated gives them back, as kube-scheduler's
// Unreserve: the pod leaves reservedFor, the allocation and the finalizer go; the retry binds.
TEST(DraOwnerLive, AFailedBindingUnreservesAndDeallocatesTheClaimsItAllocated) {
  Fixture f;
  f.api.ClearRequests();
  f.api.FailNext("POST", "/api/v1/namespaces/ml/pods/trainer/binding", 422);
  f.replica->service->Filter(testing::ArgsWithNames(f.pod, {"dra-a"}));
  EXPECT_THAT(BindError(f.replica->service->Bind(testing::BindJson("trainer", "ml", "trainer", "dra-a"))), HasSubstr("binding"));
  std::string claims = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/train";
  EXPECT_THAT(f.Writes(), ElementsAre("PATCH " + claims, "PATCH " + claims + "/status", "POST /api/v1/namespaces/ml/pods/trainer/binding",
                                      "PATCH " + claims + "/status", "PATCH " + claims));
  std::string claim = *f.api.Get("resourceclaims", "ml", "train");
  EXPECT_THAT(claim, ::testing::Not(HasSubstr(R"("allocation":)")));
  EXPECT_THAT(claim, ::testing::Not(HasSubstr("delete-protection")));
  EXPECT_THAT(claim, ::testing::Not(HasSubstr(R"("uid":"trainer")")));
  ASSERT_TRUE(Eventually([&] { return !f.replica->inventory->Snapshot()->dra().FindClaim("ml", "train")->allocation.has_value(); }));
  EXPECT_EQ(BindError(f.replica->service->Bind(testing::BindJson("trainer", "ml", "trainer", "dra-a"))), "");
  EXPECT_THAT(*f.api.Get("resourceclaims", "ml", "train"), HasSubstr(R"("allocation":)"));
}

// A claim shared with a consumer that is not a pod: a failed bind takes only its pod out of
// reservedFor, and the other entry keeps its apiGroup; the allocation stays.
TEST(DraOwnerLive, AFailedBindLeavesASharedClaimsOtherConsumersAsTheyWere) {
  testing::FakeApiServer api;
  api.Put("nodes", testing::DraNode("dra-a"));
  api.Put("resourceslices", testing::GpuSlice("dra-a", 4));
  api.Put("deviceclasses", std::string(testing::kGpuClass));
  std::string claim = testing::Claim("shared", testing::ClaimSpec(2, ""), {"dra-a/gpu-0", "dra-a/gpu-1"}, {"x"});
  std::string pod_ref = R"({"resource":"pods","name":"x","uid":"x"})";
  std::string jobset = R"({"apiGroup":"example.com","resource":"jobsets","name":"j","uid":"j1"})";
  claim.replace(claim.find(pod_ref), pod_ref.size(), jobset);
  api.Put("resourceclaims", claim);
  std::string pod = api.Put("pods", testing::ClaimPod("trainer", "shared"));
  testing::LiveReplica replica(api.url(), extender::ServiceOptions{}, inventory::InventoryOptions{}, kubeapi::ApiBinderOptions{},
                               /*dra_owner=*/true);
  ASSERT_TRUE(replica.sync->WaitSynced(std::chrono::seconds(10)));
  ASSERT_TRUE(Eventually([&] { return replica.inventory->Snapshot()->dra().FindClaim("ml", "shared") != nullptr; }));
  api.FailNext("POST", "/api/v1/namespaces/ml/pods/trainer/binding", 422);
  replica.service->Filter(testing::ArgsWithNames(pod, {"dra-a"}));
  EXPECT_THAT(BindError(replica.service->Bind(testing::BindJson("trainer", "ml", "trainer", "dra-a"))), HasSubstr("binding"));
  std::string now = *api.Get("resourceclaims", "ml", "shared");
  EXPECT_THAT(now, HasSubstr(R"("reservedFor":[)" + jobset + "]"));
  EXPECT_THAT(now, HasSubstr(R"("allocation":)"));
}

// KEP 5004 in owner mode: a pod asking nvidia.com/gpu on an nvidia-dra node without device-plugin
// capacity gets its special claim as kube-scheduler's PreBind would write it: created (generated
// name, the pod as controlling owner, finalizer, annotation, one ExactCount request), allocated and
// reserved on the status subresource at the created resourceVersion, named in the pod's status,
// then the Binding.
struct ExtendedFixture {
  testing::FakeApiServer api;
  std::unique_ptr<testing::LiveReplica> replica;
  std::string pod;

  // The pending pod ml/w has `containers` and `init_containers`; node dra-a has 4 GPUs.
  explicit ExtendedFixture(std::vector<testing::ContainerJson> containers = {testing::WholeGpus("main", 2)},
                           std::vector<testing::ContainerJson> init_containers = {}) {
    api.Put("nodes", testing::DraNode("dra-a"));
    api.Put("resourceslices", testing::GpuSlice("dra-a", 4));
    api.Put("deviceclasses", std::string(testing::kGpuClass));
    pod = api.Put("pods", testing::PodJson{.name = "w", .namespace_name = "ml", .uid = "w", .containers = std::move(containers),
                                           .init_containers = std::move(init_containers)}
                              .ToJson());
    replica = std::make_unique<testing::LiveReplica>(api.url(), extender::ServiceOptions{}, inventory::InventoryOptions{},
                                                     kubeapi::ApiBinderOptions{}, /*dra_owner=*/true);
    EXPECT_TRUE(replica->sync->WaitSynced(std::chrono::seconds(10)));
    EXPECT_TRUE(Eventually([&] { return replica->inventory->Snapshot()->dra().classes().size() == 1; }));
    api.ClearRequests();
  }

  std::vector<std::string> Writes() const { return WritesTo(api); }
  std::string Body(const std::string& method, const std::string& target) const {
    for (const auto& r : api.Requests()) {
      if (r.method == method && r.target == target) return r.body;
    }
    return "";
  }
  std::string Bind() {
    replica->service->Filter(testing::ArgsWithNames(pod, {"dra-a"}));
    return BindError(replica->service->Bind(testing::BindJson("w", "ml", "w", "dra-a")));
  }
};

TEST(DraOwnerLive, AnExtendedResourcePodGetsItsSpecialClaimCreatedAllocatedAndNamedInItsStatus) {
  ExtendedFixture f;
  EXPECT_EQ(f.Bind(), "");
  std::vector<std::string> claims = f.api.Objects("resourceclaims");
  ASSERT_EQ(claims.size(), 1u);
  rapidjson::Document claim;
  ASSERT_TRUE(json::Parse(claims[0], &claim).ok());
  std::string name = claim["metadata"]["name"].GetString();
  EXPECT_THAT(name, ::testing::StartsWith("w-extended-resources-"));
  std::string base = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims";
  EXPECT_THAT(f.Writes(), ElementsAre("POST " + base, "PATCH " + base + "/" + name + "/status", "PATCH /api/v1/namespaces/ml/pods/w/status",
                                      "POST /api/v1/namespaces/ml/pods/w/binding"));
  std::string created = f.Body("POST", base);
  EXPECT_THAT(created, HasSubstr(R"("generateName":"w-extended-resources-")"));
  EXPECT_THAT(created, HasSubstr(R"("annotations":{"resource.kubernetes.io/extended-resource-claim":"true"})"));
  EXPECT_THAT(created, HasSubstr(R"("ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"w","uid":"w","controller":true}])"));
  EXPECT_THAT(created, HasSubstr(R"("requests":[{"name":"container-0-request-0","exactly":{"deviceClassName":"gpu.nvidia.com","allocationMode":"ExactCount","count":2}}])"));
  EXPECT_THAT(f.Body("PATCH", base + "/" + name + "/status"), HasSubstr(R"("reservedFor":[{"resource":"pods","name":"w","uid":"w"}])"));
  EXPECT_THAT(claims[0], HasSubstr(R"("allocation":)"));
  std::string pod = *f.api.Get("pods", "ml", "w");
  EXPECT_THAT(pod, HasSubstr(R"("extendedResourceClaimStatus":{"resourceClaimName":")" + name +
                             R"(","requestMappings":[{"containerName":"main","resourceName":"nvidia.com/gpu","requestName":"container-0-request-0"}]})"));
  // The watch brings claim and pod back: the ledger books the two devices under nvidia-dra.
  ASSERT_TRUE(Eventually([&] {
    std::optional<Allocation> a = f.replica->inventory->AllocationOf("w");
    return a && a->mode == NodeMode::kNvidiaDra && a->placement.devices.size() == 2;
  }));
}

// Issue 31 §4: init container 3 GPUs, app containers 2 + 2 on a node of 4. As kube-scheduler's
// PreBind, the special claim asks 2 + 2 (the init container uses the app containers' devices) and
// the pod's status maps the init container to both requests.
TEST(DraOwnerLive, AnInitContainerUsesTheAppContainersRequestsOfTheSpecialClaim) {
  ExtendedFixture f({testing::WholeGpus("a", 2), testing::WholeGpus("b", 2)}, {testing::WholeGpus("warmup", 3)});
  EXPECT_EQ(f.Bind(), "");
  std::vector<std::string> claims = f.api.Objects("resourceclaims");
  ASSERT_EQ(claims.size(), 1u);
  EXPECT_THAT(f.Body("POST", "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims"),
              HasSubstr(R"("requests":[{"name":"container-1-request-0","exactly":{"deviceClassName":"gpu.nvidia.com","allocationMode":"ExactCount","count":2}},)"
                        R"({"name":"container-2-request-0","exactly":{"deviceClassName":"gpu.nvidia.com","allocationMode":"ExactCount","count":2}}])"));
  EXPECT_THAT(*f.api.Get("pods", "ml", "w"),
              HasSubstr(R"("requestMappings":[{"containerName":"a","resourceName":"nvidia.com/gpu","requestName":"container-1-request-0"},)"
                        R"({"containerName":"b","resourceName":"nvidia.com/gpu","requestName":"container-2-request-0"},)"
                        R"({"containerName":"warmup","resourceName":"nvidia.com/gpu","requestName":"container-1-request-0"},)"
                        R"({"containerName":"warmup","resourceName":"nvidia.com/gpu","requestName":"container-2-request-0"}]})"));
  ASSERT_TRUE(Eventually([&] {
    std::optional<Allocation> a = f.replica->inventory->AllocationOf("w");
    return a && a->mode == NodeMode::kNvidiaDra && a->placement.devices.size() == 4;
  }));
}

TEST(DraOwnerLive, ASpecialClaimWhosePodCannotRecordItIsReleasedAndDeletedAndTheRetryBinds) {
  ExtendedFixture f;
  f.api.FailNext("PATCH", "/api/v1/namespaces/ml/pods/w/status", 500);
  EXPECT_THAT(f.Bind(), HasSubstr("recording claim w-extended-resources-"));
  std::vector<std::string> writes = f.Writes();
  ASSERT_EQ(writes.size(), 6u) << ::testing::PrintToString(writes);
  EXPECT_THAT(writes[3], ::testing::EndsWith("/status"));   // allocation and reservation cleared
  EXPECT_THAT(writes[4], ::testing::StartsWith("PATCH "));  // finalizer removed
  EXPECT_THAT(writes[5], ::testing::StartsWith("DELETE "));
  EXPECT_TRUE(f.api.Objects("resourceclaims").empty());
  EXPECT_FALSE(f.replica->inventory->AllocationOf("w").has_value());
  // kube-scheduler retries the pod: it binds, with one claim.
  f.api.ClearRequests();
  EXPECT_EQ(f.Bind(), "");
  EXPECT_EQ(f.api.Objects("resourceclaims").size(), 1u);
}

}  // namespace dra_owner_live_test
}  // namespace gpusched
