// Room for a pod group over a real socket: POST /debug/defrag?podGroup= moves what must move for
// every member at once (where room for each alone needs no move), as JSON or a table, a dry run;
// GET /explain?podGroup= says which evictions of lower priority would make room; errors named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/json/json.h"
#include "http_client.h"
#include "test_server.h"

namespace gpusched::testing {
namespace group_defrag_http_test {

using ::testing::HasSubstr;

constexpr std::string_view kTrain = R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup",)"
                                    R"("metadata":{"name":"train","namespace":"ml"},"spec":{"schedulingPolicy":{"gang":{"minCount":2}}}})";

// A pending member of ml/train asking 90% of one GPU.
std::string Member(const std::string& name, int32_t priority) {
  return PodJson{.name = name, .namespace_name = "ml", .uid = "uid-" + name, .containers = {Mgpu("s", 90, 4096)},
                 .priority = priority, .spec_extra = R"("schedulingGroup":{"podGroupName":"train"})"}
      .ToJson();
}

// A running pod of a ReplicaSet taking `core` percent of GPU `gpu`.
std::string Share(const std::string& name, const std::string& node, int core, int gpu) {
  return PodJson{.name = name, .namespace_name = "ml", .uid = "uid-" + name, .node = node, .phase = "Running",
                 .containers = {Mgpu("s", core, 4096)}, .annotations = {{"vke.volcengine.com/gpu-index-container-s", std::to_string(gpu)}},
                 .labels = {{"app", name}}, .priority = 0, .controller_uid = "rs-" + name}
      .ToJson();
}

// m0: GPU 0 free, GPU 1 30% taken by busy; m1: one GPU 60% taken. Each member alone fits on
// m0's GPU 0; both fit once busy moves to m1.
std::string Cluster(int32_t member_priority = 0) {
  return ListJson({MgpuNode("m0", 2, 24576).ToJson(), MgpuNode("m1", 1, 24576).ToJson(), Share("busy", "m0", 30, 1),
                   Share("other", "m1", 60, 0), std::string(kTrain), Member("w0", member_priority),
                   Member("w1", member_priority)});
}

rapidjson::Document Parse(const std::string& body) {
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(body, &d).ok()) << body;
  return d;
}

TEST(GroupDefragHttp, OneMoveMakesRoomForBothMembersWhereEachAloneNeedsNone) {
  TestServer server(Cluster());
  HttpClient client(server.port());
  HttpReply alone = client.Post("/debug/defrag", Member("w1", 0));
  ASSERT_EQ(alone.status, 200) << alone.body;
  EXPECT_EQ(Parse(alone.body)["moves"].Size(), 0u);
  HttpReply r = client.Post("/debug/defrag?podGroup=ml/train", "");
  ASSERT_EQ(r.status, 200) << r.body;
  rapidjson::Document d = Parse(r.body);
  ASSERT_TRUE(d["fits"].GetBool()) << r.body;
  ASSERT_EQ(d["moves"].Size(), 1u);
  EXPECT_EQ(std::string(d["moves"][0]["pod"].GetString()), "ml/busy");
  EXPECT_EQ(std::string(d["moves"][0]["to"].GetString()), "m1");
  ASSERT_EQ(d["plan"].Size(), 2u);
  EXPECT_EQ(std::string(d["plan"][0]["node"].GetString()), "m0");
  EXPECT_EQ(std::string(d["plan"][1]["node"].GetString()), "m0");
  EXPECT_NE(std::string(d["plan"][0]["gpus"].GetString()), std::string(d["plan"][1]["gpus"].GetString()));
  EXPECT_TRUE(d["applied"].IsNull());
  EXPECT_EQ(server.inventory().AllocationOf("uid-busy")->node_name, "m0");  // a dry run
  HttpReply text = client.Get("/debug/defrag?podGroup=ml/train&format=text");
  EXPECT_THAT(text.body, HasSubstr("pod group ml/train: its 2 pending members fit together on 1 node after 1 move"));
  EXPECT_THAT(text.body, HasSubstr("dry run"));
}

TEST(GroupDefragHttp, ExplainSaysWhichEvictionsOfLowerPriorityWouldMakeRoom) {
  TestServer equal(Cluster(0));
  rapidjson::Document d = Parse(HttpClient(equal.port()).Get("/explain?podGroup=ml/train").body);
  ASSERT_FALSE(d["fits"].GetBool());
  ASSERT_TRUE(d["wouldFitAfter"].IsObject());
  EXPECT_FALSE(d["wouldFitAfter"]["fits"].GetBool());  // nothing runs below the members' priority
  EXPECT_THAT(std::string(d["wouldFitAfter"]["reason"].GetString()), HasSubstr("1 of 2 members have room"));
  TestServer higher(Cluster(100));
  HttpClient client(higher.port());
  rapidjson::Document e = Parse(client.Get("/explain?podGroup=ml/train").body);
  ASSERT_TRUE(e["wouldFitAfter"]["fits"].GetBool());
  ASSERT_EQ(e["wouldFitAfter"]["evict"].Size(), 1u);
  EXPECT_EQ(std::string(e["wouldFitAfter"]["evict"][0]["pod"].GetString()), "ml/busy");
  EXPECT_EQ(e["wouldFitAfter"]["cost"]["victims"].GetInt(), 1);
  EXPECT_THAT(client.Get("/explain?podGroup=ml/train&format=text").body,
              HasSubstr("they would fit together after evicting 1 pod (0 PodDisruptionBudget violations): ml/busy on m0"));
}

TEST(GroupDefragHttp, AGroupThatFitsHasNoEvictionsToExplain) {
  TestServer server(ListJson({MgpuNode("m0", 2, 24576).ToJson(), std::string(kTrain), Member("w0", 0), Member("w1", 0)}));
  rapidjson::Document d = Parse(HttpClient(server.port()).Get("/explain?podGroup=ml/train").body);
  EXPECT_TRUE(d["fits"].GetBool());
  EXPECT_TRUE(d["wouldFitAfter"].IsNull());
}

// A gang already planned (its slots held): its slots are room for its members, so that room for
// the group needs no move.
TEST(GroupDefragHttp, APlannedGangsSlotsAreRoomForItsMembers) {
  TestServer server(ListJson({MgpuNode("m0", 2, 24576).ToJson(), std::string(kTrain), Member("w0", 0), Member("w1", 0)}));
  HttpClient client(server.port());
  ASSERT_EQ(client.Post("/filter", ArgsWithNames(Member("w0", 0), {"m0"})).status, 200);  // plans and holds the gang
  ASSERT_THAT(client.Get("/explain?podGroup=ml/train&format=text").body, HasSubstr("HELD ON"));
  rapidjson::Document d = Parse(client.Post("/debug/defrag?podGroup=ml/train", "").body);
  ASSERT_TRUE(d["fits"].GetBool()) << d["reason"].GetString();
  EXPECT_EQ(d["moves"].Size(), 0u);
}

// Rack r1: m0 (one free GPU); rack r2: m1 (one free GPU) and m2 (busy takes 30%). Unconstrained,
// the two 90% members fit on m0 and m1 as they are; inside one rack only r2 can hold both, once
// busy moves (to m0: a moved pod may land in any rack).
std::string Racks(bool constrained) {
  auto rack = [](testing::NodeJson n, const char* r) {
    n.extra_labels["rack"] = r;
    return n.ToJson();
  };
  std::string group = R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"train","namespace":"ml"},)"
                      R"("spec":{"schedulingPolicy":{"gang":{"minCount":2}})";
  group += constrained ? R"(,"schedulingConstraints":{"topology":[{"key":"rack"}]}}})" : "}}";
  return ListJson({rack(MgpuNode("m0", 1, 24576), "r1"), rack(MgpuNode("m1", 1, 24576), "r2"), rack(MgpuNode("m2", 1, 24576), "r2"),
                   Share("busy", "m2", 30, 0), group, Member("w0", 0), Member("w1", 0)});
}

TEST(GroupDefragHttp, AGroupThatMustRunInOneDomainGetsRoomInsideOne) {
  TestServer free(Racks(false));
  rapidjson::Document spread = Parse(HttpClient(free.port()).Post("/debug/defrag?podGroup=ml/train", "").body);
  ASSERT_TRUE(spread["fits"].GetBool());
  EXPECT_EQ(spread["moves"].Size(), 0u);
  EXPECT_FALSE(spread.HasMember("domain"));
  TestServer racked(Racks(true));
  HttpClient client(racked.port());
  HttpReply r = client.Post("/debug/defrag?podGroup=ml/train", "");
  ASSERT_EQ(r.status, 200) << r.body;
  rapidjson::Document d = Parse(r.body);
  ASSERT_TRUE(d["fits"].GetBool()) << r.body;
  EXPECT_EQ(std::string(d["domain"].GetString()), "r2");
  ASSERT_EQ(d["moves"].Size(), 1u);
  EXPECT_EQ(std::string(d["moves"][0]["pod"].GetString()), "ml/busy");
  EXPECT_EQ(std::string(d["moves"][0]["to"].GetString()), "m0");
  for (const auto& slot : d["plan"].GetArray()) EXPECT_NE(std::string(slot["node"].GetString()), "m0");
  EXPECT_THAT(client.Post("/debug/defrag?podGroup=ml/train&format=text", "").body, HasSubstr("in domain r2 after 1 move"));
  // Explain plans inside one rack too: the members do not fit there as they are.
  rapidjson::Document e = Parse(client.Get("/explain?podGroup=ml/train").body);
  EXPECT_FALSE(e["fits"].GetBool());
  EXPECT_THAT(std::string(e["reason"].GetString()), HasSubstr("in no domain of rack: rack=r1:"));
  EXPECT_FALSE(e.HasMember("notJudged"));
}

// A member of ml/train whose claim `claim` (named, pending) asks its GPUs.
std::string ClaimMember(const std::string& name, const std::string& claim, int32_t priority = 0) {
  std::string pod = ClaimPod(name, claim, "", priority);
  return pod.insert(pod.find(R"("spec":{)") + 8, R"("schedulingGroup":{"podGroupName":"train"},)");
}

// nvidia-dra nodes a, b, c of two GPUs: pa holds a/gpu-0, pb b/gpu-0 (claims generated for them,
// ReplicaSets recreate them); c is free. Two members ask two GPUs each through claims: alone each
// fits on c; together the second needs pa moved to b.
TEST(GroupDefragHttp, ClaimMembersGetRoomTogetherOnTheClaimsTheEarlierMembersLeft) {
  std::vector<std::string> items = {DraNode("a"), DraNode("b"), DraNode("c"), GpuSlice("a", 2), GpuSlice("b", 2), GpuSlice("c", 2),
                                    std::string(kGpuClass), std::string(kTrain), Claim("big0", ClaimSpec(2, "")),
                                    Claim("big1", ClaimSpec(2, "")), ClaimMember("g0", "big0"), ClaimMember("g1", "big1")};
  for (const auto& [name, node] : {std::pair{"pa", "a"}, std::pair{"pb", "b"}}) {
    items.push_back(GeneratedClaim(std::string("c-") + name, name, ClaimSpec(1, ""), {std::string(node) + "/gpu-0"}));
    items.push_back(TemplateClaimPod(name, std::string("c-") + name, node, std::string("rs-") + name));
  }
  TestServer server(ListJson(items));
  HttpClient client(server.port());
  rapidjson::Document alone = Parse(client.Post("/debug/defrag", ClaimMember("g1", "big1")).body);
  ASSERT_TRUE(alone["fits"].GetBool());
  EXPECT_EQ(alone["moves"].Size(), 0u);
  HttpReply r = client.Post("/debug/defrag?podGroup=ml/train", "");
  ASSERT_EQ(r.status, 200) << r.body;
  rapidjson::Document d = Parse(r.body);
  ASSERT_TRUE(d["fits"].GetBool()) << r.body;
  ASSERT_EQ(d["moves"].Size(), 1u);
  EXPECT_EQ(std::string(d["moves"][0]["from"].GetString()), std::string(d["moves"][0]["pod"].GetString()) == "ml/pa" ? "a" : "b");
  std::set<std::string> nodes;
  for (const auto& slot : d["plan"].GetArray()) nodes.insert(slot["node"].GetString());
  EXPECT_EQ(nodes.size(), 2u);  // one member on c, the other on the node the move emptied
  EXPECT_TRUE(nodes.contains("c"));
  EXPECT_NE(std::string(d["plan"][0]["gpus"].GetString()), "");
}

// nvidia-dra nodes a and b of two GPUs, pa and pb (priority 0) holding one on each: two
// 2-GPU claim members of priority 100 fit together only after both are evicted, one per node.
TEST(GroupDefragHttp, ExplainWeighsEvictionsForClaimMembersOnTheClaimsTheEarlierOnesFreed) {
  std::vector<std::string> items = {DraNode("a"), DraNode("b"), GpuSlice("a", 2), GpuSlice("b", 2), std::string(kGpuClass),
                                    std::string(kTrain), Claim("big0", ClaimSpec(2, "")), Claim("big1", ClaimSpec(2, "")),
                                    ClaimMember("g0", "big0", 100), ClaimMember("g1", "big1", 100)};
  for (const auto& [name, node] : {std::pair{"pa", "a"}, std::pair{"pb", "b"}}) {
    items.push_back(GeneratedClaim(std::string("c-") + name, name, ClaimSpec(1, ""), {std::string(node) + "/gpu-0"}));
    items.push_back(TemplateClaimPod(name, std::string("c-") + name, node, std::string("rs-") + name));
  }
  TestServer server(ListJson(items));
  rapidjson::Document d = Parse(HttpClient(server.port()).Get("/explain?podGroup=ml/train").body);
  ASSERT_FALSE(d["fits"].GetBool());
  ASSERT_TRUE(d["wouldFitAfter"].IsObject());
  ASSERT_TRUE(d["wouldFitAfter"]["fits"].GetBool()) << d["wouldFitAfter"]["reason"].GetString();
  std::set<std::string> evicted, nodes;
  for (const auto& v : d["wouldFitAfter"]["evict"].GetArray()) evicted.insert(v["pod"].GetString());
  for (const auto& slot : d["wouldFitAfter"]["plan"].GetArray()) nodes.insert(slot["node"].GetString());
  EXPECT_EQ(evicted, (std::set<std::string>{"ml/pa", "ml/pb"}));  // one eviction frees one node: both needed
  EXPECT_EQ(nodes, (std::set<std::string>{"a", "b"}));
}

TEST(GroupDefragHttp, BadRequestsAreNamedAndTheServerKeepsServing) {
  TestServer server(Cluster());
  HttpClient client(server.port());
  HttpReply unknown = client.Post("/debug/defrag?podGroup=ml/nothing", "");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_THAT(unknown.body, HasSubstr("pod group ml/nothing is not known"));
  HttpReply bare = client.Post("/debug/defrag?podGroup=train", "");
  EXPECT_EQ(bare.status, 400);
  EXPECT_THAT(bare.body, HasSubstr("podGroup \"train\": want namespace/name"));
  HttpReply both = client.Post("/debug/defrag?podGroup=ml/train&targetFrag=1", "");
  EXPECT_EQ(both.status, 400);
  EXPECT_THAT(both.body, HasSubstr("one of the three"));
  HttpReply replica = client.Post("/debug/defrag?targetFrag=1&replica=r1", "");
  EXPECT_EQ(replica.status, 400);
  EXPECT_THAT(replica.body, HasSubstr("replica: only with podGroup"));
  HttpReply apply = client.Post("/debug/defrag?podGroup=ml/train&apply=true", "");
  EXPECT_EQ(apply.status, 409);
  EXPECT_THAT(apply.body, HasSubstr("needs a live cluster"));
  EXPECT_EQ(client.Get("/healthz").status, 200);
}

}  // namespace group_defrag_http_test
}  // namespace gpusched::testing
