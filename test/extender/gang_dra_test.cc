// Gangs whose members get their GPUs through DRA: members with ResourceClaims, and members whose
// nvidia.com/gpu DRA serves on nvidia-dra nodes (KEP 5004), are planned with the rest of their
// gang, each slot holding the devices of the DRA planner's choice, disjoint from its siblings',
// and refused to every other pod; a gang mixing mGPU shares and claims is one plan.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/extender/gang_holds.h"
#include "gpusched/extender/service.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::extender {
namespace gang_dra_test {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using namespace gpusched::testing;

constexpr std::string_view kGroup =
    R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"train","namespace":"ml"},)"
    R"("spec":{"schedulingPolicy":{"gang":{"minCount":3}}}})";

// `pod` as a member of ml/train (1.37's spec.schedulingGroup).
std::string InGroup(std::string pod) {
  size_t spec = pod.find(R"("spec":{)");
  return pod.insert(spec + 8, R"("schedulingGroup":{"podGroupName":"train"},)");
}

const std::vector<std::string> kMembers = {"w0", "w1", "w2"};

// A pending member `name` whose claim c-<name> a template generated.
std::string ClaimMember(const std::string& name) { return InGroup(TemplateClaimPod(name, "c-" + name, "")); }

// A pending member `name` asking 60% of one GPU.
std::string ShareMember(const std::string& name) {
  return InGroup(PodJson{.name = name, .namespace_name = "ml", .uid = name, .containers = {Mgpu("s", 60, 4096)}}.ToJson());
}

class GangDraTest : public ::testing::Test {
 protected:
  void Load(std::vector<std::string> objects) {
    objects.push_back(std::string(kGpuClass));
    objects.push_back(std::string(kGroup));
    ClusterObjects c;
    for (const std::string& o : objects) ASSERT_TRUE(kubejson::AppendClusterJson(o, &c).ok()) << o;
    inventory_.ReplaceCluster(std::move(c));
    service_ = std::make_unique<Service>(&inventory_, ServiceOptions{});
  }
  std::vector<std::string> Kept(const std::string& pod, const std::vector<std::string>& nodes) {
    return KeptNodes(service_->Filter(ArgsWithNames(pod, nodes)));
  }
  // The devices held on `node` for each holder.
  std::map<std::string, std::vector<std::string>> Held(const std::string& node) {
    std::map<std::string, std::vector<std::string>> out;
    for (const Allocation& h : inventory_.Snapshot()->FindNode(node)->holds) out[h.pod_uid] = h.placement.devices;
    return out;
  }

  inventory::Inventory inventory_;
  std::unique_ptr<Service> service_;
};

// Three members of 2 GPUs each on nodes of 4 and 2 GPUs: every member keeps one node, two on the
// 4-GPU node with disjoint devices, and a pod outside the gang finds no GPU free.
TEST_F(GangDraTest, ClaimMembersGetDisjointDevicesAndOtherPodsAreRefusedThem) {
  std::vector<std::string> objects = {DraNode("dra-a"), GpuSlice("dra-a", 4), DraNode("dra-b"), GpuSlice("dra-b", 2),
                                      Claim("x", ClaimSpec(1, "")), ClaimPod("x", "x")};
  for (const std::string& w : kMembers) {
    objects.push_back(GeneratedClaim("c-" + std::string(w), w, ClaimSpec(2, "")));
    objects.push_back(ClaimMember(w));
  }
  Load(objects);
  std::map<std::string, int> members_on;
  for (const std::string& w : kMembers) {
    std::vector<std::string> kept = Kept(ClaimMember(w), {"dra-a", "dra-b"});
    ASSERT_THAT(kept, SizeIs(1)) << w;
    ++members_on[kept[0]];
  }
  EXPECT_EQ(members_on, (std::map<std::string, int>{{"dra-a", 2}, {"dra-b", 1}}));
  std::set<std::string> devices;
  for (const auto& [holder, held] : Held("dra-a")) {
    EXPECT_THAT(held, SizeIs(2)) << holder;
    devices.insert(held.begin(), held.end());
  }
  EXPECT_THAT(devices, SizeIs(4));  // disjoint
  EXPECT_THAT(Kept(ClaimPod("x", "x"), {"dra-a", "dra-b"}), IsEmpty());
  for (const std::string& w : kMembers) {
    std::string node = Kept(ClaimMember(w), {"dra-a", "dra-b"})[0];
    EXPECT_EQ(service_->Bind(BindJson(w, "ml", w, node)), R"({"Error":""})") << w;
  }
  EXPECT_THAT(inventory_.Snapshot()->held_nodes(), IsEmpty());  // each slot ended as its member bound
}

// Issue 33's mGPU case with a third member asking claims: the shares are planned with it, one per
// node (GPU 1 of m0 has 30% free, so both 60% members cannot go there), not judged one by one.
TEST_F(GangDraTest, AGangOfSharesAndClaimsIsOnePlan) {
  Load({MgpuNode("m0", 2, 24576).ToJson(), MgpuNode("m1", 1, 24576).ToJson(),
        PodJson{.name = "busy", .namespace_name = "ml", .uid = "busy", .node = "m0", .phase = "Running",
                .containers = {Mgpu("s", 70, 4096)}, .annotations = {{"vke.volcengine.com/gpu-index-container-s", "1"}}}
            .ToJson(),
        DraNode("dra-a"), GpuSlice("dra-a", 2), GeneratedClaim("c-w2", "w2", ClaimSpec(2, "")), ClaimMember("w2"),
        ShareMember("w0"), ShareMember("w1")});
  std::vector<std::string> all = {"m0", "m1", "dra-a"};
  std::vector<std::string> w0 = Kept(ShareMember("w0"), all);
  std::vector<std::string> w1 = Kept(ShareMember("w1"), all);
  ASSERT_THAT(w0, SizeIs(1));
  ASSERT_THAT(w1, SizeIs(1));
  EXPECT_NE(w0[0], w1[0]);
  EXPECT_THAT(Kept(ClaimMember("w2"), all), ElementsAre("dra-a"));
  EXPECT_THAT(Held("dra-a")["w2"], SizeIs(2));
}

// KEP 5004: members asking nvidia.com/gpu on nvidia-dra nodes, which DRA serves through special
// claims: their slots hold the devices those claims would get, disjoint, as claim members' do.
TEST_F(GangDraTest, MembersWhoseGpusDraServesHoldTheDevicesOfTheirSpecialClaims) {
  std::vector<std::string> objects = {DraNode("dra-a"), GpuSlice("dra-a", 4), DraNode("dra-b"), GpuSlice("dra-b", 2)};
  for (const std::string& w : kMembers) objects.push_back(InGroup(ExtendedGpuPod(w, 2)));
  Load(objects);
  std::map<std::string, int> members_on;
  for (const std::string& w : kMembers) {
    std::vector<std::string> kept = Kept(InGroup(ExtendedGpuPod(w, 2)), {"dra-a", "dra-b"});
    ASSERT_THAT(kept, SizeIs(1)) << w;
    ++members_on[kept[0]];
  }
  EXPECT_EQ(members_on, (std::map<std::string, int>{{"dra-a", 2}, {"dra-b", 1}}));
  std::set<std::string> devices;
  for (const auto& [holder, held] : Held("dra-a")) devices.insert(held.begin(), held.end());
  EXPECT_THAT(devices, SizeIs(4));
  EXPECT_THAT(Kept(ExtendedGpuPod("x", 1), {"dra-a", "dra-b"}), IsEmpty());
}

}  // namespace gang_dra_test
}  // namespace gpusched::extender
