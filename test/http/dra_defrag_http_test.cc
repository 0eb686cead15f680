// /debug/defrag for a pod whose GPUs come from ResourceClaims, over a real socket: the fewest
// moves (a pod's claim deallocated on its node, its replacement's allocated on another), a
// PodDisruptionBudget or a claim shared with a pod that stays keeping a pod in place, and random
// clusters whose plans never give one device twice.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/json/json.h"
#include "http_client.h"
#include "test_server.h"

namespace gpusched::testing {
namespace dra_defrag_http_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A pod of ReplicaSet rs-<name> bound to `node` holding the claim c-<name> generated for it, of
// `devices` ("node/gpu-i").
std::vector<std::string> Holder(const std::string& name, const std::string& node, const std::vector<std::string>& devices) {
  return {GeneratedClaim("c-" + name, name, ClaimSpec(static_cast<int>(devices.size()), ""), devices),
          TemplateClaimPod(name, "c-" + name, node, "rs-" + name)};
}

// a and b: two GPUs each, one held on each (pa on a/gpu-0, pb on b/gpu-0); "big" asks two.
std::vector<std::string> Items() {
  std::vector<std::string> items = {DraNode("a"), DraNode("b"), GpuSlice("a", 2), GpuSlice("b", 2), std::string(kGpuClass),
                                    Claim("big", ClaimSpec(2, ""))};
  for (const auto& pod : {Holder("pa", "a", {"a/gpu-0"}), Holder("pb", "b", {"b/gpu-0"})}) items.insert(items.end(), pod.begin(), pod.end());
  return items;
}

rapidjson::Document Parse(const std::string& body) {
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(body, &d).ok()) << body;
  return d;
}

std::vector<std::string> Strings(const rapidjson::Value& list) {
  std::vector<std::string> out;
  for (const auto& v : list.GetArray()) out.push_back(v.GetString());
  return out;
}

const std::string kBig = ClaimPod("train", "big");

TEST(DraDefragHttp, TwoDevicesOnOneNodeAfterOnePodMovesWithItsClaim) {
  TestServer server{ListJson(Items())};
  HttpClient client{server.port()};
  HttpReply r = client.Post("/debug/defrag", kBig);
  ASSERT_EQ(r.status, 200) << r.body;
  rapidjson::Document d = Parse(r.body);
  ASSERT_TRUE(d["fits"].GetBool()) << r.body;
  EXPECT_EQ(std::string(d["node"].GetString()), "a");  // both nodes need one move: the name decides
  EXPECT_THAT(Strings(d["devices"]), ElementsAre("gpu.nvidia.com/a/gpu-0", "gpu.nvidia.com/a/gpu-1"));
  ASSERT_EQ(d["moves"].Size(), 1u);
  const auto& m = d["moves"][0];
  EXPECT_EQ(std::string(m["pod"].GetString()), "ml/pa");
  EXPECT_EQ(std::string(m["from"].GetString()), "a");
  EXPECT_EQ(std::string(m["to"].GetString()), "b");
  EXPECT_THAT(Strings(m["devices"]), ElementsAre("gpu.nvidia.com/b/gpu-1"));
  HttpReply text = client.Post("/debug/defrag?format=text", kBig);
  EXPECT_THAT(text.body, HasSubstr("pod ml/train: fits on a (GPUs gpu-0,gpu-1) after 1 move"));
  EXPECT_THAT(text.body, HasSubstr("ml/pa"));
}

// Plans room for train on a server holding `items`: pa must stay, so pb moves and train lands on b.
void ExpectPbMovesInstead(const std::vector<std::string>& items) {
  TestServer server{ListJson(items)};
  HttpClient client{server.port()};
  rapidjson::Document d = Parse(client.Post("/debug/defrag", kBig).body);
  ASSERT_TRUE(d["fits"].GetBool());
  EXPECT_EQ(std::string(d["node"].GetString()), "b");
  EXPECT_EQ(std::string(d["moves"][0]["pod"].GetString()), "ml/pb");
}

TEST(DraDefragHttp, APodWhoseBudgetAllowsNoDisruptionStays) {
  std::vector<std::string> items = Items();
  items.push_back(BudgetJson("ml", "pa", {{"app", "pa"}}, 0));
  ExpectPbMovesInstead(items);
}

// A DaemonSet's pod would be recreated on the same node: it stays.
TEST(DraDefragHttp, ADaemonSetPodStays) {
  std::vector<std::string> items = Items();
  for (std::string& item : items) {
    if (item.find(R"("kind":"Pod","metadata":{"name":"pa")") == std::string::npos) continue;
    item = TemplateClaimPod("pa", "c-pa", "a", "ds-uid");
    item.replace(item.find("ReplicaSet"), 10, "DaemonSet");
  }
  ExpectPbMovesInstead(items);
}

// A named claim outlives its pod (allocated until the pod object is gone), and a shared one is
// not freed by one pod: a replacement naming it would go back to the same node. Such pods stay.
TEST(DraDefragHttp, APodWithANamedOrSharedClaimStays) {
  std::vector<std::string> items = Items();
  items.push_back(BudgetJson("ml", "pa", {{"app", "pa"}}, 0));
  for (std::string& item : items) {
    if (item.find(R"("name":"c-pb")") != std::string::npos) {
      item = Claim("c-pb", ClaimSpec(1, ""), {"b/gpu-0"}, {"pb"});
    } else if (item.find(R"("kind":"Pod","metadata":{"name":"pb")") != std::string::npos) {
      item = ClaimPod("pb", "c-pb", "b");
    }
  }
  TestServer server{ListJson(items)};
  HttpClient client{server.port()};
  rapidjson::Document d = Parse(client.Post("/debug/defrag", kBig).body);
  EXPECT_FALSE(d["fits"].GetBool());
  EXPECT_EQ(d["moves"].Size(), 0u);
  EXPECT_THAT(std::string(d["reason"].GetString()), HasSubstr("no nvidia-dra node makes room"));
  // pb's generated claim shared with pb2 (both on b): pb alone cannot free it.
  items = Items();
  items.push_back(BudgetJson("ml", "pa", {{"app", "pa"}}, 0));
  for (std::string& item : items) {
    if (item.find(R"("name":"c-pb")") == std::string::npos) continue;
    item = GeneratedClaim("c-pb", "pb", ClaimSpec(1, ""), {"b/gpu-0"});
    item.replace(item.find(R"("reservedFor":[)") + 15, 0, R"({"resource":"pods","name":"pb2","uid":"pb2"},)");
  }
  items.push_back(TemplateClaimPod("pb2", "c-pb", "b", "rs-pb2"));
  server.Reload(ListJson(items));
  EXPECT_FALSE(Parse(client.Post("/debug/defrag", kBig).body)["fits"].GetBool());
  // Without the budget, pa (its claim generated for it) moves.
  items.erase(std::find_if(items.begin(), items.end(), [](const std::string& i) { return i.find("PodDisruptionBudget") != std::string::npos; }));
  server.Reload(ListJson(items));
  EXPECT_TRUE(Parse(client.Post("/debug/defrag", kBig).body)["fits"].GetBool());
}

TEST(DraDefragHttp, APodThatFitsNeedsNoMoveAndAnAllocatedClaimIsNamed) {
  std::vector<std::string> items = Items();
  items.push_back(Claim("one", ClaimSpec(1, "")));
  TestServer server{ListJson(items)};
  HttpClient client{server.port()};
  rapidjson::Document d = Parse(client.Post("/debug/defrag", ClaimPod("small", "one")).body);
  EXPECT_TRUE(d["fits"].GetBool());
  EXPECT_EQ(d["moves"].Size(), 0u);
  EXPECT_EQ(Strings(d["devices"]).size(), 1u);
  // A pending pod whose claim is allocated already: that allocation decides, nothing to move.
  rapidjson::Document e = Parse(client.Post("/debug/defrag", ClaimPod("late", "c-pa")).body);  // names pa's claim
  EXPECT_FALSE(e["fits"].GetBool());
  EXPECT_THAT(std::string(e["reason"].GetString()), HasSubstr("allocated already"));
}

// Random clusters of 3 nodes with 4 GPUs, pods holding 1-2 of them; a pod asking 2-4. A plan
// gives no device twice: not the pending pod's, not a moved pod's, not a staying claim's.
TEST(DraDefragHttp, RandomPlansNeverGiveADeviceTwice) {
  std::mt19937 rng(7);
  TestServer server{ListJson(Items())};
  HttpClient client{server.port()};
  int plans = 0;
  for (int round = 0; round < 40; ++round) {
    std::vector<std::string> items = {std::string(kGpuClass)};
    std::map<std::string, std::string> holder_of;  // device -> pod
    int pod = 0;
    for (std::string node : {"n0", "n1", "n2"}) {
      items.push_back(DraNode(node));
      items.push_back(GpuSlice(node, 4));
      for (int g = 0; g < 4;) {
        int take = std::min(4 - g, 1 + static_cast<int>(rng() % 2));
        if (rng() % 3 == 0) {
          g += 1;
          continue;
        }
        std::vector<std::string> devices;
        std::string name = fmt::format("p{}", pod++);
        for (int k = 0; k < take; ++k) {
          devices.push_back(fmt::format("{}/gpu-{}", node, g + k));
          holder_of["gpu.nvidia.com/" + devices.back()] = "ml/" + name;
        }
        g += take;
        for (const std::string& o : Holder(name, node, devices)) items.push_back(o);
      }
    }
    int want = 2 + static_cast<int>(rng() % 3);
    items.push_back(Claim("want", ClaimSpec(want, "")));
    server.Reload(ListJson(items));
    HttpReply r = client.Post("/debug/defrag", ClaimPod("pending", "want"));
    ASSERT_EQ(r.status, 200) << r.body;
    rapidjson::Document d = Parse(r.body);
    if (!d["fits"].GetBool() || d["moves"].Size() == 0) continue;
    ++plans;
    std::set<std::string> moved;
    for (const auto& m : d["moves"].GetArray()) moved.insert(m["pod"].GetString());
    std::set<std::string> taken;
    auto take = [&](const std::string& device, const std::string& by) {
      EXPECT_TRUE(taken.insert(device).second) << device << " given twice, to " << by << "\n" << r.body;
      auto held = holder_of.find(device);
      EXPECT_TRUE(held == holder_of.end() || moved.contains(held->second)) << device << " still held by " << held->second;
    };
    EXPECT_EQ(Strings(d["devices"]).size(), static_cast<size_t>(want));
    for (const std::string& device : Strings(d["devices"])) take(device, "the pending pod");
    for (const auto& m : d["moves"].GetArray()) {
      EXPECT_STRNE(m["from"].GetString(), m["to"].GetString());
      for (const std::string& device : Strings(m["devices"])) take(device, m["pod"].GetString());
    }
  }
  EXPECT_GT(plans, 5);
}

}  // namespace dra_defrag_http_test
}  // namespace gpusched::testing
