// /explain?podGroup= over a real socket: a gang's members, and whether the pending ones fit
// together now, member by member where; a group by any of its APIs (a Workload's instance by its
// replica key); errors that name what was asked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "gpusched/json/json.h"
#include "http_client.h"
#include "test_server.h"

namespace gpusched::testing {
namespace group_explain_http_test {

using ::testing::HasSubstr;

constexpr std::string_view kTrain = R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup",)"
                                    R"("metadata":{"name":"train","namespace":"ml"},"spec":{"schedulingPolicy":{"gang":{"minCount":2}}}})";

// A pending member of ml/train asking 60% of one GPU, as the API server writes it (1.37).
std::string Member(const std::string& name) {
  return PodJson{.name = name, .namespace_name = "ml", .uid = "uid-" + name, .containers = {Mgpu("s", 60, 4096)},
                 .spec_extra = R"("schedulingGroup":{"podGroupName":"train"})"}
      .ToJson();
}

// m0: GPU 0 all free, GPU 1 70% taken: each member fits alone, not both. With `second`, m1 too.
std::string Cluster(bool second) {
  std::vector<std::string> objects = {
      MgpuNode("m0", 2, 24576).ToJson(),
      PodJson{.name = "busy", .namespace_name = "ml", .uid = "uid-busy", .node = "m0", .phase = "Running",
              .containers = {Mgpu("s", 70, 4096)}, .annotations = {{"vke.volcengine.com/gpu-index-container-s", "1"}}}
          .ToJson(),
      std::string(kTrain), Member("w0"), Member("w1")};
  if (second) objects.push_back(MgpuNode("m1", 1, 24576).ToJson());
  return ListJson(objects);
}

rapidjson::Document Parse(const std::string& body) {
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(body, &d).ok()) << body;
  return d;
}

TEST(GroupExplainHttp, TwoMembersThatEachFitAloneAreSaidNotToFitTogether) {
  TestServer server(Cluster(false));
  HttpClient client(server.port());
  HttpReply r = client.Get("/explain?podGroup=ml/train");
  ASSERT_EQ(r.status, 200) << r.body;
  rapidjson::Document d = Parse(r.body);
  EXPECT_EQ(std::string(d["api"].GetString()), "PodGroup");
  EXPECT_TRUE(d["declared"].GetBool());
  EXPECT_EQ(d["minCount"].GetInt(), 2);
  ASSERT_EQ(d["pending"].Size(), 2u);
  EXPECT_FALSE(d["fits"].GetBool());
  EXPECT_EQ(std::string(d["reason"].GetString()), "1 of 2 members fit; ml/w1 fits on no node beside them");
  // Each alone: explain of one member says it fits on m0.
  EXPECT_THAT(client.Get("/explain?pod=ml/w1&format=text").body, HasSubstr("1/1 nodes fit"));
}

TEST(GroupExplainHttp, WithRoomTheyAreSaidToFitMemberByMember) {
  TestServer server(Cluster(true));
  HttpClient client(server.port());
  HttpReply r = client.Get("/explain?podGroup=ml/train");
  ASSERT_EQ(r.status, 200) << r.body;
  rapidjson::Document d = Parse(r.body);
  ASSERT_TRUE(d["fits"].GetBool()) << r.body;
  ASSERT_EQ(d["plan"].Size(), 2u);
  EXPECT_NE(std::string(d["plan"][0]["node"].GetString()), std::string(d["plan"][1]["node"].GetString()));
  EXPECT_EQ(d["nodes"].GetUint(), 2u);
  HttpReply text = client.Get("/explain?podGroup=ml/train&format=text");
  EXPECT_THAT(text.body, HasSubstr("pod group ml/train (PodGroup): a gang of at least 2; 2 pending, 0 bound"));
  EXPECT_THAT(text.body, HasSubstr("the pending members fit together now, on 2 nodes"));
}

// Once a member's filter has planned the gang, the plan explained names where each slot is held:
// the same nodes, since each member's own slot is free for it in the plan explained.
TEST(GroupExplainHttp, APlannedGangShowsWhereEachMembersSlotIsHeld) {
  TestServer server(Cluster(true));
  HttpClient client(server.port());
  rapidjson::Document before = Parse(client.Get("/explain?podGroup=ml/train").body);
  ASSERT_EQ(before["plan"].Size(), 2u);
  EXPECT_FALSE(before["plan"][0].HasMember("heldOn"));
  ASSERT_EQ(client.Post("/filter", ArgsWithNames(Member("w0"), {"m0", "m1"})).status, 200);
  rapidjson::Document after = Parse(client.Get("/explain?podGroup=ml/train").body);
  ASSERT_TRUE(after["fits"].GetBool());
  for (const auto& slot : after["plan"].GetArray()) {
    ASSERT_TRUE(slot.HasMember("heldOn"));
    EXPECT_EQ(std::string(slot["heldOn"].GetString()), std::string(slot["node"].GetString()));
  }
  EXPECT_THAT(client.Get("/explain?podGroup=ml/train&format=text").body, HasSubstr("HELD ON"));
}

TEST(GroupExplainHttp, AWorkloadsInstanceIsFoundByItsReplicaKey) {
  std::string workload = R"({"apiVersion":"scheduling.k8s.io/v1alpha1","kind":"Workload","metadata":{"name":"job","namespace":"ml"},)"
                         R"("spec":{"podGroups":[{"name":"workers","policy":{"gang":{"minCount":2}}}]}})";
  std::string member = PodJson{.name = "r1-0", .namespace_name = "ml", .uid = "uid-r1-0", .containers = {WholeGpus("c", 1)},
                               .spec_extra = R"("workloadRef":{"name":"job","podGroup":"workers","podGroupReplicaKey":"r1"})"}
                           .ToJson();
  TestServer server(ListJson({NvidiaNode("w", 8).ToJson(), workload, member}));
  HttpClient client(server.port());
  rapidjson::Document d = Parse(client.Get("/explain?podGroup=ml/job/workers&replica=r1").body);
  EXPECT_EQ(std::string(d["api"].GetString()), "Workload");
  EXPECT_EQ(std::string(d["replica"].GetString()), "r1");
  ASSERT_EQ(d["pending"].Size(), 1u);
  EXPECT_TRUE(d["fits"].GetBool());
  EXPECT_EQ(d["missing"].GetUint(), 1u);  // a gang of 2 with one member so far
  rapidjson::Document other = Parse(client.Get("/explain?podGroup=ml/job/workers").body);  // the other instance
  EXPECT_EQ(other["pending"].Size(), 0u);
  EXPECT_FALSE(other["fits"].GetBool());
  EXPECT_EQ(std::string(other["reason"].GetString()), "no members to place");
}

TEST(GroupExplainHttp, BoundMembersAreCountedWhateverTheyHold) {
  std::string cluster = Cluster(false);
  std::string running = PodJson{.name = "w2", .namespace_name = "ml", .uid = "uid-w2", .node = "m0", .phase = "Running",
                                .containers = {Mgpu("s", 20, 4096)},
                                .annotations = {{"vke.volcengine.com/gpu-index-container-s", "0"}},
                                .spec_extra = R"("schedulingGroup":{"podGroupName":"train"})"}
                            .ToJson();
  TestServer server(ListJson({MgpuNode("m0", 2, 24576).ToJson(), std::string(kTrain), Member("w0"), running}));
  HttpClient client(server.port());
  rapidjson::Document d = Parse(client.Get("/explain?podGroup=ml/train").body);
  EXPECT_EQ(d["bound"].GetUint(), 1u);
  EXPECT_EQ(d["missing"].GetUint(), 0u);
  EXPECT_TRUE(d["fits"].GetBool());
}

TEST(GroupExplainHttp, AnUnknownGroupOrAKeyWithoutNamespaceIsNamed) {
  TestServer server(Cluster(false));
  HttpClient client(server.port());
  HttpReply unknown = client.Get("/explain?podGroup=ml/nothing");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_THAT(unknown.body, HasSubstr("pod group ml/nothing is not known"));
  HttpReply bare = client.Get("/explain?podGroup=train");
  EXPECT_EQ(bare.status, 400);
  EXPECT_THAT(bare.body, HasSubstr("podGroup \"train\": want namespace/name"));
  EXPECT_THAT(client.Get("/explain").body, HasSubstr("?podGroup=namespace/name"));
  HttpReply replica = client.Get("/explain?podGroup=ml/train&replica=r1");
  EXPECT_EQ(replica.status, 400);
  EXPECT_THAT(replica.body, HasSubstr("replica \"r1\": only a Workload's groups have replica keys (ml/train is a PodGroup)"));
}

}  // namespace group_explain_http_test
}  // namespace gpusched::testing
