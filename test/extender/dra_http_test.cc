// DRA end to end: nvidia-dra nodes with ResourceSlices, DeviceClasses and ResourceClaims in a
// real Kubernetes List, a real server, filter/prioritize/debug over a real socket.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <map>
#include <set>

#include "cluster_json.h"
#include "gpusched/json/json.h"
#include "http_client.h"
#include "test_server.h"

namespace gpusched::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::string_view kGpuClass = R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"gpu.nvidia.com"},
  "spec":{"selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],
          "extendedResourceName":"nvidia.com/gpu"}})";

std::string DraNode(const std::string& name, const std::string& mode = "nvidia-dra") {
  return fmt::format(R"({{"apiVersion":"v1","kind":"Node","metadata":{{"name":"{}","labels":{{"vke.node.gpu.schedule":"{}",
    "topology.kubernetes.io/zone":"z1"}}}},"status":{{"allocatable":{{"cpu":"64"}}}}}})",
                     name, mode);
}

// A node's slice of `n` GPUs of `product`, two per PCIe root, as the NVIDIA driver publishes it.
std::string GpuSlice(const std::string& node, int n, const std::string& product = "NVIDIA H100 80GB HBM3") {
  std::string devices;
  for (int i = 0; i < n; ++i) {
    if (i > 0) devices += ',';
    devices += fmt::format(R"({{"name":"gpu-{0}","attributes":{{"type":{{"string":"gpu"}},"productName":{{"string":"{1}"}},
      "uuid":{{"string":"GPU-{2}-{0}"}},"driverVersion":{{"version":"570.124.6"}},
      "resource.kubernetes.io/pcieRoot":{{"string":"pci0000:{3}"}}}},"capacity":{{"memory":{{"value":"81559Mi"}}}}}})",
                           i, product, node, 10 + i / 2);
  }
  return fmt::format(R"({{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{{"name":"{0}-gpu.nvidia.com-x"}},
    "spec":{{"driver":"gpu.nvidia.com","nodeName":"{0}","pool":{{"name":"{0}","generation":1,"resourceSliceCount":1}},
    "devices":[{1}]}}}})",
                     node, devices);
}

std::string ClaimSpec(int count, const std::string& selector) {
  std::string selectors = selector.empty() ? "" : fmt::format(R"(,"selectors":[{{"cel":{{"expression":{}}}}}])", selector);
  return fmt::format(R"({{"devices":{{"requests":[{{"name":"gpus","exactly":{{"deviceClassName":"gpu.nvidia.com","count":{}{}}}}}]}}}})",
                     count, selectors);
}

std::string Quoted(std::string_view s) {
  std::string out;
  json::AppendString(&out, s);
  return out;
}

const std::string kH100Selector = Quoted(
    "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3' && "
    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('79Gi')) >= 0");

// A claim; `allocated` lists "node/gpu-i" devices of its status.allocation, `reserved` pod uids.
std::string Claim(const std::string& name, const std::string& spec, const std::vector<std::string>& allocated = {},
                  const std::vector<std::string>& reserved = {}) {
  std::string status;
  if (!allocated.empty()) {
    std::string results, node;
    for (size_t i = 0; i < allocated.size(); ++i) {
      node = allocated[i].substr(0, allocated[i].find('/'));
      std::string device = allocated[i].substr(allocated[i].find('/') + 1);
      results += fmt::format(R"({}{{"request":"gpus","driver":"gpu.nvidia.com","pool":"{}","device":"{}"}})", i ? "," : "", node, device);
    }
    std::string reserved_for;
    for (size_t i = 0; i < reserved.size(); ++i) {
      reserved_for += fmt::format(R"({}{{"resource":"pods","name":"p-{}","uid":"{}"}})", i ? "," : "", reserved[i], reserved[i]);
    }
    status = fmt::format(R"(,"status":{{"allocation":{{"devices":{{"results":[{}]}},
      "nodeSelector":{{"nodeSelectorTerms":[{{"matchFields":[{{"key":"metadata.name","operator":"In","values":["{}"]}}]}}]}}}},
      "reservedFor":[{}]}})",
                         results, node, reserved_for);
  }
  return fmt::format(R"({{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{{"name":"{}","namespace":"ml",
    "uid":"uid-{}"}},"spec":{}{}}})",
                     name, name, spec, status);
}

// A pod with one named claim ("gpus" → `claim`), pending or bound to `node`.
std::string ClaimPod(const std::string& name, const std::string& claim, const std::string& node = "") {
  return fmt::format(R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{0}","namespace":"ml","uid":"{0}","resourceVersion":"7"}},
    "spec":{{{1}"containers":[{{"name":"main","resources":{{"claims":[{{"name":"gpus"}}]}}}}],
    "resourceClaims":[{{"name":"gpus","resourceClaimName":"{2}"}}]}},"status":{{"phase":"{3}"}}}})",
                     name, node.empty() ? "" : fmt::format(R"("nodeName":"{}",)", node), claim, node.empty() ? "Pending" : "Running");
}

struct Filtered {
  std::vector<std::string> kept;
  std::map<std::string, std::string> failed;
  std::string error;
};

Filtered Filter(uint16_t port, const std::string& pod, const std::vector<std::string>& names) {
  HttpReply r = HttpClient(port).Post("/filter", ArgsWithNames(pod, names));
  EXPECT_EQ(r.status, 200);
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(r.body, &d).ok()) << r.body;
  Filtered out;
  if (d["NodeNames"].IsArray()) {
    for (const auto& n : d["NodeNames"].GetArray()) out.kept.emplace_back(n.GetString());
  }
  for (const char* key : {"FailedNodes", "FailedAndUnresolvableNodes"}) {
    if (!d[key].IsObject()) continue;
    for (auto it = d[key].MemberBegin(); it != d[key].MemberEnd(); ++it) out.failed[it->name.GetString()] = it->value.GetString();
  }
  out.error = d["Error"].GetString();
  return out;
}

std::map<std::string, int64_t> Prioritize(uint16_t port, const std::string& pod, const std::vector<std::string>& names) {
  HttpReply r = HttpClient(port).Post("/prioritize", ArgsWithNames(pod, names));
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(r.body, &d).ok()) << r.body;
  std::map<std::string, int64_t> out;
  for (const auto& h : d.GetArray()) out[h["Host"].GetString()] = h["Score"].GetInt64();
  return out;
}

TEST(DraHttp, FilterKeepsNodesWhereTheClaimFitsAndSaysWhyElsewhere) {
  std::vector<std::string> taken;
  for (int i = 0; i < 7; ++i) taken.push_back(fmt::format("dra-b/gpu-{}", i));
  TestServer server(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 8), DraNode("dra-b"), GpuSlice("dra-b", 8), DraNode("dra-c"),
                              GpuSlice("dra-c", 8, "NVIDIA A100-SXM4-80GB"), DraNode("whole-1", "nvidia"), GpuSlice("whole-1", 8),
                              std::string(kGpuClass), Claim("train", ClaimSpec(2, kH100Selector)),
                              Claim("other", ClaimSpec(7, ""), taken, {"o"})}));
  Filtered f = Filter(server.port(), ClaimPod("trainer", "train"), {"dra-a", "dra-b", "dra-c", "whole-1", "nowhere"});
  EXPECT_EQ(f.error, "");
  EXPECT_THAT(f.kept, ElementsAre("dra-a"));
  EXPECT_THAT(f.failed["dra-b"], HasSubstr("claim ml/train: request gpus: 1 of 2 devices available (8 of 8 devices match class "
                                           "gpu.nvidia.com and 1 selector, 1 of those free)"));
  EXPECT_THAT(f.failed["dra-c"], HasSubstr("request gpus: 0 of 2 devices available (0 of 8 devices match"));
  EXPECT_THAT(f.failed["whole-1"], HasSubstr("node mode nvidia; pod claims GPUs through DRA"));
  EXPECT_EQ(f.failed["nowhere"], "node is not in gpusched's inventory");
}

TEST(DraHttp, PrioritizeRanksTopologyAndPackingAndDebugShowsBothChoices) {
  // dra-a: gpu-0 is taken, so upstream's first fit is gpu-1 + gpu-2 (two PCIe roots); the ranked
  // choice keeps the pair under one root (gpu-2 + gpu-3). dra-d is idle: both pick gpu-0 + gpu-1.
  TestServer server(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 8), DraNode("dra-d"), GpuSlice("dra-d", 8), std::string(kGpuClass),
                              Claim("train", ClaimSpec(2, kH100Selector)), Claim("busy", ClaimSpec(1, ""), {"dra-a/gpu-0"}, {"b"})}));
  std::string pod = ClaimPod("trainer", "train");
  ASSERT_THAT(Filter(server.port(), pod, {"dra-a", "dra-d"}).kept, ElementsAre("dra-a", "dra-d"));
  std::map<std::string, int64_t> scores = Prioritize(server.port(), pod, {"dra-a", "dra-d"});
  EXPECT_GT(scores["dra-a"], scores["dra-d"]);  // both aligned; dra-a leaves fewer idle GPUs

  HttpReply debug = HttpClient(server.port()).Get("/debug/inventory?node=dra-a");
  rapidjson::Document d;
  ASSERT_TRUE(json::Parse(debug.body, &d).ok()) << debug.body;
  const auto& decisions = d["dra"]["decisions"];
  ASSERT_EQ(decisions.Size(), 1u) << debug.body;
  auto devices = [](const rapidjson::Value& choice) {
    std::vector<std::string> out;
    for (const auto& r : choice[0]["devices"]["results"].GetArray()) out.emplace_back(r["device"].GetString());
    return out;
  };
  EXPECT_EQ(std::string(decisions[0]["pod"].GetString()), "ml/trainer");
  EXPECT_THAT(devices(decisions[0]["upstreamChoice"]), ElementsAre("gpu-1", "gpu-2"));
  EXPECT_THAT(devices(decisions[0]["rankedChoice"]), ElementsAre("gpu-2", "gpu-3"));
  EXPECT_TRUE(decisions[0]["topologyAligned"].GetBool());
  // The node's devices and who holds them.
  EXPECT_EQ(std::string(d["dra"]["nodes"]["dra-a"][0]["heldBy"].GetString()), "ml/busy");
}

TEST(DraHttp, MalformedObjectsAnswerErrorsThatNameThemAndTheServerKeepsServing) {
  std::string bad_slice = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"broken"},
    "spec":{"driver":"gpu.nvidia.com","nodeName":"dra-a","pool":{"name":"p","generation":1,"resourceSliceCount":1},
    "devices":[{"name":"gpu-9","capacity":{"memory":{"value":"12 apples"}}}]}})";
  TestServer server(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 8), bad_slice, std::string(kGpuClass),
                              Claim("bad-cel", ClaimSpec(1, Quoted("device.attributes['gpu.nvidia.com'].productName =="))),
                              Claim("no-class", R"({"devices":{"requests":[{"name":"gpus","exactly":{"deviceClassName":"tpu.example.com"}}]}})"),
                              Claim("missing-key", ClaimSpec(1, Quoted("device.attributes['gpu.nvidia.com'].index == 0")))}));
  EXPECT_THAT(Filter(server.port(), ClaimPod("p1", "bad-cel"), {"dra-a"}).error,
              HasSubstr("claim ml/bad-cel: selector #0: CEL compile error: CEL syntax error at offset"));
  EXPECT_THAT(Filter(server.port(), ClaimPod("p2", "no-class"), {"dra-a"}).error,
              HasSubstr("claim ml/no-class, request gpus: could not retrieve device class tpu.example.com"));
  EXPECT_THAT(Filter(server.port(), ClaimPod("p3", "missing-key"), {"dra-a"}).error,
              HasSubstr("claim ml/missing-key: selector #0: CEL runtime error: no such key: index"));
  EXPECT_EQ(Filter(server.port(), ClaimPod("p4", "nope"), {"dra-a"}).error, "pod ml/p4: resourceclaim ml/nope (claim gpus) not found");
  std::string templated = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p5","namespace":"ml","uid":"p5"},
    "spec":{"containers":[{"name":"c"}],"resourceClaims":[{"name":"gpus","resourceClaimTemplateName":"pair"}]}})";
  EXPECT_THAT(Filter(server.port(), templated, {"dra-a"}).error, HasSubstr("claim gpus from template pair is not created yet"));
  // The broken slice is left out, and said so; the good one still serves.
  HttpReply debug = HttpClient(server.port()).Get("/debug/inventory");
  EXPECT_THAT(debug.body, HasSubstr(R"(ResourceSlice broken.spec.devices[0].capacity[\"memory\"].value)"));
  server.Reload(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 8), std::string(kGpuClass), Claim("ok", ClaimSpec(1, ""))}));
  EXPECT_THAT(Filter(server.port(), ClaimPod("p6", "ok"), {"dra-a"}).kept, ElementsAre("dra-a"));
}

TEST(DraHttp, AClaimSharedByTwoPodsIsAllocatedOnceAndTheSecondPodFollowsIt) {
  TestServer server(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 2), DraNode("dra-d"), GpuSlice("dra-d", 2), std::string(kGpuClass),
                              Claim("shared", ClaimSpec(2, ""), {"dra-a/gpu-0", "dra-a/gpu-1"}, {"first"}),
                              Claim("solo", ClaimSpec(1, ""))}));
  // The second consumer of the shared claim goes where its devices are.
  Filtered f = Filter(server.port(), ClaimPod("second", "shared"), {"dra-a", "dra-d"});
  EXPECT_THAT(f.kept, ElementsAre("dra-a"));
  EXPECT_THAT(f.failed["dra-d"], HasSubstr("claim ml/shared is allocated to devices this node cannot use"));
  // Its devices are taken for everyone else.
  f = Filter(server.port(), ClaimPod("third", "solo"), {"dra-a", "dra-d"});
  EXPECT_THAT(f.kept, ElementsAre("dra-d"));
  EXPECT_THAT(f.failed["dra-a"], HasSubstr("0 of 1 device available (2 of 2 devices match class gpu.nvidia.com, 0 of those free)"));
}

TEST(DraHttp, BoundPodsHoldTheirClaimsDevicesInTheLedgerAndBlockAModeSwitch) {
  auto cluster = [](const std::string& mode) {
    return ListJson({DraNode("dra-a", mode), GpuSlice("dra-a", 2), std::string(kGpuClass),
                     Claim("train", ClaimSpec(2, ""), {"dra-a/gpu-0", "dra-a/gpu-1"}, {"trainer"}),
                     ClaimPod("trainer", "train", "dra-a")});
  };
  TestServer server(cluster("nvidia-dra"));
  HttpReply debug = HttpClient(server.port()).Get("/debug/inventory?node=dra-a");
  rapidjson::Document d;
  ASSERT_TRUE(json::Parse(debug.body, &d).ok());
  const auto& alloc = d["nodes"][0]["allocations"][0];
  EXPECT_EQ(std::string(alloc["mode"].GetString()), "nvidia-dra");
  EXPECT_EQ(std::string(alloc["devices"][1].GetString()), "gpu.nvidia.com/dra-a/gpu-1");
  // Relabelled to mgpu while the pod runs: the node is switching and says which pod blocks it.
  server.Reload(cluster("mgpu"));
  debug = HttpClient(server.port()).Get("/debug/inventory?node=dra-a");
  EXPECT_THAT(debug.body, HasSubstr("node is switching from nvidia-dra to mgpu: 1 GPU pod of the old mode still runs (ml/trainer)"));
}

}  // namespace
}  // namespace gpusched::testing
