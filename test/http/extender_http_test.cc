// End-to-end: a real server on 127.0.0.1:0, real Kubernetes JSON bodies over a real socket.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "cluster_json.h"
#include "gpusched/json/json.h"
#include "http_client.h"
#include "test_server.h"

namespace gpusched::testing {
namespace extender_http_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

struct FilterReply {
  std::vector<std::string> names;  // NodeNames, or the names of the returned Nodes
  bool used_nodes = false;
  std::map<std::string, std::string> failed;
  std::map<std::string, std::string> unresolvable;
  std::string error;
};

FilterReply ParseFilter(const HttpReply& reply) {
  EXPECT_EQ(reply.status, 200) << reply.error;
  EXPECT_EQ(reply.content_type, "application/json");
  rapidjson::Document doc;
  Status s = json::Parse(reply.body, &doc);
  EXPECT_TRUE(s.ok()) << s.ToString() << reply.body;
  FilterReply out;
  if (!s.ok() || !doc.IsObject()) return out;
  for (const char* key : {"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"}) {
    EXPECT_TRUE(doc.HasMember(key)) << key << " missing in " << reply.body;
  }
  if (doc["NodeNames"].IsArray()) {
    for (const auto& n : doc["NodeNames"].GetArray()) out.names.emplace_back(n.GetString());
  }
  if (doc["Nodes"].IsObject()) {
    out.used_nodes = true;
    for (const auto& n : doc["Nodes"]["items"].GetArray()) out.names.emplace_back(n["metadata"]["name"].GetString());
  }
  for (auto [key, dst] : {std::pair{"FailedNodes", &out.failed}, std::pair{"FailedAndUnresolvableNodes", &out.unresolvable}}) {
    if (!doc[key].IsObject()) continue;
    for (auto it = doc[key].MemberBegin(); it != doc[key].MemberEnd(); ++it) {
      (*dst)[it->name.GetString()] = it->value.GetString();
    }
  }
  out.error = doc["Error"].GetString();
  return out;
}

std::map<std::string, int64_t> ParsePriorities(const HttpReply& reply) {
  EXPECT_EQ(reply.status, 200);
  rapidjson::Document doc;
  EXPECT_TRUE(json::Parse(reply.body, &doc).ok()) << reply.body;
  std::map<std::string, int64_t> out;
  EXPECT_TRUE(doc.IsArray()) << reply.body;
  if (!doc.IsArray()) return out;
  for (const auto& hp : doc.GetArray()) {
    EXPECT_TRUE(hp["Score"].IsInt64());
    out[hp["Host"].GetString()] = hp["Score"].GetInt64();
  }
  return out;
}

std::string BindError(const HttpReply& reply) {
  EXPECT_EQ(reply.status, 200);
  rapidjson::Document doc;
  EXPECT_TRUE(json::Parse(reply.body, &doc).ok()) << reply.body;
  return doc.IsObject() && doc.HasMember("Error") ? doc["Error"].GetString() : "<no Error>";
}

PodJson Pending(std::string name, std::vector<ContainerJson> containers, std::map<std::string, std::string> a = {}) {
  return PodJson{.name = name, .uid = "uid-" + name, .containers = std::move(containers), .annotations = std::move(a)};
}

PodJson Running(std::string name, std::string node, std::vector<ContainerJson> containers,
                std::map<std::string, std::string> a = {}) {
  return PodJson{.name = name, .uid = "uid-" + name, .node = std::move(node), .phase = "Running",
                 .containers = std::move(containers), .annotations = std::move(a)};
}

NodeJson Heterogeneous() {
  NodeJson n = MgpuNode("mixed", 0, 0, "native-burst-share");
  n.gpus = std::vector<GpuJson>{{.index = 0, .memory_mib = 81920, .model = "A100-80GB"},
                                {.index = 1, .memory_mib = 40960, .model = "A100-40GB"},
                                {.index = 3, .memory_mib = 15360, .model = "T4"}};
  n.mgpu_core = 300;
  n.mgpu_memory = 81920 + 40960 + 15360;
  return n;
}

const std::vector<std::string> kAllNodes = {"absent", "nvidia", "mgpu", "burst", "mixed", "dra", "bogus", "empty", "switching"};

std::string Cluster() {
  return ListJson({
      NvidiaNode("absent", 8).ToJson(),
      NvidiaNode("nvidia", 8, "nvidia").ToJson(),
      MgpuNode("mgpu", 4, 24000).ToJson(),
      MgpuNode("burst", 4, 24000, "native-burst-share").ToJson(),
      Heterogeneous().ToJson(),
      NvidiaNode("dra", 0, "nvidia-dra").ToJson(),
      NvidiaNode("bogus", 8, "Nvidia").ToJson(),
      NvidiaNode("empty", 8, "").ToJson(),
      MgpuNode("switching", 4, 24000).ToJson(),
      Running("train", "nvidia", {WholeGpus("t", 6)}).ToJson(),
      Running("infer", "mgpu", {Mgpu("s", 70, 20000)}, {{"vke.volcengine.com/gpu-index-container-s", "0"}}).ToJson(),
      Running("legacy", "switching", {WholeGpus("t", 2)}).ToJson(),
  });
}

class ExtenderHttp : public ::testing::Test {
 protected:
  ExtenderHttp() : server_(Cluster()), client_(server_.port()) {}

  FilterReply Filter(const PodJson& pod, const std::vector<std::string>& names = kAllNodes) {
    return ParseFilter(client_.Post("/filter", ArgsWithNames(pod.ToJson(), names)));
  }
  std::map<std::string, int64_t> Prioritize(const PodJson& pod, const std::vector<std::string>& names) {
    return ParsePriorities(client_.Post("/prioritize", ArgsWithNames(pod.ToJson(), names)));
  }
  std::string Bind(const PodJson& pod, const std::string& node) {
    return BindError(client_.Post("/bind", BindJson(pod.name, pod.namespace_name, pod.uid, node)));
  }
  rapidjson::Document Inventory(const std::string& node) {
    HttpReply r = client_.Get("/debug/inventory?node=" + node);
    rapidjson::Document doc;
    EXPECT_TRUE(json::Parse(r.body, &doc).ok());
    return doc;
  }

  TestServer server_;
  HttpClient client_;
};

TEST_F(ExtenderHttp, LabelAbsentOrNvidiaServesWholeGpus) {
  FilterReply r = Filter(Pending("p", {WholeGpus("c", 2)}));
  EXPECT_THAT(r.names, ElementsAre("absent", "nvidia"));
  EXPECT_EQ(r.error, "");
  r = Filter(Pending("p", {WholeGpus("c", 4)}));
  EXPECT_THAT(r.names, ElementsAre("absent"));
  EXPECT_EQ(r.failed["nvidia"], "insufficient nvidia.com/gpu: pod needs 4, node has 2 of 8 free");
}

TEST_F(ExtenderHttp, InvalidAndEmptyLabelsRefuseGpuPodsNamingTheValue) {
  for (const PodJson& pod : {Pending("w", {WholeGpus("c", 1)}), Pending("m", {Mgpu("c", 10, 1024)})}) {
    FilterReply r = Filter(pod);
    EXPECT_THAT(r.unresolvable["bogus"], HasSubstr("vke.node.gpu.schedule=\"Nvidia\" is not a GPU scheduling mode"));
    EXPECT_THAT(r.unresolvable["empty"], HasSubstr("vke.node.gpu.schedule=\"\" is not a GPU scheduling mode"));
  }
}

TEST_F(ExtenderHttp, CrossModeReasonsNameBothSides) {
  FilterReply r = Filter(Pending("w", {WholeGpus("c", 1)}));
  EXPECT_EQ(r.unresolvable["mgpu"], "node mode mgpu; pod requests nvidia.com/gpu");
  EXPECT_EQ(r.unresolvable["dra"], "node mode nvidia-dra; pod requests nvidia.com/gpu");
  r = Filter(Pending("m", {Mgpu("c", 10, 1024)}));
  EXPECT_EQ(r.unresolvable["absent"], "node mode nvidia; pod requests vke.volcengine.com/mgpu-core");
  EXPECT_EQ(r.unresolvable["dra"], "node mode nvidia-dra; pod requests vke.volcengine.com/mgpu-core");
  EXPECT_THAT(r.names, ElementsAre("mgpu"));
}

TEST_F(ExtenderHttp, PodsWithoutGpusPassEveryNodeUntouched) {
  std::vector<std::string> names = kAllNodes;
  names.push_back("not-a-gpu-node");
  FilterReply r = Filter(Pending("web", {ContainerJson{.name = "c", .limits = {{"cpu", "2"}}}}), names);
  EXPECT_EQ(r.names, names);
  EXPECT_THAT(r.failed, IsEmpty());
  EXPECT_THAT(r.unresolvable, IsEmpty());
}

TEST_F(ExtenderHttp, MixedPodIsRejectedEverywhereWithOneReason) {
  FilterReply r = Filter(Pending("mix", {WholeGpus("a", 1), Mgpu("b", 10, 1024)}));
  EXPECT_THAT(r.names, IsEmpty());
  ASSERT_EQ(r.unresolvable.size(), kAllNodes.size());
  for (const auto& [node, reason] : r.unresolvable) {
    EXPECT_EQ(reason, "pod mixes nvidia.com/gpu and vke.volcengine.com/mgpu-* requests; a pod uses one kind of GPU");
  }
}

TEST_F(ExtenderHttp, MgpuRulesAtTheirBoundaries) {
  EXPECT_THAT(Filter(Pending("a", {Mgpu("c", 30, 256)})).names, ElementsAre("mgpu"));
  EXPECT_THAT(Filter(Pending("a", {Mgpu("c", 30, 255)})).unresolvable["mgpu"],
              HasSubstr("needs vke.volcengine.com/mgpu-memory >= 256 MiB, got 255"));
  EXPECT_THAT(Filter(Pending("a", {Mgpu("c", 150, std::nullopt)})).unresolvable["mgpu"],
              HasSubstr("150 above 100 must be a multiple of 100"));
  EXPECT_THAT(Filter(Pending("a", {Mgpu("c", 200, 1024)})).unresolvable["mgpu"],
              HasSubstr("is a whole-card request and must not set vke.volcengine.com/mgpu-memory (1024 MiB)"));
  ContainerJson unequal = Mgpu("c", 30, 1024);
  unequal.requests["vke.volcengine.com/mgpu-core"] = "20";
  EXPECT_THAT(Filter(Pending("a", {unequal})).unresolvable["mgpu"], HasSubstr("requests 20 != limits 30"));
  // Compute policy: the pod's annotation must equal the node's label.
  FilterReply r = Filter(Pending("a", {Mgpu("c", 30, 1024)}, {{"vke.volcengine.com/mgpu-compute-policy", "native-burst-share"}}));
  EXPECT_THAT(r.names, ElementsAre("burst", "mixed"));
  EXPECT_EQ(r.unresolvable["mgpu"],
            "compute policy vke.volcengine.com/mgpu-compute-policy: pod has native-burst-share, node has fixed-share");
}

TEST_F(ExtenderHttp, MultiCardRulesAtTheirBoundaries) {
  std::map<std::string, std::string> burst2 = {{"vke.volcengine.com/mgpu-compute-policy", "native-burst-share"},
                                               {"vke.volcengine.com/container-multiple-gpu", "2"}};
  EXPECT_THAT(Filter(Pending("a", {Mgpu("c", 100, 2048)}, burst2)).names, ElementsAre("burst", "mixed"));
  EXPECT_THAT(Filter(Pending("a", {Mgpu("c", 100, 2046)}, burst2)).unresolvable["burst"],
              HasSubstr("per-GPU memory in [1024, 81920] MiB (got 2046/2)"));
  EXPECT_THAT(Filter(Pending("a", {Mgpu("c", 202, 4096)}, burst2)).unresolvable["burst"],
              HasSubstr("integer per-GPU core <= 100 (got 202/2)"));
  std::map<std::string, std::string> fixed2 = {{"vke.volcengine.com/container-multiple-gpu", "2"}};
  EXPECT_THAT(Filter(Pending("a", {Mgpu("c", 100, 2048)}, fixed2)).unresolvable["mgpu"],
              HasSubstr("needs compute policy native-burst-share, pod has fixed-share"));
  std::map<std::string, std::string> burst9 = burst2;
  burst9["vke.volcengine.com/container-multiple-gpu"] = "9";
  EXPECT_THAT(Filter(Pending("a", {Mgpu("c", 900, 9216)}, burst9)).unresolvable["burst"],
              HasSubstr("9 GPUs per container is outside 0-8"));
  // "burst" has 4 GPUs: 4 cards fit, 5 never can (unresolvable on that node).
  std::map<std::string, std::string> burst4 = burst2;
  burst4["vke.volcengine.com/container-multiple-gpu"] = "4";
  EXPECT_THAT(Filter(Pending("a", {Mgpu("c", 200, 4096)}, burst4), {"burst"}).names, ElementsAre("burst"));
  std::map<std::string, std::string> burst5 = burst2;
  burst5["vke.volcengine.com/container-multiple-gpu"] = "5";
  FilterReply r = Filter(Pending("a", {Mgpu("c", 250, 5120)}, burst5));
  EXPECT_THAT(r.unresolvable["burst"], HasSubstr("container c needs 5 GPUs with 50% core and 1024 MiB free each, 4 qualify"));
  EXPECT_THAT(r.unresolvable["mixed"], HasSubstr("needs 5 GPUs"));
}

TEST_F(ExtenderHttp, MultiContainerAndMultiCardPodsBindToDistinctGpus) {
  PodJson pod = Pending("multi", {Mgpu("model", 100, 8192), Mgpu("sidecar", 10, 1024), Mgpu("warm", 100, std::nullopt)},
                        {{"vke.volcengine.com/mgpu-compute-policy", "native-burst-share"},
                         {"vke.volcengine.com/container-multiple-gpu", "2,1,1"}});
  FilterReply r = Filter(pod, {"burst"});
  ASSERT_THAT(r.names, ElementsAre("burst")) << r.failed["burst"];
  EXPECT_EQ(Bind(pod, "burst"), "");
  rapidjson::Document inv = Inventory("burst");
  const auto& alloc = inv["nodes"][0]["allocations"][0];
  EXPECT_STREQ(alloc["pod"].GetString(), "default/multi");
  const auto& containers = alloc["containers"];
  ASSERT_EQ(containers.Size(), 3u);
  EXPECT_EQ(containers[0]["gpus"].Size(), 2u);
  EXPECT_EQ(containers[0]["memoryMiBPerGpu"].GetInt(), 4096);
  EXPECT_TRUE(containers[2]["wholeCard"].GetBool());
  std::set<int> model_gpus = {containers[0]["gpus"][0].GetInt(), containers[0]["gpus"][1].GetInt()};
  EXPECT_EQ(model_gpus.size(), 2u);
  EXPECT_FALSE(model_gpus.contains(containers[2]["gpus"][0].GetInt()));  // the whole card is exclusive
}

TEST_F(ExtenderHttp, HeterogeneousGpusAreSizedOneByOne) {
  std::map<std::string, std::string> burst = {{"vke.volcengine.com/mgpu-compute-policy", "native-burst-share"}};
  // 50 GiB fits only the 80 GiB card. Then 20 GiB fits the 80 GiB card (30 GiB left) and the 40 GiB
  // one; binpack takes the tighter fit relative to each card and keeps the 40 GiB card idle.
  PodJson big = Pending("big", {Mgpu("c", 10, 51200)}, burst);
  ASSERT_THAT(Filter(big, {"mixed"}).names, ElementsAre("mixed"));
  ASSERT_EQ(Bind(big, "mixed"), "");
  PodJson mid = Pending("mid", {Mgpu("c", 10, 20480)}, burst);
  ASSERT_EQ(Filter(mid, {"mixed"}).names.size(), 1u);
  ASSERT_EQ(Bind(mid, "mixed"), "");
  rapidjson::Document inv = Inventory("mixed");
  const auto& gpus = inv["nodes"][0]["gpus"];
  ASSERT_EQ(gpus.Size(), 3u);
  EXPECT_EQ(gpus[0]["usedMemoryMiB"].GetInt(), 51200 + 20480);
  EXPECT_EQ(gpus[1]["usedMemoryMiB"].GetInt(), 0);
  EXPECT_EQ(gpus[2]["index"].GetInt(), 3);  // index 2 is missing on this node
  // 41 GiB fits nowhere now: 10 GiB left on the 80 GiB card, 40 GiB on the next, 15 GiB on the T4.
  FilterReply r = Filter(Pending("more", {Mgpu("c", 10, 41984)}, burst), {"mixed"});
  EXPECT_THAT(r.failed["mixed"], HasSubstr("needs 10% core and 41984 MiB on one GPU"));
  EXPECT_THAT(r.failed["mixed"], HasSubstr("GPU0 80% core/10240 MiB, GPU1 100% core/40960 MiB, GPU3 100% core/15360 MiB"));
  EXPECT_THAT(Filter(Pending("fits", {Mgpu("c", 10, 40960)}, burst), {"mixed"}).names, ElementsAre("mixed"));
}

TEST_F(ExtenderHttp, SwitchingNodeNamesBlockersUntilTheyAreGone) {
  FilterReply r = Filter(Pending("m", {Mgpu("c", 10, 1024)}), {"switching"});
  EXPECT_THAT(r.names, IsEmpty());
  EXPECT_THAT(r.unresolvable["switching"],
              HasSubstr("node is switching from nvidia to mgpu: 1 GPU pod of the old mode still runs (default/legacy)"));
  rapidjson::Document inv = Inventory("switching");
  EXPECT_STREQ(inv["nodes"][0]["state"].GetString(), "switching");
  EXPECT_STREQ(inv["nodes"][0]["blockers"][0]["pod"].GetString(), "default/legacy");
  // The legacy pod finishes: a new snapshot shows it Succeeded.
  std::string cluster = Cluster();
  std::string done = Running("legacy", "switching", {WholeGpus("t", 2)}).ToJson();
  PodJson finished = Running("legacy", "switching", {WholeGpus("t", 2)});
  finished.phase = "Succeeded";
  cluster.replace(cluster.find(done), done.size(), finished.ToJson());
  server_.Reload(cluster);
  EXPECT_THAT(Filter(Pending("m", {Mgpu("c", 10, 1024)}), {"switching"}).names, ElementsAre("switching"));
}

TEST_F(ExtenderHttp, LabelChangeInANewSnapshotMakesTheNodeSwitching) {
  std::string cluster = Cluster();
  std::string before = NvidiaNode("nvidia", 8, "nvidia").ToJson();
  NodeJson after = MgpuNode("nvidia", 8, 24000);
  cluster.replace(cluster.find(before), before.size(), after.ToJson());
  server_.Reload(cluster);
  FilterReply r = Filter(Pending("m", {Mgpu("c", 10, 1024)}), {"nvidia"});
  EXPECT_THAT(r.unresolvable["nvidia"], HasSubstr("switching from nvidia to mgpu: 1 GPU pod of the old mode still runs (default/train)"));
  // A pod of the mode the node is leaving is told about the switch, the fact it needs.
  r = Filter(Pending("w", {WholeGpus("c", 1)}), {"nvidia"});
  EXPECT_THAT(r.unresolvable["nvidia"], HasSubstr("node is switching from nvidia to mgpu"));
  // A pod of a third mode is told the mode.
  r = Filter(Pending("d", {}), {"nvidia"});
  EXPECT_THAT(r.names, ElementsAre("nvidia"));  // no GPUs: passed through
}

TEST_F(ExtenderHttp, LabelChangeArrivingInNonCacheFilterIsApplied) {
  // kube-scheduler in non-cache mode sends the Node objects: "nvidia" now says mgpu.
  std::string body = ArgsWithNodes(Pending("m", {Mgpu("c", 10, 1024)}).ToJson(), {MgpuNode("nvidia", 8, 24000).ToJson()});
  FilterReply r = ParseFilter(client_.Post("/filter", body));
  EXPECT_TRUE(r.used_nodes);
  EXPECT_THAT(r.unresolvable["nvidia"], HasSubstr("switching from nvidia to mgpu"));
  // And the change sticks for cache-mode calls too.
  EXPECT_THAT(Filter(Pending("w", {WholeGpus("c", 1)}), {"nvidia"}).unresolvable["nvidia"],
              HasSubstr("node is switching from nvidia to mgpu"));
}

TEST_F(ExtenderHttp, RepliesMirrorNodesOrNodeNames) {
  PodJson pod = Pending("w", {WholeGpus("c", 1)});
  HttpReply names = client_.Post("/filter", ArgsWithNames(pod.ToJson(), {"absent", "mgpu"}));
  EXPECT_THAT(names.body, HasSubstr(R"("Nodes":null,"NodeNames":["absent"])"));
  std::string absent = NvidiaNode("absent", 8).ToJson();
  HttpReply nodes = client_.Post("/filter", ArgsWithNodes(pod.ToJson(), {absent, MgpuNode("mgpu", 4, 24000).ToJson()}));
  EXPECT_THAT(nodes.body, HasSubstr(R"("Nodes":{"metadata":{},"items":[)" + absent + R"(]},"NodeNames":null)"));
  FilterReply r = ParseFilter(nodes);
  EXPECT_THAT(r.names, ElementsAre("absent"));
  EXPECT_EQ(r.unresolvable["mgpu"], "node mode mgpu; pod requests nvidia.com/gpu");
}

TEST_F(ExtenderHttp, LowercaseEnvelopeKeysAreAccepted) {
  std::string body = R"({"pod":)" + Pending("w", {WholeGpus("c", 1)}).ToJson() + R"(,"nodes":null,"nodenames":["absent","mgpu"]})";
  FilterReply r = ParseFilter(client_.Post("/filter", body));
  EXPECT_THAT(r.names, ElementsAre("absent"));
  std::string bind = R"({"podname":"w","podnamespace":"default","poduid":"uid-w","node":"absent"})";
  EXPECT_EQ(BindError(client_.Post("/bind", bind)), "");
}

TEST_F(ExtenderHttp, MalformedBodiesAnswerErrorsAndTheServerKeepsServing) {
  struct Case {
    std::string body;
    std::string want;
  };
  std::vector<Case> cases = {
      {"", "malformed JSON"},
      {"{\"Pod\":", "malformed JSON"},
      {"[1,2]", "ExtenderArgs: want object, got array"},
      {R"({"Pod":"x","NodeNames":[]})", "Pod: want object, got string"},
      {R"({"Pod":{},"NodeNames":{"a":1}})", "ExtenderArgs.NodeNames: want array, got object"},
      {R"({"Pod":{"metadata":{"uid":12}},"NodeNames":["a"]})", "Pod.metadata.uid: want string, got number"},
      {std::string(5000, '['), "nests deeper than 64 levels"},
      {"{\"Pod\":{\"metadata\":{\"name\":\"\xff\"}},\"NodeNames\":[]}", "malformed JSON"},
  };
  for (const Case& c : cases) {
    FilterReply r = ParseFilter(client_.Post("/filter", c.body));
    EXPECT_THAT(r.error, HasSubstr(c.want)) << c.body.substr(0, 80);
    EXPECT_THAT(r.names, IsEmpty());
    HttpReply p = client_.Post("/prioritize", c.body);
    EXPECT_EQ(p.status, 200);
    EXPECT_EQ(p.body, "[]");
    EXPECT_NE(BindError(client_.Post("/bind", c.body)), "");
  }
  EXPECT_EQ(client_.Get("/healthz").status, 200);
  EXPECT_THAT(Filter(Pending("w", {WholeGpus("c", 1)}), {"absent"}).names, ElementsAre("absent"));
}

TEST_F(ExtenderHttp, MalformedNodeObjectsAreAnsweredNotFatal) {
  // Non-cache filter with Node objects whose GPU fields have the wrong types: those nodes are
  // refused with the field named, the others still answer, and the server keeps serving.
  std::string pod = Pending("w", {WholeGpus("c", 1)}).ToJson();
  std::vector<std::string> nodes = {
      R"({"metadata":{"name":"bad-status"},"status":[]})",
      R"({"metadata":{"name":"bad-alloc"},"status":{"allocatable":"8"}})",
      R"({"metadata":{"name":"bad-quantity"},"status":{"allocatable":{"nvidia.com/gpu":"eight"}}})",
      NvidiaNode("fresh", 8).ToJson()};
  FilterReply r = ParseFilter(client_.Post("/filter", ArgsWithNodes(pod, nodes)));
  EXPECT_THAT(r.names, ElementsAre("fresh"));
  EXPECT_THAT(r.unresolvable["bad-status"], HasSubstr("Nodes.items[0].status: want object, got array"));
  EXPECT_THAT(r.unresolvable["bad-alloc"], HasSubstr("Nodes.items[1].status.allocatable: want object, got string"));
  EXPECT_THAT(r.unresolvable["bad-quantity"], HasSubstr("invalid quantity \"eight\""));
  // A node without a name is a request error.
  r = ParseFilter(client_.Post("/filter", ArgsWithNodes(pod, {R"({"metadata":{"labels":{}}})"})));
  EXPECT_THAT(r.error, HasSubstr("Nodes.items[0].metadata.name: missing"));
  EXPECT_EQ(client_.Get("/healthz").status, 200);
}

TEST_F(ExtenderHttp, UnknownNodesAreUnresolvable) {
  FilterReply r = Filter(Pending("w", {WholeGpus("c", 1)}), {"absent", "not-ours"});
  EXPECT_EQ(r.unresolvable["not-ours"], "node is not in gpusched's inventory");
}

TEST_F(ExtenderHttp, SixteenInstancesPerGpuAtMost) {
  // "burst" has 4 GPUs of 24000 MiB: 64 one-percent instances fit, 16 on each GPU.
  std::map<std::string, std::string> burst = {{"vke.volcengine.com/mgpu-compute-policy", "native-burst-share"}};
  for (int i = 0; i < 4 * 16; ++i) {
    PodJson p = Pending("tiny-" + std::to_string(i), {Mgpu("c", 1, 256)}, burst);
    ASSERT_THAT(Filter(p, {"burst"}).names, ElementsAre("burst")) << i;
    ASSERT_EQ(Bind(p, "burst"), "") << i;
  }
  rapidjson::Document inv = Inventory("burst");
  for (const auto& gpu : inv["nodes"][0]["gpus"].GetArray()) {
    EXPECT_EQ(gpu["instances"].GetInt(), 16);
    EXPECT_EQ(gpu["usedCorePercent"].GetInt(), 16);  // 84% of each GPU is still free
  }
  // The 65th does not fit, whatever is free.
  FilterReply r = Filter(Pending("seventeenth", {Mgpu("c", 1, 256)}, burst), {"burst"});
  EXPECT_THAT(r.failed["burst"], HasSubstr("GPU0 16/16 instances, GPU1 16/16 instances, GPU2 16/16 instances, "
                                           "GPU3 16/16 instances"));
}

TEST_F(ExtenderHttp, EightCardsPerContainerAtMost) {
  std::string cluster = ListJson({MgpuNode("big", 8, 16384, "native-burst-share").ToJson()});
  server_.Reload(cluster);
  std::map<std::string, std::string> eight = {{"vke.volcengine.com/mgpu-compute-policy", "native-burst-share"},
                                              {"vke.volcengine.com/container-multiple-gpu", "8"}};
  PodJson pod = Pending("wide", {Mgpu("c", 400, 8192)}, eight);
  ASSERT_THAT(Filter(pod, {"big"}).names, ElementsAre("big"));
  ASSERT_EQ(Bind(pod, "big"), "");
  rapidjson::Document inv = Inventory("big");
  EXPECT_EQ(inv["nodes"][0]["allocations"][0]["containers"][0]["gpus"].Size(), 8u);
  eight["vke.volcengine.com/container-multiple-gpu"] = "9";
  EXPECT_THAT(Filter(Pending("wider", {Mgpu("c", 900, 9216)}, eight), {"big"}).unresolvable["big"],
              HasSubstr("9 GPUs per container is outside 0-8"));
}

TEST_F(ExtenderHttp, PrioritizeRanksFittingNodesByPolicy) {
  PodJson pod = Pending("w", {WholeGpus("c", 1)});
  std::map<std::string, int64_t> s = Prioritize(pod, {"absent", "nvidia", "mgpu", "unknown"});
  // Only hosts with a score are answered; kube-scheduler gives the others 0.
  EXPECT_EQ(s.size(), 2u);
  EXPECT_EQ(s["nvidia"], 10);  // binpack: the busier node first
  EXPECT_EQ(s["absent"], 9);
  pod.annotations["gpusched.io/node-policy"] = "spread";
  s = Prioritize(pod, {"absent", "nvidia"});
  EXPECT_EQ(s["absent"], 10);
  EXPECT_EQ(s["nvidia"], 9);
}

TEST_F(ExtenderHttp, HealthReadyAndRoutes) {
  EXPECT_EQ(client_.Get("/healthz").body, "ok\n");
  EXPECT_EQ(client_.Get("/readyz").status, 200);
  EXPECT_EQ(client_.Get("/filter").status, 405);
  EXPECT_EQ(client_.Post("/nope", "{}").status, 404);
  HttpReply inv = client_.Get("/debug/inventory");
  EXPECT_EQ(inv.status, 200);
  rapidjson::Document doc;
  ASSERT_TRUE(json::Parse(inv.body, &doc).ok());
  EXPECT_EQ(doc["nodes"].Size(), kAllNodes.size());
  EXPECT_EQ(doc["ledgerSize"].GetInt(), 3);
}

TEST_F(ExtenderHttp, BindCommitsAndRecordsTheResult) {
  PodJson pod = Pending("m", {Mgpu("c", 20, 2048)});
  ASSERT_THAT(Filter(pod, {"mgpu"}).names, ElementsAre("mgpu"));
  EXPECT_EQ(Bind(pod, "mgpu"), "");
  std::optional<Pod> record = server_.inventory().FindPod("uid-m");
  ASSERT_TRUE(record);
  EXPECT_EQ(record->node_name, "mgpu");
  // Binpack: GPU0 already runs a 70% instance; 20% more fits there.
  EXPECT_EQ(record->annotations.at("vke.volcengine.com/gpu-index-container-c"), "0");
  EXPECT_EQ(record->annotations.at("vke.volcengine.com/assumed"), "true");
  EXPECT_EQ(Bind(pod, "mgpu"), "");  // idempotent
  EXPECT_THAT(Bind(pod, "burst"), HasSubstr("already bound to mgpu"));
  rapidjson::Document inv = Inventory("mgpu");
  EXPECT_EQ(inv["nodes"][0]["gpus"][0]["usedCorePercent"].GetInt(), 90);
}

TEST_F(ExtenderHttp, BindThatNoLongerFitsChangesNothing) {
  PodJson a = Pending("a", {WholeGpus("c", 2)});
  PodJson b = Pending("b", {WholeGpus("c", 2)});
  ASSERT_THAT(Filter(a, {"nvidia"}).names, ElementsAre("nvidia"));
  ASSERT_THAT(Filter(b, {"nvidia"}).names, ElementsAre("nvidia"));
  ASSERT_EQ(Bind(a, "nvidia"), "");
  std::string before = client_.Get("/debug/inventory").body;
  EXPECT_EQ(Bind(b, "nvidia"), "bind default/b to nvidia rejected: insufficient nvidia.com/gpu: pod needs 2, node has 0 of 8 free");
  std::string after = client_.Get("/debug/inventory").body;
  EXPECT_EQ(before, after);
}

TEST_F(ExtenderHttp, BindOfAnUnknownPodIsAnError) {
  EXPECT_THAT(Bind(Pending("ghost", {WholeGpus("c", 1)}), "absent"), HasSubstr("pod unknown to gpusched"));
  PodJson pod = Pending("p", {WholeGpus("c", 1)});
  Filter(pod, {"absent"});
  EXPECT_THAT(BindError(client_.Post("/bind", BindJson("other", "default", pod.uid, "absent"))),
              HasSubstr("uid belongs to pod default/p"));
  EXPECT_THAT(Bind(pod, "unknown-node"), HasSubstr("node is not in gpusched's inventory"));
}

TEST(ExtenderHttpRace, SixtyFourConcurrentBindsRaceForTheLastSlot) {
  // Every bind waits after planning until the others planned too (or 300 ms passed), so all of
  // them plan on the same inventory and race for the commit; only the ledger's own check at
  // commit time keeps the slot from being given out twice.
  std::mutex mu;
  std::condition_variable cv;
  int planned = 0;
  std::atomic<bool> racing{false};
  extender::ServiceCollaborators with;
  with.before_commit = [&] {
    if (!racing) return;
    std::unique_lock<std::mutex> lock(mu);
    ++planned;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::milliseconds(300), [&] { return planned >= 16; });
  };
  TestServer server_(Cluster(), {}, "", http::ServerOptions{.threads = 16}, std::move(with));
  HttpClient client_(server_.port());
  auto Filter = [&](const PodJson& pod, const std::vector<std::string>& names) {
    return ParseFilter(client_.Post("/filter", ArgsWithNames(pod.ToJson(), names)));
  };
  auto Bind = [&](const PodJson& pod, const std::string& node) {
    return BindError(client_.Post("/bind", BindJson(pod.name, pod.namespace_name, pod.uid, node)));
  };
  auto Inventory = [&](const std::string& node) {
    rapidjson::Document doc;
    EXPECT_TRUE(json::Parse(client_.Get("/debug/inventory?node=" + node).body, &doc).ok());
    return doc;
  };
  // "mgpu" GPU0 runs a 70% instance; fill GPUs 1-3 whole, then GPU0 to 90%: exactly 10% is left.
  PodJson fill = Pending("fill", {Mgpu("c", 300, std::nullopt)});
  Filter(fill, {"mgpu"});
  ASSERT_EQ(Bind(fill, "mgpu"), "");
  PodJson top = Pending("top", {Mgpu("c", 20, 1024)});
  Filter(top, {"mgpu"});
  ASSERT_EQ(Bind(top, "mgpu"), "");
  std::vector<PodJson> racers;
  for (int i = 0; i < 64; ++i) {
    racers.push_back(Pending("racer-" + std::to_string(i), {Mgpu("c", 10, 512)}));
    ASSERT_THAT(Filter(racers.back(), {"mgpu"}).names, ElementsAre("mgpu"));
  }
  std::atomic<int> wins{0};
  std::atomic<int> losses{0};
  std::vector<std::thread> threads;
  racing = true;
  for (int i = 0; i < 64; ++i) {
    threads.emplace_back([&, i] {
      HttpClient client(server_.port());
      std::string error = BindError(client.Post("/bind", BindJson(racers[i].name, "default", racers[i].uid, "mgpu")));
      if (error.empty()) {
        ++wins;
      } else if (error.find("rejected") != std::string::npos) {
        ++losses;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wins.load(), 1);
  EXPECT_EQ(losses.load(), 63);
  rapidjson::Document inv = Inventory("mgpu");
  const auto& gpu0 = inv["nodes"][0]["gpus"][0];
  EXPECT_EQ(gpu0["usedCorePercent"].GetInt(), 100);
  EXPECT_EQ(gpu0["instances"].GetInt(), 3);
  EXPECT_EQ(inv["nodes"][0]["allocations"].Size(), 4u);
  EXPECT_EQ(inv["ledgerSize"].GetInt(), 3 + 3);
}

TEST_F(ExtenderHttp, FilterTopKKeepsOnlyTheBestNodes) {
  TestServer narrowed(Cluster(), extender::ServiceOptions{.filter_top_k = 1});
  HttpClient client(narrowed.port());
  FilterReply r = ParseFilter(client.Post("/filter", ArgsWithNames(Pending("w", {WholeGpus("c", 1)}).ToJson(), kAllNodes)));
  EXPECT_THAT(r.names, ElementsAre("nvidia"));
  EXPECT_EQ(r.failed["absent"], "fits, but filter keeps only the best 1 node by node policy binpack");
}

TEST_F(ExtenderHttp, KeepAliveServesManyRequestsOnOneConnection) {
  for (int i = 0; i < 50; ++i) ASSERT_EQ(client_.Get("/healthz").status, 200);
}

TEST_F(ExtenderHttp, MalformedHttpGets400AndTheServerKeepsServing) {
  HttpClient raw(server_.port());
  HttpReply r = raw.Raw("POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(client_.Get("/healthz").status, 200);
}

TEST(ExtenderHttpLimits, BodyOverTheLimitGets413) {
  TestServer server(Cluster(), {}, "", http::ServerOptions{.body_limit = 4096});
  HttpClient client(server.port());
  HttpReply r = client.Post("/filter", std::string(8192, ' '));
  EXPECT_EQ(r.status, 413);
  HttpClient again(server.port());
  EXPECT_EQ(again.Get("/healthz").status, 200);
}

TEST(ExtenderHttpPrefix, VerbsLiveUnderTheConfiguredPrefix) {
  TestServer server(Cluster(), {}, "/gpu");
  HttpClient client(server.port());
  FilterReply r = ParseFilter(client.Post("/gpu/filter", ArgsWithNames(Pending("w", {WholeGpus("c", 1)}).ToJson(), {"absent"})));
  EXPECT_THAT(r.names, ElementsAre("absent"));
  EXPECT_EQ(client.Post("/filter", "{}").status, 404);
}

// Issue "Real cluster input": what a real API server sends, over a real socket.
TEST_F(ExtenderHttp, CanonicalQuantitiesScheduleLikePlainOnes) {
  ContainerJson c{.name = "c", .limits = {{"vke.volcengine.com/mgpu-core", "30"}, {"vke.volcengine.com/mgpu-memory", "8k"}}};
  c.requests = c.limits;
  FilterReply r = Filter(Pending("canon", {c}), {"mgpu", "nvidia"});
  EXPECT_THAT(r.names, ElementsAre("mgpu"));
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(Bind(Pending("canon", {c}), "mgpu"), "");
  rapidjson::Document inv = Inventory("mgpu");
  bool found = false;
  for (const auto& a : inv["nodes"][0]["allocations"].GetArray()) {
    if (std::string(a["pod"].GetString()) != "default/canon") continue;
    found = true;
    EXPECT_EQ(a["containers"][0]["memoryMiBPerGpu"].GetInt64(), 8000);
  }
  EXPECT_TRUE(found);
}

TEST_F(ExtenderHttp, AnAbsurdButLegalQuantitySimplyDoesNotFitAndSaysWhy) {
  // mgpu-memory: 1Gi is 1,073,741,824 MiB to Kubernetes, not a gibibyte.
  ContainerJson c{.name = "main", .limits = {{"vke.volcengine.com/mgpu-core", "50"}, {"vke.volcengine.com/mgpu-memory", "1Gi"}}};
  FilterReply r = Filter(Pending("gib", {c}), {"mgpu", "burst"});
  EXPECT_EQ(r.error, "");
  EXPECT_THAT(r.names, IsEmpty());
  EXPECT_THAT(r.unresolvable["mgpu"], HasSubstr("pod needs 50% core and 1073741824 MiB"));
  EXPECT_THAT(r.unresolvable["mgpu"],
              HasSubstr("container main: vke.volcengine.com/mgpu-memory \"1Gi\" = 1073741824 MiB"));
}

TEST_F(ExtenderHttp, AFractionalExtendedResourceIsRefusedNamingFieldValueAndUnit) {
  ContainerJson c{.name = "c", .limits = {{"nvidia.com/gpu", "1500m"}}};
  FilterReply r = Filter(Pending("frac", {c}), {"nvidia", "absent"});
  EXPECT_EQ(r.error, "");
  EXPECT_THAT(r.names, IsEmpty());
  EXPECT_THAT(r.unresolvable["nvidia"],
              HasSubstr("Pod.spec.containers[0].resources.limits[\"nvidia.com/gpu\"]: invalid quantity \"1500m\": 1.5 is "
                        "not a whole number (nvidia.com/gpu counts GPUs; extended resources are integers)"));
  EXPECT_THAT(Prioritize(Pending("frac", {c}), {"nvidia"}), IsEmpty());
  EXPECT_NE(Bind(Pending("frac", {c}), "nvidia"), "");
  // A malformed quantity, the same.
  c.limits = {{"nvidia.com/gpu", "1x"}};
  EXPECT_THAT(Filter(Pending("typo", {c}), {"nvidia"}).unresolvable["nvidia"], HasSubstr("invalid quantity \"1x\""));
}

// A wrong per-pod preference is that pod's problem: refused while pending, a warning once bound.
TEST_F(ExtenderHttp, ABoundPodsWrongPreferenceDoesNotFenceItsNode) {
  std::string cluster = ListJson({NvidiaNode("n1", 8, "nvidia").ToJson(),
                                  Running("odd", "n1", {WholeGpus("c", 2)}, {{"gpusched.io/node-policy", "Binpack"}}).ToJson()});
  server_.Reload(cluster);
  FilterReply r = Filter(Pending("w", {WholeGpus("c", 1)}), {"n1"});
  EXPECT_THAT(r.names, ElementsAre("n1"));
  rapidjson::Document inv = Inventory("n1");
  EXPECT_STREQ(inv["nodes"][0]["state"].GetString(), "ready");
  EXPECT_THAT(inv["nodes"][0]["allocations"][0]["warning"].GetString(),
              HasSubstr("ignored: annotation gpusched.io/node-policy=\"Binpack\""));
  EXPECT_EQ(inv["nodes"][0]["wholeGpus"]["used"].GetInt64(), 2);
  r = Filter(Pending("p", {WholeGpus("c", 1)}, {{"gpusched.io/node-policy", "Binpack"}}), {"n1"});
  EXPECT_THAT(r.unresolvable["n1"], HasSubstr("annotation gpusched.io/node-policy=\"Binpack\": want one of"));
}

TEST_F(ExtenderHttp, InitAndAppContainersTakeTurnsOnOneIdleGpu) {
  std::string cluster = ListJson({MgpuNode("one", 1, 24000).ToJson()});
  server_.Reload(cluster);
  PodJson pod = Pending("turns", {Mgpu("app", 60, 12000)});
  pod.init_containers = {Mgpu("warmup", 60, 12000)};
  ASSERT_THAT(Filter(pod, {"one"}).names, ElementsAre("one"));
  EXPECT_EQ(Bind(pod, "one"), "");
  rapidjson::Document inv = Inventory("one");
  EXPECT_EQ(inv["nodes"][0]["gpus"][0]["usedCorePercent"].GetInt64(), 60);
  EXPECT_EQ(inv["nodes"][0]["gpus"][0]["usedMemoryMiB"].GetInt64(), 12000);
  EXPECT_STREQ(inv["nodes"][0]["allocations"][0]["containers"][0]["runs"].GetString(), "init");
  // 60% of the GPU is still free for another 40% pod.
  EXPECT_THAT(Filter(Pending("more", {Mgpu("c", 40, 12000)}), {"one"}).names, ElementsAre("one"));
}

TEST_F(ExtenderHttp, ContainerNamesTooLongForTheResultAnnotationAreRefusedAtFilter) {
  FilterReply r = Filter(Pending("long", {Mgpu(std::string(44, 'x'), 30, 1024)}), {"mgpu"});
  EXPECT_THAT(r.unresolvable["mgpu"], HasSubstr("would exceed the API server's 63-character limit"));
  EXPECT_THAT(Filter(Pending("ok", {Mgpu(std::string(43, 'x'), 30, 1024)}), {"mgpu"}).names, ElementsAre("mgpu"));
}

TEST_F(ExtenderHttp, AnUnknownComputePolicyLabelIsNamedInEveryAnswer) {
  server_.Reload(ListJson({MgpuNode("turbo", 4, 24000, "turbo-share").ToJson()}));
  for (const PodJson& pod : {Pending("part", {Mgpu("c", 30, 1024)}), Pending("whole", {Mgpu("c", 100, std::nullopt)})}) {
    EXPECT_THAT(Filter(pod, {"turbo"}).unresolvable["turbo"],
                HasSubstr("node label vke.volcengine.com/mgpu-compute-policy=\"turbo-share\" is not an mGPU compute "
                          "policy"));
  }
  EXPECT_STREQ(Inventory("turbo")["nodes"][0]["state"].GetString(), "invalid");
}

// isFullCardGPUPod: whole cards without container-multiple-gpu take idle GPUs whatever the policy.
TEST_F(ExtenderHttp, WholeCardPodsIgnoreTheComputePolicy) {
  EXPECT_THAT(Filter(Pending("cards", {Mgpu("c", 200, std::nullopt)}), {"burst"}).names, ElementsAre("burst"));
  EXPECT_THAT(Filter(Pending("part", {Mgpu("c", 30, 1024)}), {"burst"}).unresolvable["burst"],
              HasSubstr("compute policy vke.volcengine.com/mgpu-compute-policy: pod has fixed-share, node has native-burst-share"));
}

}  // namespace extender_http_test
}  // namespace gpusched::testing
