// Issue "Real cluster input" §3: under the shipped kube-scheduler configurations every GPU pod
// reaches gpusched: pods that ask for nvidia.com/gpu or mGPU, and pods that ask for GPUs only
// through ResourceClaims. And pods without GPUs pass through: every node kept, no score, bound.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cluster_json.h"
#include "dra_json.h"
#include "http_client.h"
#include "test_server.h"

namespace gpusched::testing {
namespace routing_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kRoot = GPUSCHED_SOURCE_DIR;

// A pod as kube-scheduler's IsInterested sees it: the resource names its containers and init
// containers request or limit.
struct PodResources {
  std::string name;
  std::set<std::string> resources;
};

// kube-scheduler's HTTPExtender.IsInterested (pkg/scheduler/extender.go): with no
// managedResources, every pod; otherwise only pods whose containers or init containers name one of
// them in requests or limits. It gates filter, prioritize, preempt and bind alike.
bool IsInterested(const YAML::Node& extender, const PodResources& pod) {
  const YAML::Node& managed = extender["managedResources"];
  if (!managed || managed.size() == 0) return true;
  for (const YAML::Node& m : managed) {
    if (pod.resources.contains(m["name"].as<std::string>())) return true;
  }
  return false;
}

std::string Read(const std::string& relative) {
  std::ifstream in(kRoot + "/" + relative);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every KubeSchedulerConfiguration shipped: the files in scheduler-config/ and those the
// Deployments mount from deploy/<variant>/configmap.yaml. Named "<file>#<document>".
std::vector<std::pair<std::string, YAML::Node>> ShippedSchedulerConfigs() {
  std::vector<std::pair<std::string, YAML::Node>> out;
  for (const auto& entry : std::filesystem::directory_iterator(kRoot + "/scheduler-config")) {
    std::string file = "scheduler-config/" + entry.path().filename().string();
    int i = 0;
    for (const YAML::Node& d : YAML::LoadAll(Read(file))) {
      if (d["kind"].as<std::string>("") == "KubeSchedulerConfiguration") out.emplace_back(fmt::format("{}#{}", file, i), d);
      ++i;
    }
  }
  for (const char* variant : {"cache", "mtls", "dra-owner"}) {
    std::string file = fmt::format("deploy/{}/configmap.yaml", variant);
    for (const YAML::Node& d : YAML::LoadAll(Read(file))) {
      if (d["data"] && d["data"]["kube-scheduler-config.yaml"]) {
        out.emplace_back(file, YAML::Load(d["data"]["kube-scheduler-config.yaml"].as<std::string>()));
      }
    }
  }
  return out;
}

TEST(Routing, EveryShippedConfigSendsEveryGpuPodToGpusched) {
  std::vector<PodResources> pods = {{"claims-only (DRA)", {}},
                                    {"nvidia.com/gpu", {"nvidia.com/gpu"}},
                                    {"mGPU", {"vke.volcengine.com/mgpu-core", "vke.volcengine.com/mgpu-memory"}}};
  std::vector<std::pair<std::string, YAML::Node>> configs = ShippedSchedulerConfigs();
  ASSERT_EQ(configs.size(), 7u);
  for (const auto& [name, config] : configs) {
    ASSERT_TRUE(config["extenders"]) << name;
    for (const YAML::Node& e : config["extenders"]) {
      for (const PodResources& pod : pods) EXPECT_TRUE(IsInterested(e, pod)) << name << ": " << pod.name;
    }
    // Extenders are shared by every profile of an instance: one profile, the GPU scheduler's.
    ASSERT_EQ(config["profiles"].size(), 1u) << name;
    EXPECT_EQ(config["profiles"][0]["schedulerName"].as<std::string>(), "gpu-scheduler") << name;
  }
  // The check can fail: the managedResources the configs used to carry left claims-only pods out.
  YAML::Node managed = YAML::Load("{managedResources: [{name: nvidia.com/gpu}]}");
  EXPECT_FALSE(IsInterested(managed, pods[0]));
  EXPECT_TRUE(IsInterested(managed, pods[1]));
}

TEST(Routing, DraOwnerModeIsAnInstanceOfItsOwnWithoutTheDynamicResourcesPlugin) {
  int owners = 0;
  for (const auto& [name, config] : ShippedSchedulerConfigs()) {
    bool disabled = false;
    for (const YAML::Node& p : config["profiles"]) {
      if (!p["plugins"] || !p["plugins"]["multiPoint"] || !p["plugins"]["multiPoint"]["disabled"]) continue;
      for (const YAML::Node& off : p["plugins"]["multiPoint"]["disabled"]) {
        disabled = disabled || off["name"].as<std::string>() == "DynamicResources";
      }
    }
    if (!disabled) continue;
    ++owners;
    EXPECT_THAT(name, HasSubstr("dra-owner")) << name;
    EXPECT_EQ(config["profiles"].size(), 1u) << name;
  }
  EXPECT_EQ(owners, 2);  // scheduler-config/ and the ConfigMap of deploy/dra-owner
}

// The verbs at the URLs the shipped config names, for the three kinds of pod that reach them.
TEST(Routing, TheShippedVerbsServeClaimsOnlyWholeGpuAndGpuLessPods) {
  YAML::Node e = YAML::Load(Read("scheduler-config/kube-scheduler-config.yaml"))["extenders"][0];
  std::string url = e["urlPrefix"].as<std::string>();
  std::string prefix = url.substr(url.find('/', url.find("//") + 2));
  auto at = [&](const char* verb) { return prefix + "/" + e[verb].as<std::string>(); };
  TestServer server(ListJson({DraNode("dra-1"), GpuSlice("dra-1", 2), std::string(kGpuClass),
                              Claim("one-gpu", ClaimSpec(1, "")), NvidiaNode("whole-1", 8, "nvidia").ToJson()}),
                    {}, prefix);
  HttpClient client(server.port());
  std::vector<std::string> nodes = {"dra-1", "whole-1"};

  std::string dra = ClaimPod("dra-pod", "one-gpu");
  EXPECT_THAT(client.Post(at("filterVerb"), ArgsWithNames(dra, nodes)).body, HasSubstr(R"("NodeNames":["dra-1"])"));
  EXPECT_THAT(client.Post(at("prioritizeVerb"), ArgsWithNames(dra, nodes)).body, HasSubstr(R"({"Host":"dra-1","Score":10})"));

  std::string whole = PodJson{.name = "w", .uid = "uid-w", .containers = {WholeGpus("c", 1)}}.ToJson();
  // The class maps nvidia.com/gpu (KEP 5004), so dra-1 serves it through DRA as well.
  EXPECT_THAT(client.Post(at("filterVerb"), ArgsWithNames(whole, nodes)).body, HasSubstr(R"("NodeNames":["dra-1","whole-1"])"));
  EXPECT_THAT(client.Post(at("bindVerb"), BindJson("w", "default", "uid-w", "whole-1")).body, HasSubstr(R"("Error":"")"));
  // whole-1 is not full: a higher-priority pod of 8 GPUs needs w gone (kube-scheduler's
  // placeholder candidate), and a claims-only pod's placeholder is dropped.
  PodJson big{.name = "big", .uid = "uid-big", .containers = {WholeGpus("c", 8)}, .priority = 100};
  EXPECT_EQ(client.Post(at("preemptVerb"), PreemptMetaJson(big.ToJson(), {{"whole-1", {}}})).body,
            R"({"NodeNameToMetaVictims":{"whole-1":{"Pods":[{"UID":"uid-w"}],"NumPDBViolations":0}}})");
  EXPECT_EQ(client.Post(at("preemptVerb"), PreemptMetaJson(dra, {{"dra-1", {}}})).body, R"({"NodeNameToMetaVictims":{}})");

  // A pod without GPUs: every node kept, no score, bound.
  std::string web = PodJson{.name = "web", .uid = "uid-web", .containers = {ContainerJson{.name = "c"}}}.ToJson();
  EXPECT_THAT(client.Post(at("filterVerb"), ArgsWithNames(web, nodes)).body, HasSubstr(R"("NodeNames":["dra-1","whole-1"])"));
  EXPECT_EQ(client.Post(at("prioritizeVerb"), ArgsWithNames(web, nodes)).body, "[]");
  EXPECT_THAT(client.Post(at("bindVerb"), BindJson("web", "default", "uid-web", "dra-1")).body, HasSubstr(R"("Error":"")"));
}

}  // namespace routing_test
}  // namespace gpusched::testing
