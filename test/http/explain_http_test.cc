// /explain over a real socket: a pending pod judged on every node with a reason per GPU, the score
// and rank where it fits, the cheapest eviction where it does not; GET for pods gpusched knows;
// a table for people.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "gpusched/json/json.h"
#include "http_client.h"
#include "test_server.h"

namespace gpusched::testing {
namespace explain_http_test {

using ::testing::HasSubstr;

PodJson Bound(std::string name, std::string node, std::vector<ContainerJson> containers, int32_t priority, int gpu) {
  return PodJson{.name = name, .namespace_name = "ml", .uid = "uid-" + name, .node = std::move(node), .phase = "Running",
                 .containers = std::move(containers),
                 .annotations = {{"vke.volcengine.com/gpu-index-container-s", std::to_string(gpu)}}, .priority = priority};
}

// m0: GPU 0 holds x (60%, priority 100), GPU 1 holds z (50%, priority 0). m1: both GPUs empty
// but 8 GiB each. w0: a whole-GPU node.
std::string Cluster() {
  return ListJson({MgpuNode("m0", 2, 24576).ToJson(), MgpuNode("m1", 2, 8192).ToJson(), NvidiaNode("w0", 8).ToJson(),
                   Bound("x", "m0", {Mgpu("s", 60, 4096)}, 100, 0).ToJson(), Bound("z", "m0", {Mgpu("s", 50, 4096)}, 0, 1).ToJson()});
}

std::string Pending(int core, int64_t mib, int32_t priority) {
  return PodJson{.name = "train", .namespace_name = "ml", .uid = "uid-train", .containers = {Mgpu("s", core, mib)},
                 .priority = priority}
      .ToJson();
}

rapidjson::Document Parse(const std::string& body) {
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(body, &d).ok()) << body;
  return d;
}

const rapidjson::Value& NodeOf(const rapidjson::Document& d, std::string_view name) {
  for (const auto& n : d["nodes"].GetArray()) {
    if (n["node"].GetString() == name) return n;
  }
  ADD_FAILURE() << "no node " << name;
  return d["nodes"][0];
}

class ExplainHttp : public ::testing::Test {
 protected:
  TestServer server_{Cluster()};
  HttpClient client_{server_.port()};
};

TEST_F(ExplainHttp, APodThatFitsNowhereGetsAReasonPerGpuAndTheCheapestEviction) {
  HttpReply r = client_.Post("/explain", Pending(60, 12288, 10));
  ASSERT_EQ(r.status, 200) << r.body;
  rapidjson::Document d = Parse(r.body);
  EXPECT_EQ(std::string(d["pod"].GetString()), "ml/train");
  EXPECT_EQ(std::string(d["request"]["kind"].GetString()), "mgpu");
  EXPECT_EQ(d["request"]["containers"][0]["corePercent"].GetInt(), 60);
  const rapidjson::Value& m0 = NodeOf(d, "m0");
  EXPECT_FALSE(m0["fits"].GetBool());
  EXPECT_EQ(std::string(m0["state"].GetString()), "ready");
  ASSERT_EQ(m0["reasons"].Size(), 2u);
  EXPECT_EQ(std::string(m0["reasons"][0].GetString()), "GPU 0: 40% core free, needs 60%");
  EXPECT_EQ(std::string(m0["reasons"][1].GetString()), "GPU 1: 50% core free, needs 60%");
  EXPECT_EQ(m0["gpus"][1]["freeInstances"].GetInt(), 15);
  EXPECT_TRUE(m0["score"].IsNull());
  // Only z (priority 0) may go for a pod of priority 10, and it is enough: x stays.
  ASSERT_TRUE(m0["wouldFitAfter"].IsObject());
  EXPECT_EQ(std::string(m0["wouldFitAfter"]["evict"][0]["uid"].GetString()), "uid-z");
  EXPECT_EQ(m0["wouldFitAfter"]["cost"]["victims"].GetInt(), 1);
  EXPECT_EQ(m0["wouldFitAfter"]["cost"]["maxPriority"].GetInt(), 0);
  // m1's GPUs are too small whatever leaves; w0 is in another mode.
  EXPECT_EQ(std::string(NodeOf(d, "m1")["reasons"][0].GetString()), "GPU 0: 8192 MiB free, needs 12288 MiB");
  EXPECT_TRUE(NodeOf(d, "m1")["wouldFitAfter"].IsNull());
  EXPECT_THAT(std::string(NodeOf(d, "w0")["reasons"][0].GetString()), HasSubstr("node mode nvidia"));
  EXPECT_EQ(std::string(d["summary"].GetString()),
            "0/3 nodes fit: 2 insufficient, 1 mode_mismatch; evicting 1 pod on m0 makes room");
  // At priority 0 nothing may be evicted for it.
  rapidjson::Document low = Parse(client_.Post("/explain", Pending(60, 12288, 0)).body);
  EXPECT_TRUE(NodeOf(low, "m0")["wouldFitAfter"].IsNull());
  EXPECT_THAT(std::string(low["summary"].GetString()), HasSubstr("no eviction of lower-priority pods makes room"));
}

TEST_F(ExplainHttp, WhereItFitsTheNodesAreRankedAndTheTextTableSaysSo) {
  rapidjson::Document d = Parse(client_.Post("/explain", Pending(30, 4096, 0)).body);
  // Fitting nodes first, by rank.
  EXPECT_EQ(std::string(d["nodes"][0]["node"].GetString()), "m0");  // binpack: the fuller node
  EXPECT_EQ(d["nodes"][0]["rank"].GetInt(), 1);
  EXPECT_EQ(d["nodes"][1]["rank"].GetInt(), 2);
  EXPECT_TRUE(d["nodes"][0]["score"].IsNumber());
  EXPECT_THAT(std::string(d["summary"].GetString()), HasSubstr("2/3 nodes fit; gpusched would place it on m0"));
  HttpReply text = client_.Post("/explain?format=text", Pending(30, 4096, 0));
  EXPECT_THAT(text.content_type, HasSubstr("text/plain"));
  EXPECT_THAT(text.body, HasSubstr("NODE"));
  EXPECT_THAT(text.body, ::testing::ContainsRegex("m0 +yes +mgpu +ready +1 "));
  EXPECT_THAT(text.body, ::testing::ContainsRegex("w0 +no +nvidia +ready"));
}

TEST_F(ExplainHttp, KnownPodsAreExplainedByNameAndMistakesAreNamed) {
  // A pending pod gpusched has seen in filter.
  client_.Post("/filter", ArgsWithNames(Pending(60, 12288, 10), {"m0", "m1", "w0"}));
  HttpReply known = client_.Get("/explain?pod=ml/train");
  ASSERT_EQ(known.status, 200) << known.body;
  EXPECT_THAT(known.body, HasSubstr(R"("uid":"uid-z")"));
  EXPECT_EQ(client_.Get("/explain?pod=ml/nobody").status, 404);
  // Bound pods are known by their allocation alone: their spec is not kept.
  HttpReply bound = client_.Get("/explain?pod=ml/z");
  EXPECT_EQ(bound.status, 409);
  EXPECT_THAT(bound.body, HasSubstr("bound to m0"));
  EXPECT_EQ(client_.Get("/explain").status, 400);
  HttpReply bad = client_.Post("/explain", R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c",
      "resources":{"limits":{"vke.volcengine.com/mgpu-core":"1.5"}}}]}})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_THAT(bad.body, HasSubstr("mgpu-core"));
  EXPECT_EQ(client_.Post("/explain", R"({"metadata":{"name":"cpu-only"},"spec":{"containers":[{"name":"c"}]}})").status, 400);
}

}  // namespace explain_http_test
}  // namespace gpusched::testing
