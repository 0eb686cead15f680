// /debug/defrag over a real socket: the fewest moves that make room for a pending pod (whole GPUs
// and mGPU), a PodDisruptionBudget that allows no disruption, a fragmentation target, a table for
// people, and bad requests named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "gpusched/json/json.h"
#include "http_client.h"
#include "test_server.h"

namespace gpusched::testing {
namespace defrag_http_test {

using ::testing::HasSubstr;

PodJson Bound(std::string name, std::string node, std::vector<ContainerJson> containers, int gpu = -1) {
  PodJson p{.name = name, .namespace_name = "ml", .uid = "uid-" + name, .node = std::move(node), .phase = "Running",
            .containers = std::move(containers), .labels = {{"app", name}}, .priority = 0, .controller_uid = "rs-" + name};
  if (gpu >= 0) p.annotations = {{"vke.volcengine.com/gpu-index-container-s", std::to_string(gpu)}};
  return p;
}

// w0: 4 + 2 of 8 GPUs used; w1: 6 of 8. m0: 60% on GPU 0, 50% on GPU 1; m1: 30% on each GPU.
std::vector<std::string> Items() {
  return {NvidiaNode("w0", 8).ToJson(), NvidiaNode("w1", 8).ToJson(), MgpuNode("m0", 2, 24576).ToJson(),
          MgpuNode("m1", 2, 24576).ToJson(), Bound("a4", "w0", {WholeGpus("s", 4)}).ToJson(),
          Bound("a2", "w0", {WholeGpus("s", 2)}).ToJson(), Bound("b6", "w1", {WholeGpus("s", 6)}).ToJson(),
          Bound("x", "m0", {Mgpu("s", 60, 4096)}, 0).ToJson(), Bound("z", "m0", {Mgpu("s", 50, 4096)}, 1).ToJson(),
          Bound("y", "m1", {Mgpu("s", 30, 4096)}, 0).ToJson(), Bound("q", "m1", {Mgpu("s", 30, 4096)}, 1).ToJson()};
}

std::string Pending(ContainerJson c) {
  return PodJson{.name = "train", .namespace_name = "ml", .uid = "uid-train", .containers = {std::move(c)}}.ToJson();
}

rapidjson::Document Parse(const std::string& body) {
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(body, &d).ok()) << body;
  return d;
}

class DefragHttp : public ::testing::Test {
 protected:
  TestServer server_{ListJson(Items())};
  HttpClient client_{server_.port()};
};

TEST_F(DefragHttp, FourWholeGpusFitAfterTheTwoGpuPodMoves) {
  HttpReply r = client_.Post("/debug/defrag", Pending(WholeGpus("s", 4)));
  ASSERT_EQ(r.status, 200) << r.body;
  rapidjson::Document d = Parse(r.body);
  EXPECT_TRUE(d["fits"].GetBool());
  EXPECT_EQ(std::string(d["pod"].GetString()), "ml/train");
  EXPECT_EQ(std::string(d["node"].GetString()), "w0");
  EXPECT_EQ(d["wholeGpus"].GetInt(), 4);
  ASSERT_EQ(d["moves"].Size(), 1u);
  const auto& m = d["moves"][0];
  EXPECT_EQ(std::string(m["pod"].GetString()), "ml/a2");
  EXPECT_EQ(std::string(m["uid"].GetString()), "uid-a2");
  EXPECT_EQ(std::string(m["from"].GetString()), "w0");
  EXPECT_EQ(std::string(m["to"].GetString()), "w1");
  EXPECT_EQ(m["wholeGpus"].GetInt(), 2);
  EXPECT_FALSE(m["usesBudget"].GetBool());
  EXPECT_EQ(std::string(d["reason"].GetString()), "");
  // A dry run: the inventory is as it was.
  EXPECT_EQ(server_.inventory().AllocationOf("uid-a2")->node_name, "w0");
}

TEST_F(DefragHttp, AnMgpuPodGetsItsGpuAfterOneShareMoves) {
  HttpReply r = client_.Post("/debug/defrag", Pending(Mgpu("s", 80, 4096)));
  ASSERT_EQ(r.status, 200) << r.body;
  rapidjson::Document d = Parse(r.body);
  ASSERT_TRUE(d["fits"].GetBool()) << r.body;
  ASSERT_EQ(d["moves"].Size(), 1u);
  ASSERT_EQ(d["gpus"].Size(), 1u);
  EXPECT_EQ(d["moves"][0]["gpus"].Size(), 1u);
  EXPECT_NE(std::string(d["moves"][0]["to"].GetString()), "");
}

TEST_F(DefragHttp, APodWhoseBudgetAllowsNoDisruptionStaysAndNoPlanIsFound) {
  std::vector<std::string> items = Items();
  items.push_back(BudgetJson("ml", "a2", {{"app", "a2"}}, 0));
  server_.Reload(ListJson(items));
  HttpReply r = client_.Post("/debug/defrag", Pending(WholeGpus("s", 4)));
  ASSERT_EQ(r.status, 200) << r.body;
  rapidjson::Document d = Parse(r.body);
  EXPECT_FALSE(d["fits"].GetBool());
  EXPECT_EQ(d["moves"].Size(), 0u);
  EXPECT_THAT(std::string(d["reason"].GetString()), HasSubstr("find no other node"));
  // Allowed one disruption, it moves and the plan says it uses the allowance.
  items.back() = BudgetJson("ml", "a2", {{"app", "a2"}}, 1);
  server_.Reload(ListJson(items));
  rapidjson::Document e = Parse(client_.Post("/debug/defrag", Pending(WholeGpus("s", 4))).body);
  ASSERT_TRUE(e["fits"].GetBool());
  EXPECT_TRUE(e["moves"][0]["usesBudget"].GetBool());
}

TEST_F(DefragHttp, AFragmentationTargetIsApproachedOneMoveAtATime) {
  HttpReply r = client_.Post("/debug/defrag?targetFrag=0&maxMoves=3", "");
  ASSERT_EQ(r.status, 200) << r.body;
  rapidjson::Document d = Parse(r.body);
  EXPECT_TRUE(d["pod"].IsNull());
  EXPECT_EQ(d["targetFragPct"].GetDouble(), 0);
  EXPECT_LE(d["moves"].Size(), 3u);
  EXPECT_GE(d["moves"].Size(), 1u);
  EXPECT_LT(d["fragmentedPct"]["after"].GetDouble(), d["fragmentedPct"]["before"].GetDouble());
  // GET asks the same; a target already met needs no move.
  HttpReply met = client_.Get("/debug/defrag?targetFrag=100");
  ASSERT_EQ(met.status, 200) << met.body;
  EXPECT_EQ(Parse(met.body)["moves"].Size(), 0u);
  EXPECT_TRUE(Parse(met.body)["fits"].GetBool());
}

TEST_F(DefragHttp, TheTableSaysItIsADryRun) {
  HttpReply r = client_.Post("/debug/defrag?format=text", Pending(WholeGpus("s", 4)));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_THAT(r.body, HasSubstr("pod ml/train: fits on w0 (GPUs 4 whole) after 1 move"));
  EXPECT_THAT(r.body, HasSubstr("dry run"));
  EXPECT_THAT(r.body, HasSubstr("ml/a2"));
}

TEST_F(DefragHttp, BadRequestsAreNamedAndTheServerKeepsServing) {
  EXPECT_EQ(client_.Post("/debug/defrag", "").status, 400);
  HttpReply both = client_.Post("/debug/defrag?targetFrag=1", Pending(WholeGpus("s", 1)));
  EXPECT_EQ(both.status, 400);
  EXPECT_THAT(both.body, HasSubstr("one of the three"));
  HttpReply target = client_.Get("/debug/defrag?targetFrag=lots");
  EXPECT_EQ(target.status, 400);
  EXPECT_THAT(target.body, HasSubstr("targetFrag \"lots\""));
  HttpReply moves = client_.Get("/debug/defrag?targetFrag=1&maxMoves=-1");
  EXPECT_EQ(moves.status, 400);
  EXPECT_THAT(moves.body, HasSubstr("maxMoves \"-1\""));
  HttpReply cpu = client_.Post("/debug/defrag", Pending(ContainerJson{.name = "s", .limits = {{"cpu", "1"}}}));
  EXPECT_EQ(cpu.status, 400);
  EXPECT_THAT(cpu.body, HasSubstr("asks for no GPU"));
  HttpReply placed = client_.Post("/debug/defrag", Bound("a2", "w0", {WholeGpus("s", 2)}).ToJson());
  EXPECT_EQ(placed.status, 409);
  EXPECT_THAT(placed.body, HasSubstr("already placed on w0"));
  EXPECT_EQ(client_.Post("/debug/defrag", "{not json").status, 400);
  EXPECT_EQ(client_.Get("/debug/defrag?targetFrag=1&apply=true").status, 405);
  EXPECT_EQ(client_.Post("/debug/defrag?apply=maybe", Pending(WholeGpus("s", 4))).status, 400);
  HttpReply accept = client_.Post("/debug/defrag?apply=true&acceptUnjudged=yes", Pending(WholeGpus("s", 4)));
  EXPECT_EQ(accept.status, 400);
  EXPECT_THAT(accept.body, HasSubstr("acceptUnjudged \"yes\": want true or false"));
  HttpReply dry = client_.Post("/debug/defrag?acceptUnjudged=true", Pending(WholeGpus("s", 4)));
  EXPECT_EQ(dry.status, 400);
  EXPECT_THAT(dry.body, HasSubstr("only with apply=true"));
  HttpReply snapshot = client_.Post("/debug/defrag?apply=true", Pending(WholeGpus("s", 4)));
  EXPECT_EQ(snapshot.status, 409);
  EXPECT_THAT(snapshot.body, HasSubstr("needs a live cluster"));
  EXPECT_EQ(client_.Get("/healthz").status, 200);
}

}  // namespace defrag_http_test
}  // namespace gpusched::testing
