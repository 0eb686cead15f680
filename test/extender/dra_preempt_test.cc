// Preempt and explain for pods whose GPUs come from ResourceClaims, over a real socket: victims
// are the pods whose claims hold the devices the pod would get, a claim shared with a pod that
// stays frees nothing, and the minimal set is chosen by the same order as for device-plugin GPUs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/json/json.h"
#include "http_client.h"
#include "test_server.h"

namespace gpusched::testing {
namespace dra_preempt_test {

using ::testing::HasSubstr;

// dra-a: gpu-0 held by lo-a (priority 0), gpu-1 by lo-b (5). dra-b: both GPUs held by one claim
// shared by s-lo (0) and s-hi (100). dra-c: gpu-0 held by hi (100), gpu-1 by lo-c (0). Pending:
// claims want-1 and want-2 for 1 and 2 GPUs.
std::string Cluster() {
  return ListJson({
      std::string(kGpuClass),
      DraNode("dra-a"), GpuSlice("dra-a", 2),
      Claim("lo-a", ClaimSpec(1, ""), {"dra-a/gpu-0"}, {"lo-a"}), ClaimPod("lo-a", "lo-a", "dra-a", 0),
      Claim("lo-b", ClaimSpec(1, ""), {"dra-a/gpu-1"}, {"lo-b"}), ClaimPod("lo-b", "lo-b", "dra-a", 5),
      DraNode("dra-b"), GpuSlice("dra-b", 2),
      Claim("shared", ClaimSpec(2, ""), {"dra-b/gpu-0", "dra-b/gpu-1"}, {"s-lo", "s-hi"}),
      ClaimPod("s-lo", "shared", "dra-b", 0), ClaimPod("s-hi", "shared", "dra-b", 100),
      DraNode("dra-c"), GpuSlice("dra-c", 2),
      Claim("hi", ClaimSpec(1, ""), {"dra-c/gpu-0"}, {"hi"}), ClaimPod("hi", "hi", "dra-c", 100),
      Claim("lo-c", ClaimSpec(1, ""), {"dra-c/gpu-1"}, {"lo-c"}), ClaimPod("lo-c", "lo-c", "dra-c", 0),
      Claim("want-1", ClaimSpec(1, "")), Claim("want-2", ClaimSpec(2, "")),
  });
}

class DraPreempt : public ::testing::Test {
 protected:
  std::string Preempt(const std::string& pod, const std::map<std::string, std::vector<std::string>>& offered) {
    HttpReply r = client_.Post("/preempt", PreemptMetaJson(pod, offered));
    EXPECT_EQ(r.status, 200) << r.body;
    return r.body;
  }
  static std::map<std::string, std::vector<std::string>> Placeholders() { return {{"dra-a", {}}, {"dra-b", {}}, {"dra-c", {}}}; }

  TestServer server_{Cluster()};
  HttpClient client_{server_.port()};
};

TEST_F(DraPreempt, PlaceholdersGetThePodsWhoseClaimsHoldTheDevicesLowestPriorityFirst) {
  // One GPU: on dra-a lo-b (5) is given back and lo-a goes; on dra-c only lo-c may go. dra-b's
  // claim is also reserved by s-hi: evicting s-lo frees nothing, so the node is left out.
  EXPECT_EQ(Preempt(ClaimPod("want", "want-1", "", 10), Placeholders()),
            R"({"NodeNameToMetaVictims":{"dra-a":{"Pods":[{"UID":"lo-a"}],"NumPDBViolations":0},)"
            R"("dra-c":{"Pods":[{"UID":"lo-c"}],"NumPDBViolations":0}}})");
  // Two GPUs: only dra-a can be emptied; victims by decreasing priority.
  EXPECT_EQ(Preempt(ClaimPod("want", "want-2", "", 10), Placeholders()),
            R"({"NodeNameToMetaVictims":{"dra-a":{"Pods":[{"UID":"lo-b"},{"UID":"lo-a"}],"NumPDBViolations":0}}})");
}

TEST_F(DraPreempt, PodsOfEqualOrHigherPriorityAreNeverVictimsAndAClaimFreesOnlyWhenAllItsPodsGo) {
  // At priority 5 lo-b is no candidate: two GPUs fit nowhere.
  EXPECT_EQ(Preempt(ClaimPod("want", "want-2", "", 5), Placeholders()), R"({"NodeNameToMetaVictims":{}})");
  // Above s-hi, both pods of the shared claim go on dra-b (and lo-b, hi are no longer needed
  // elsewhere than where they free room).
  std::string body = Preempt(ClaimPod("want", "want-2", "", 1000), {{"dra-b", {}}});
  EXPECT_EQ(body, R"({"NodeNameToMetaVictims":{"dra-b":{"Pods":[{"UID":"s-hi"},{"UID":"s-lo"}],"NumPDBViolations":0}}})");
}

// KEP 5004: the class maps nvidia.com/gpu, so a pod asking it is served through DRA on these
// nodes, and its victims are those whose claims hold the devices, as for a claim pod.
TEST_F(DraPreempt, AWholeGpuPodServedThroughDraEvictsThePodsWhoseClaimsHoldTheDevices) {
  std::string one = PodJson{.name = "want", .namespace_name = "ml", .uid = "want", .containers = {WholeGpus("main", 1)}, .priority = 10}.ToJson();
  EXPECT_EQ(Preempt(one, Placeholders()), R"({"NodeNameToMetaVictims":{"dra-a":{"Pods":[{"UID":"lo-a"}],"NumPDBViolations":0},)"
                                          R"("dra-c":{"Pods":[{"UID":"lo-c"}],"NumPDBViolations":0}}})");
  std::string two = PodJson{.name = "want", .namespace_name = "ml", .uid = "want", .containers = {WholeGpus("main", 2)}, .priority = 10}.ToJson();
  EXPECT_EQ(Preempt(two, Placeholders()), R"({"NodeNameToMetaVictims":{"dra-a":{"Pods":[{"UID":"lo-b"},{"UID":"lo-a"}],"NumPDBViolations":0}}})");
}

TEST_F(DraPreempt, KubeSchedulersVictimHoldingTheWrongDeviceIsReplaced) {
  // kube-scheduler offered lo-b (it cannot see devices); lo-a is cheaper and frees one GPU.
  EXPECT_EQ(Preempt(ClaimPod("want", "want-1", "", 10), {{"dra-a", {"lo-b"}}}),
            R"({"NodeNameToMetaVictims":{"dra-a":{"Pods":[{"UID":"lo-a"}],"NumPDBViolations":0}}})");
}

TEST(DraPreemptBudgets, AClaimPodWhoseEvictionViolatesABudgetIsSparedFirst) {
  // lo-a (priority 0) is the cheaper victim, but a budget allowing no disruption covers it: it is
  // given back first, and lo-b (5) goes instead.
  std::string guarded = ClaimPod("lo-a", "lo-a", "dra-a", 0);
  guarded.replace(guarded.find(R"("uid":"lo-a")"), 12, R"("uid":"lo-a","labels":{"app":"db"})");
  TestServer server(ListJson({std::string(kGpuClass), DraNode("dra-a"), GpuSlice("dra-a", 2),
                              Claim("lo-a", ClaimSpec(1, ""), {"dra-a/gpu-0"}, {"lo-a"}), guarded,
                              Claim("lo-b", ClaimSpec(1, ""), {"dra-a/gpu-1"}, {"lo-b"}), ClaimPod("lo-b", "lo-b", "dra-a", 5),
                              Claim("want-1", ClaimSpec(1, "")), Claim("want-2", ClaimSpec(2, "")),
                              BudgetJson("ml", "db", {{"app", "db"}}, 0)}));
  HttpClient client(server.port());
  EXPECT_EQ(client.Post("/preempt", PreemptMetaJson(ClaimPod("want", "want-1", "", 10), {{"dra-a", {}}})).body,
            R"({"NodeNameToMetaVictims":{"dra-a":{"Pods":[{"UID":"lo-b"}],"NumPDBViolations":0}}})");
  // Both GPUs: the violation cannot be avoided, and is counted.
  EXPECT_EQ(client.Post("/preempt", PreemptMetaJson(ClaimPod("want", "want-2", "", 10), {{"dra-a", {}}})).body,
            R"({"NodeNameToMetaVictims":{"dra-a":{"Pods":[{"UID":"lo-b"},{"UID":"lo-a"}],"NumPDBViolations":1}}})");
}

// A pod whose claim does not exist cannot be judged anywhere yet: preempt evicts nothing, filter
// answers the request's Error naming the claim (kube-scheduler retries the pod), prioritize
// scores nothing, explain refuses the pod with the same words.
TEST_F(DraPreempt, APodWhoseClaimDoesNotExistYetFitsNowhere) {
  std::string pod = ClaimPod("want", "missing", "", 10);
  EXPECT_EQ(Preempt(pod, Placeholders()), R"({"NodeNameToMetaVictims":{}})");
  const std::string why = "pod ml/want: resourceclaim ml/missing (claim gpus) not found";
  HttpReply filter = client_.Post("/filter", ArgsWithNames(pod, {"dra-a", "dra-b"}));
  EXPECT_EQ(filter.status, 200);
  EXPECT_THAT(filter.body, HasSubstr(R"("Error":")" + why + "\""));
  EXPECT_TRUE(KeptNodes(filter.body).empty()) << filter.body;
  HttpReply prioritize = client_.Post("/prioritize", ArgsWithNames(pod, {"dra-a", "dra-b"}));
  EXPECT_EQ(prioritize.status, 200);
  EXPECT_EQ(prioritize.body, "[]");
  HttpReply explain = client_.Post("/explain", pod);
  EXPECT_EQ(explain.status, 400);
  EXPECT_THAT(explain.body, HasSubstr(why));
}

// kube-scheduler never preempts for a pod with preemptionPolicy Never; should it ask anyway,
// the answer evicts nothing (the same pod without the policy gets lo-a and lo-c above).
TEST_F(DraPreempt, APodThatNeverPreemptsGetsNoVictims) {
  std::string pod = ClaimPod("want", "want-1", "", 10);
  size_t spec = pod.find(R"("spec":{)");
  ASSERT_NE(spec, std::string::npos) << pod;
  pod.insert(spec + 8, R"("preemptionPolicy":"Never",)");
  EXPECT_EQ(Preempt(pod, Placeholders()), R"({"NodeNameToMetaVictims":{}})");
}

TEST_F(DraPreempt, ExplainNamesTheCheapestEvictionForAClaimPod) {
  HttpReply r = client_.Post("/explain", ClaimPod("want", "want-1", "", 10));
  ASSERT_EQ(r.status, 200) << r.body;
  rapidjson::Document d;
  ASSERT_TRUE(json::Parse(r.body, &d).ok());
  std::map<std::string, const rapidjson::Value*> nodes;
  for (const auto& n : d["nodes"].GetArray()) nodes[n["node"].GetString()] = &n;
  ASSERT_TRUE((*nodes["dra-a"])["wouldFitAfter"].IsObject()) << r.body;
  EXPECT_EQ(std::string((*nodes["dra-a"])["wouldFitAfter"]["evict"][0]["pod"].GetString()), "ml/lo-a");
  EXPECT_EQ((*nodes["dra-a"])["wouldFitAfter"]["evict"][0]["priority"].GetInt(), 0);
  EXPECT_TRUE((*nodes["dra-b"])["wouldFitAfter"].IsNull());
  EXPECT_THAT(std::string(d["summary"].GetString()), HasSubstr("evicting 1 pod on dra-a makes room"));
}

}  // namespace dra_preempt_test
}  // namespace gpusched::testing
