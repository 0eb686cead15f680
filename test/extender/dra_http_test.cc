// DRA end to end: nvidia-dra nodes with ResourceSlices, DeviceClasses and ResourceClaims in a
// real Kubernetes List, a real server, filter/prioritize/debug over a real socket.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <map>
#include <set>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/extender/inventory_claim_writer.h"
#include "gpusched/json/json.h"
#include "http_client.h"
#include "test_server.h"

namespace gpusched::testing {
namespace dra_http_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Filtered {
  std::vector<std::string> kept;
  std::map<std::string, std::string> failed;  // FailedNodes and FailedAndUnresolvableNodes
  std::set<std::string> unresolvable;         // the nodes of FailedAndUnresolvableNodes
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
    for (auto it = d[key].MemberBegin(); it != d[key].MemberEnd(); ++it) {
      out.failed[it->name.GetString()] = it->value.GetString();
      if (std::string_view(key) == "FailedAndUnresolvableNodes") out.unresolvable.insert(it->name.GetString());
    }
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
  // Preemption cannot help where the mode refuses: those are unresolvable, as in the other modes.
  EXPECT_THAT(f.unresolvable, ElementsAre("nowhere", "whole-1"));
}

TEST(DraHttp, PodsOfOneClaimShapeGetTheSameAnswersEachNamingItsOwnClaim) {
  // The second and third pods are answered from the verdicts kept for the first (one shape).
  std::vector<std::string> taken;
  for (int i = 0; i < 7; ++i) taken.push_back(fmt::format("dra-b/gpu-{}", i));
  TestServer server(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 8), DraNode("dra-b"), GpuSlice("dra-b", 8), std::string(kGpuClass),
                              Claim("train-1", ClaimSpec(2, kH100Selector)), Claim("train-2", ClaimSpec(2, kH100Selector)),
                              Claim("other", ClaimSpec(7, ""), taken, {"o"})}));
  for (const char* claim : {"train-1", "train-2", "train-1"}) {
    Filtered f = Filter(server.port(), ClaimPod(std::string("p-") + claim, claim), {"dra-a", "dra-b"});
    EXPECT_THAT(f.kept, ElementsAre("dra-a"));
    EXPECT_THAT(f.failed["dra-b"], HasSubstr(fmt::format("claim ml/{}: request gpus: 1 of 2 devices available", claim)));
    std::map<std::string, int64_t> scores = Prioritize(server.port(), ClaimPod(std::string("p-") + claim, claim), {"dra-a", "dra-b"});
    EXPECT_GT(scores["dra-a"], 0);
    EXPECT_EQ(scores.count("dra-b"), 0u);
  }
}

TEST(DraHttp, FilterCountsEachDraRefusalUnderItsOwnCause) {
  std::vector<std::string> taken;
  for (int i = 0; i < 8; ++i) taken.push_back(fmt::format("dra-full/gpu-{}", i));
  TestServer server(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 8), DraNode("dra-full"), GpuSlice("dra-full", 8),
                              DraNode("whole-1", "nvidia"), GpuSlice("whole-1", 8), DraNode("odd", "nvidia_dra"), GpuSlice("odd", 2),
                              std::string(kGpuClass), Claim("train", ClaimSpec(1, "")), Claim("other", ClaimSpec(8, ""), taken, {"o"})}));
  Filter(server.port(), ClaimPod("trainer", "train"), {"dra-a", "dra-full", "whole-1", "odd"});
  HttpReply m = HttpClient(server.port()).Get("/metrics");
  EXPECT_THAT(m.body, HasSubstr(R"(gpusched_filter_decisions_total{result="fit"} 1)"));
  EXPECT_THAT(m.body, HasSubstr(R"(gpusched_filter_decisions_total{result="insufficient"} 1)"));
  EXPECT_THAT(m.body, HasSubstr(R"(gpusched_filter_decisions_total{result="mode_mismatch"} 1)"));
  EXPECT_THAT(m.body, HasSubstr(R"(gpusched_filter_decisions_total{result="invalid_label"} 1)"));
}

TEST(DraHttp, PrioritizeGivesNoScoreWhereTheRequestItselfIsAtFault) {
  TestServer server(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 8), std::string(kGpuClass),
                              Claim("bad-cel", ClaimSpec(1, Quoted("device.attributes['gpu.nvidia.com'].productName =="))),
                              Claim("ok", ClaimSpec(1, ""))}));
  EXPECT_EQ(Prioritize(server.port(), ClaimPod("p1", "bad-cel"), {"dra-a"})["dra-a"], 0);
  EXPECT_GT(Prioritize(server.port(), ClaimPod("p2", "ok"), {"dra-a"})["dra-a"], 0);
}

TEST(DraHttp, AnInvalidLabelRefusesClaimPodsUnresolvably) {
  TestServer server(ListJson({DraNode("odd", "nvidia_dra"), GpuSlice("odd", 2), std::string(kGpuClass),
                              Claim("one", ClaimSpec(1, ""))}));
  Filtered f = Filter(server.port(), ClaimPod("p", "one"), {"odd"});
  EXPECT_THAT(f.failed["odd"], HasSubstr("node label vke.node.gpu.schedule=\"nvidia_dra\" is not a GPU scheduling mode"));
  EXPECT_THAT(f.unresolvable, ElementsAre("odd"));
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

// A DeviceTaintRule as the API server writes it (1.36: v1beta2; 1.33-1.35: v1alpha3).
std::string TaintRule(const std::string& name, const std::string& version, const std::string& selector, const std::string& effect) {
  return fmt::format(R"({{"apiVersion":"resource.k8s.io/{}","kind":"DeviceTaintRule","metadata":{{"name":"{}","uid":"r-{}",
    "resourceVersion":"41","generation":1,"creationTimestamp":"2026-12-01T08:00:00Z"}},
    "spec":{{"deviceSelector":{},"taint":{{"key":"gpu.nvidia.com/xid","value":"79","effect":"{}","timeAdded":"2026-12-01T08:00:00Z"}}}},
    "status":{{"conditions":[]}}}})",
                     version, name, name, selector, effect);
}

// Upstream (ListWithDeviceTaintRules) allocates against slices with the rules' taints merged in:
// a device a rule taints NoSchedule is only for claims that tolerate it.
TEST(DraHttp, DeviceTaintRulesKeepClaimsOffTheDevicesTheyTaint) {
  std::string tolerating = R"({"devices":{"requests":[{"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com","count":2,
    "tolerations":[{"key":"gpu.nvidia.com/xid","operator":"Exists","effect":"NoSchedule"}]}}]}})";
  std::string by_class = R"({"deviceClassName":"gpu.nvidia.com"})";
  TestServer server(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 2), std::string(kGpuClass), Claim("two", ClaimSpec(2, "")),
                              Claim("one", ClaimSpec(1, "")), Claim("tolerant", tolerating),
                              TaintRule("xid-79", "v1beta2", R"({"driver":"gpu.nvidia.com","pool":"dra-a","device":"gpu-0"})", "NoSchedule"),
                              TaintRule("old", "v1alpha3", by_class, "NoExecute")}));
  Filtered two = Filter(server.port(), ClaimPod("p1", "two"), {"dra-a"});
  EXPECT_THAT(two.kept, ::testing::IsEmpty());
  EXPECT_THAT(two.failed["dra-a"], HasSubstr("taint"));
  EXPECT_THAT(Filter(server.port(), ClaimPod("p2", "one"), {"dra-a"}).kept, ElementsAre("dra-a"));
  EXPECT_THAT(Filter(server.port(), ClaimPod("p3", "tolerant"), {"dra-a"}).kept, ElementsAre("dra-a"));
  // A v1alpha3 rule selecting by class cannot be applied exactly: it is refused, and named.
  HttpReply debug = HttpClient(server.port()).Get("/debug/inventory");
  EXPECT_THAT(debug.body, HasSubstr("DeviceTaintRule old.spec.deviceSelector: deviceClassName and selectors (v1alpha3) are not supported"));
  // The rule withdrawn, the device serves every claim again.
  server.Reload(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 2), std::string(kGpuClass), Claim("two", ClaimSpec(2, ""))}));
  EXPECT_THAT(Filter(server.port(), ClaimPod("p1", "two"), {"dra-a"}).kept, ElementsAre("dra-a"));
}

// A NoExecute taint on a device in use (here from a rule added after the pod started): the pod is
// shown as the device's blocker, to be evicted by Kubernetes' device taint eviction controller.
TEST(DraHttp, APodOnADeviceWithAnUntoleratedNoExecuteTaintIsShownAsItsBlocker) {
  TestServer server(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 2), std::string(kGpuClass),
                              Claim("train", ClaimSpec(1, ""), {"dra-a/gpu-1"}, {"trainer"}), ClaimPod("trainer", "train", "dra-a"),
                              TaintRule("xid-48", "v1", R"({"pool":"dra-a","device":"gpu-1"})", "NoExecute")}));
  rapidjson::Document d;
  ASSERT_TRUE(json::Parse(HttpClient(server.port()).Get("/debug/inventory?node=dra-a").body, &d).ok());
  const rapidjson::Value& devices = d["dra"]["nodes"]["dra-a"];
  ASSERT_EQ(devices.Size(), 2u);
  EXPECT_EQ(devices[0]["blockers"].Size(), 0u);
  EXPECT_EQ(std::string(devices[1]["taints"][0].GetString()), "gpu.nvidia.com/xid=79:NoExecute");
  ASSERT_EQ(devices[1]["blockers"].Size(), 1u);
  EXPECT_EQ(std::string(devices[1]["blockers"][0]["pod"].GetString()), "ml/trainer");
  EXPECT_EQ(std::string(devices[1]["blockers"][0]["taint"].GetString()), "gpu.nvidia.com/xid=79:NoExecute");
}

// adminAccess is admission's privilege of namespaces labelled resource.kubernetes.io/admin-access
// =true; with Namespaces known the allocator applies it again (a label removed after the claim was
// made). A snapshot without Namespaces leaves the rule to admission.
TEST(DraHttp, AdminAccessNeedsTheNamespaceLabelWhenNamespacesAreKnown) {
  std::string admin = R"({"devices":{"requests":[{"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com","adminAccess":true}}]}})";
  auto ns = [](bool labelled) {
    return fmt::format(R"({{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"ml","uid":"ns-ml","resourceVersion":"12",
      "labels":{{"kubernetes.io/metadata.name":"ml"{}}}}},"spec":{{"finalizers":["kubernetes"]}},"status":{{"phase":"Active"}}}})",
                       labelled ? R"(,"resource.kubernetes.io/admin-access":"true")" : "");
  };
  auto cluster = [&](std::vector<std::string> extra) {
    std::vector<std::string> items = {DraNode("dra-a"), GpuSlice("dra-a", 2), std::string(kGpuClass), Claim("monitor", admin)};
    for (std::string& e : extra) items.push_back(std::move(e));
    return ListJson(items);
  };
  TestServer server(cluster({ns(false)}));
  EXPECT_THAT(Filter(server.port(), ClaimPod("probe", "monitor"), {"dra-a"}).error,
              HasSubstr("adminAccess requires namespace ml to be labelled resource.kubernetes.io/admin-access=true"));
  server.Reload(cluster({ns(true)}));
  EXPECT_THAT(Filter(server.port(), ClaimPod("probe", "monitor"), {"dra-a"}).kept, ElementsAre("dra-a"));
  // The label removed: no verdict kept from before answers.
  server.Reload(cluster({ns(false)}));
  EXPECT_THAT(Filter(server.port(), ClaimPod("probe", "monitor"), {"dra-a"}).error, HasSubstr("adminAccess requires namespace ml"));
  server.Reload(cluster({}));
  EXPECT_THAT(Filter(server.port(), ClaimPod("probe", "monitor"), {"dra-a"}).kept, ElementsAre("dra-a"));
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


TEST(DraHttp, EveryOtherReasonANodeIsRefusedIsNamed) {
  // A claim already reserved for 256 consumers takes no 257th; a switching nvidia-dra node takes
  // no DRA GPU pod; a node without any ResourceSlice says so.
  std::vector<std::string> consumers;
  for (int i = 0; i < 256; ++i) consumers.push_back(fmt::format("c{}", i));
  std::string old_pod = PodJson{.name = "legacy", .namespace_name = "ml", .uid = "legacy", .node = "dra-s", .phase = "Running",
                                .containers = {WholeGpus("c", 1)}}
                            .ToJson();
  TestServer server(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 2), DraNode("dra-s"), GpuSlice("dra-s", 2), DraNode("bare"),
                              std::string(kGpuClass), Claim("full", ClaimSpec(1, ""), {"dra-a/gpu-0"}, consumers),
                              Claim("train", ClaimSpec(1, "")), old_pod}));
  EXPECT_THAT(Filter(server.port(), ClaimPod("late", "full"), {"dra-a"}).failed["dra-a"],
              HasSubstr("claim ml/full is already reserved for 256 consumers"));
  Filtered f = Filter(server.port(), ClaimPod("trainer", "train"), {"dra-s", "bare"});
  EXPECT_THAT(f.failed["dra-s"], HasSubstr("node is switching from nvidia to nvidia-dra: 1 GPU pod of the old mode still runs (ml/legacy)"));
  EXPECT_EQ(f.failed["bare"], "claim ml/train: no ResourceSlice offers devices on this node");
}

// DRA nodes are ranked by the node policy, as device-plugin nodes are (the scoring library on
// each node's GPU devices), a topology-aligned choice first. dra-full: 4 of 8 GPUs held, one in
// each PCIe root, so no free pair shares a root; dra-empty: all 8 free.
TEST(DraHttp, TheNodePolicyRanksDraNodesAfterTopology) {
  std::string cluster = ListJson({DraNode("dra-full"), GpuSlice("dra-full", 8), DraNode("dra-empty"), GpuSlice("dra-empty", 8),
                                  std::string(kGpuClass),
                                  Claim("held", ClaimSpec(4, ""), {"dra-full/gpu-0", "dra-full/gpu-2", "dra-full/gpu-4", "dra-full/gpu-6"}, {"h"}),
                                  Claim("want-1", ClaimSpec(1, "")), Claim("want-2", ClaimSpec(2, ""))});
  std::vector<std::string> nodes = {"dra-full", "dra-empty"};
  TestServer binpack(cluster);
  std::map<std::string, int64_t> one = Prioritize(binpack.port(), ClaimPod("p", "want-1"), nodes);
  EXPECT_GT(one["dra-full"], one["dra-empty"]);  // binpack: the fuller node
  TestServer spread(cluster, extender::ServiceOptions{.node_policy = "spread"});
  one = Prioritize(spread.port(), ClaimPod("p", "want-1"), nodes);
  EXPECT_GT(one["dra-empty"], one["dra-full"]);  // spread: the emptier one
  // Two GPUs: only dra-empty gives a pair under one PCIe root, and that comes before packing.
  std::map<std::string, int64_t> two = Prioritize(binpack.port(), ClaimPod("p", "want-2"), nodes);
  EXPECT_GT(two["dra-empty"], two["dra-full"]);
  TestServer fgd(cluster, extender::ServiceOptions{.node_policy = "fgd"});
  EXPECT_EQ(Prioritize(fgd.port(), ClaimPod("p", "want-1"), nodes).size(), 2u);
}

// Owner mode in snapshot mode: the writer applies allocations to the in-memory claims. The
// writer needs the server's inventory, which exists only once the server does.
struct LateClaimWriter : extender::ClaimWriter {
  std::unique_ptr<extender::InventoryClaimWriter> target;
  StatusOr<dra::ResourceClaim> Write(const dra::ResourceClaim& claim, const dra::AllocationResult* result, const Pod& pod) override {
    return target->Write(claim, result, pod);
  }
  Status Unreserve(const dra::ResourceClaim& claim, const std::vector<std::string>& pods, bool deallocate) override {
    return target->Unreserve(claim, pods, deallocate);
  }
  StatusOr<dra::ResourceClaim> CreateSpecial(const dra::SpecialClaim& special, const dra::AllocationResult& result,
                                             const Pod& pod) override {
    return target->CreateSpecial(special, result, pod);
  }
};

std::string BindError(uint16_t port, const std::string& pod, const std::string& node) {
  HttpReply r = HttpClient(port).Post("/bind", BindJson(pod, "ml", pod, node));
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(r.body, &d).ok()) << r.body;
  return d["Error"].GetString();
}

// KEP 5004: the gpu.nvidia.com class maps nvidia.com/gpu (as the NVIDIA chart installs it), so a
// whole-GPU pod is served through DRA on nvidia-dra nodes, whose allocatable lists no GPUs.
TEST(DraHttp, AWholeGpuPodIsServedThroughDraOnNvidiaDraNodesWhereAClassMapsItsResource) {
  TestServer server(ListJson({DraNode("dra-small"), GpuSlice("dra-small", 2), DraNode("dra-big"), GpuSlice("dra-big", 8),
                              NvidiaNode("whole-1", 8, "nvidia").ToJson(), std::string(kGpuClass)}));
  std::vector<std::string> nodes = {"dra-small", "dra-big", "whole-1"};
  Filtered f = Filter(server.port(), ExtendedGpuPod("w", 4), nodes);
  EXPECT_EQ(f.error, "");
  EXPECT_THAT(f.kept, ElementsAre("dra-big", "whole-1"));
  EXPECT_THAT(f.failed["dra-small"], HasSubstr("request container-0-request-0: 2 of 4 devices available"));
  std::map<std::string, int64_t> scores = Prioritize(server.port(), ExtendedGpuPod("w", 4), nodes);
  EXPECT_TRUE(scores.contains("dra-big") || scores.contains("whole-1"));
  EXPECT_FALSE(scores.contains("dra-small"));
}

// Issue 31 §4: a pod whose init container asks 3 GPUs and whose app containers ask 2 + 2, as the
// API server writes it. kube-scheduler's special claim asks 4 devices: the init container runs
// before the app containers and uses their devices.
std::string InitThenTwoPod(const std::string& name) {
  return PodJson{.name = name,
                 .namespace_name = "ml",
                 .uid = name,
                 .phase = "Pending",
                 .containers = {WholeGpus("a", 2), WholeGpus("b", 2)},
                 .init_containers = {WholeGpus("warmup", 3)}}
      .ToJson();
}

TEST(DraHttp, AnInitContainerUsesTheAppContainersDevicesSoFourFreeDevicesTakeThePod) {
  TestServer server(ListJson({DraNode("dra-4"), GpuSlice("dra-4", 4), DraNode("dra-3"), GpuSlice("dra-3", 3), std::string(kGpuClass)}));
  Filtered f = Filter(server.port(), InitThenTwoPod("w"), {"dra-4", "dra-3"});
  EXPECT_EQ(f.error, "");
  EXPECT_THAT(f.kept, ElementsAre("dra-4"));
  EXPECT_THAT(f.failed["dra-3"], HasSubstr("no combination satisfies distinct devices across requests"));  // 2 + 2 of 3
}

// A DeviceClass as the API server writes it (uid, resourceVersion, creationTimestamp,
// managedFields) mapping nvidia.com/gpu with `selector`.
std::string MappingClass(const std::string& name, const std::string& created, const std::string& selector) {
  return fmt::format(R"({{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{{"name":"{0}","uid":"uid-{0}",
    "resourceVersion":"4711","generation":1,"creationTimestamp":"{1}","managedFields":[{{"manager":"helm","operation":"Update",
    "apiVersion":"resource.k8s.io/v1","time":"{1}","fieldsType":"FieldsV1","fieldsV1":{{"f:spec":{{"f:extendedResourceName":{{}},
    "f:selectors":{{}}}}}}}}]}},"spec":{{"selectors":[{{"cel":{{"expression":{2}}}}}],"extendedResourceName":"nvidia.com/gpu"}}}})",
                     name, created, Quoted(selector));
}

// Of two classes mapping nvidia.com/gpu the newest serves it (upstream's extendedresourcecache):
// here the newer one selects only A100s, so an H100 node refuses the pod in its name.
TEST(DraHttp, OfTwoClassesMappingTheResourceTheNewestServesIt) {
  std::string any = "device.driver == 'gpu.nvidia.com'";
  std::string a100 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'";
  TestServer newer_a100(ListJson({DraNode("dra-h100"), GpuSlice("dra-h100", 8), MappingClass("any-gpu", "2026-01-10T08:00:00Z", any),
                                  MappingClass("a100-only", "2026-03-02T09:30:00Z", a100)}));
  EXPECT_THAT(Filter(newer_a100.port(), ExtendedGpuPod("w", 1), {"dra-h100"}).failed["dra-h100"], HasSubstr("class a100-only"));
  TestServer newer_any(ListJson({DraNode("dra-h100"), GpuSlice("dra-h100", 8), MappingClass("any-gpu", "2026-03-02T09:30:00Z", any),
                                 MappingClass("a100-only", "2026-01-10T08:00:00Z", a100)}));
  EXPECT_THAT(Filter(newer_any.port(), ExtendedGpuPod("w", 1), {"dra-h100"}).kept, ElementsAre("dra-h100"));
}

TEST(DraHttp, WithoutAClassMappingTheResourceOrWithTheFeatureOffNvidiaDraNodesRefuseWholeGpuPods) {
  std::string unmapped = std::string(kGpuClass);
  size_t at = unmapped.find(R"("extendedResourceName")");
  ASSERT_NE(at, std::string::npos);
  unmapped.replace(at, std::string(R"("extendedResourceName":"nvidia.com/gpu")").size(), R"("extendedResourceName":"example.com/other")");
  TestServer plain(ListJson({DraNode("dra-big"), GpuSlice("dra-big", 8), unmapped}));
  EXPECT_THAT(Filter(plain.port(), ExtendedGpuPod("w", 1), {"dra-big"}).failed["dra-big"], HasSubstr("node mode nvidia-dra"));
  TestServer off(ListJson({DraNode("dra-big"), GpuSlice("dra-big", 8), std::string(kGpuClass)}),
                 extender::ServiceOptions{.dra_extended_resources = false});
  EXPECT_THAT(Filter(off.port(), ExtendedGpuPod("w", 1), {"dra-big"}).failed["dra-big"], HasSubstr("node mode nvidia-dra"));
}

// Advisory mode: kube-scheduler's DynamicResources plugin created and allocated the special claim
// in PreBind; bind commits the pod without device-plugin GPUs, and once the claim and the pod's
// status are seen the ledger books the claim's devices under nvidia-dra.
TEST(DraHttp, ABoundWholeGpuPodHoldsItsSpecialClaimsDevices) {
  TestServer server(ListJson({DraNode("dra-big"), GpuSlice("dra-big", 8), std::string(kGpuClass)}));
  ASSERT_THAT(Filter(server.port(), ExtendedGpuPod("w", 4), {"dra-big"}).kept, ElementsAre("dra-big"));
  EXPECT_EQ(BindError(server.port(), "w", "dra-big"), "");
  std::optional<Pod> record = server.inventory().FindPod("w");
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->node_name, "dra-big");
  EXPECT_FALSE(server.inventory().AllocationOf("w").has_value());  // no device-plugin GPUs: the claim's, once seen
  // The cluster shows the special claim and the bound pod.
  std::vector<std::string> devices = {"dra-big/gpu-0", "dra-big/gpu-1", "dra-big/gpu-2", "dra-big/gpu-3"};
  server.Reload(ListJson({DraNode("dra-big"), GpuSlice("dra-big", 8), std::string(kGpuClass),
                          Claim("w-extended-resources-x7k2q", ClaimSpec(4, ""), devices, {"w"}),
                          ExtendedGpuPod("w", 4, "dra-big", "w-extended-resources-x7k2q")}));
  std::optional<Allocation> held = server.inventory().AllocationOf("w");
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->mode, NodeMode::kNvidiaDra);
  EXPECT_THAT(held->placement.devices, ElementsAre("gpu.nvidia.com/dra-big/gpu-0", "gpu.nvidia.com/dra-big/gpu-1",
                                                   "gpu.nvidia.com/dra-big/gpu-2", "gpu.nvidia.com/dra-big/gpu-3"));
  // The four left take a pod of four, not one of five.
  EXPECT_THAT(Filter(server.port(), ExtendedGpuPod("x", 4), {"dra-big"}).kept, ElementsAre("dra-big"));
  EXPECT_THAT(Filter(server.port(), ExtendedGpuPod("y", 5), {"dra-big"}).failed["dra-big"], HasSubstr("4 of 5 devices available"));
  // A mode switch waits for it.
  server.Reload(ListJson({DraNode("dra-big", "mgpu"), GpuSlice("dra-big", 8), std::string(kGpuClass),
                          Claim("w-extended-resources-x7k2q", ClaimSpec(4, ""), devices, {"w"}),
                          ExtendedGpuPod("w", 4, "dra-big", "w-extended-resources-x7k2q")}));
  EXPECT_THAT(HttpClient(server.port()).Get("/debug/inventory?node=dra-big").body,
              HasSubstr("node is switching from nvidia-dra to mgpu: 1 GPU pod of the old mode still runs (ml/w)"));
}

// The devices of `claim`'s allocation, by name.
std::vector<std::string> DevicesOf(const dra::ResourceClaim& claim) {
  std::vector<std::string> out;
  if (claim.allocation) {
    for (const dra::DeviceResult& r : claim.allocation->results) out.push_back(r.id.device);
  }
  return out;
}

// Every device an allocated claim holds, and how many results hold them (equal: none twice).
std::pair<std::set<std::string>, size_t> AllocatedDevices(TestServer& server) {
  std::set<std::string> devices;
  size_t results = 0;
  for (const auto& [key, c] : server.inventory().Snapshot()->dra().claims()) {
    for (const std::string& d : DevicesOf(c)) {
      devices.insert(d);
      ++results;
    }
  }
  return {devices, results};
}

// Issue 34 §1 for DRA where kube-scheduler allocates: its allocator takes the first free devices,
// so gpusched's part is the node. dra-l and dra-m are 4 GPUs in NVLink pairs across the PCIe roots
// (GPU0+GPU2, GPU1+GPU3). On dra-l GPU0 is taken: upstream would take GPU1+GPU2, not linked. On
// dra-m GPU1 is taken: upstream takes GPU0+GPU2, a pair. Filter keeps dra-m alone, and says why.
std::string LinkedDraCluster() {
  std::vector<std::vector<int>> pairs = {{2}, {3}, {0}, {1}};
  return ListJson({DraNodeWithLinks("dra-l", pairs), GpuSlice("dra-l", 4), DraNodeWithLinks("dra-m", pairs), GpuSlice("dra-m", 4),
                   std::string(kGpuClass), Claim("pair", ClaimSpec(2, "")), Claim("on-l", ClaimSpec(1, ""), {"dra-l/gpu-0"}, {"a"}),
                   Claim("on-m", ClaimSpec(1, ""), {"dra-m/gpu-1"}, {"b"})});
}

TEST(DraHttp, WhereUpstreamAllocatesFilterKeepsTheNodesWhoseFirstFreeGpusAreNvlinkConnected) {
  TestServer server(LinkedDraCluster());
  Filtered f = Filter(server.port(), ClaimPod("trainer", "pair"), {"dra-l", "dra-m"});
  EXPECT_EQ(f.error, "");
  EXPECT_THAT(f.kept, ElementsAre("dra-m"));
  EXPECT_EQ(f.failed["dra-l"],
            "the devices allocated here for claim pair request gpus would be GPU1+GPU2, not NVLink-connected; other nodes offered "
            "have a connected set");
  EXPECT_TRUE(f.unresolvable.empty()) << "room could be made: the refusal is resolvable";
  // Offered alone, dra-l is kept: no node is better.
  EXPECT_THAT(Filter(server.port(), ClaimPod("trainer", "pair"), {"dra-l"}).kept, ElementsAre("dra-l"));
}

TEST(DraOwner, WhereGpuschedAllocatesEveryNodeWithAFreeNvlinkPairIsKept) {
  LateClaimWriter writer;
  TestServer server(LinkedDraCluster(), {}, "", {}, extender::ServiceCollaborators{.claim_writer = &writer});
  writer.target = std::make_unique<extender::InventoryClaimWriter>(&server.inventory());
  // gpusched writes its ranked choice: GPU1+GPU3 on dra-l.
  EXPECT_THAT(Filter(server.port(), ClaimPod("trainer", "pair"), {"dra-l", "dra-m"}).kept, ElementsAre("dra-l", "dra-m"));
}

TEST(DraOwner, BindAllocatesTheRankedChoiceReservesItAndNothingIsAllocatedTwice) {
  LateClaimWriter writer;
  TestServer server(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 8), std::string(kGpuClass),
                              Claim("busy", ClaimSpec(1, ""), {"dra-a/gpu-0"}, {"b"}), Claim("train", ClaimSpec(2, kH100Selector)),
                              Claim("big", ClaimSpec(6, "")), Claim("rest", ClaimSpec(5, ""))}),
                    {}, "", {}, extender::ServiceCollaborators{.claim_writer = &writer});
  writer.target = std::make_unique<extender::InventoryClaimWriter>(&server.inventory());
  std::string trainer = ClaimPod("trainer", "train");
  ASSERT_THAT(Filter(server.port(), trainer, {"dra-a"}).kept, ElementsAre("dra-a"));
  EXPECT_EQ(BindError(server.port(), "trainer", "dra-a"), "");

  // The claim now carries the allocation (the topology-aligned pair), the finalizer and the pod.
  const dra::ResourceClaim* claim = server.inventory().Snapshot()->dra().FindClaim("ml", "train");
  ASSERT_NE(claim, nullptr);
  ASSERT_TRUE(claim->allocation.has_value());
  EXPECT_THAT(DevicesOf(*claim), ElementsAre("gpu-2", "gpu-3"));
  EXPECT_THAT(claim->finalizers, ElementsAre("resource.kubernetes.io/delete-protection"));
  ASSERT_EQ(claim->reserved_for.size(), 1u);
  EXPECT_EQ(claim->reserved_for[0].uid, "trainer");
  // The ledger books the pod's devices under nvidia-dra.
  std::optional<Allocation> held = server.inventory().AllocationOf("trainer");
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->mode, NodeMode::kNvidiaDra);
  EXPECT_THAT(held->placement.devices, ElementsAre("gpu.nvidia.com/dra-a/gpu-2", "gpu.nvidia.com/dra-a/gpu-3"));

  // 5 GPUs are left: a claim for 6 no longer fits, one for 5 does.
  EXPECT_THAT(Filter(server.port(), ClaimPod("huge", "big"), {"dra-a"}).failed["dra-a"], HasSubstr("5 of 6 devices available"));
  EXPECT_THAT(BindError(server.port(), "huge", "dra-a"), HasSubstr("bind ml/huge to dra-a failed: claim ml/big: request gpus: 5 of 6"));
  ASSERT_THAT(Filter(server.port(), ClaimPod("filler", "rest"), {"dra-a"}).kept, ElementsAre("dra-a"));
  EXPECT_EQ(BindError(server.port(), "filler", "dra-a"), "");
  // Every GPU is held once: 1 + 2 + 5 = 8 distinct devices.
  auto [taken, results] = AllocatedDevices(server);
  EXPECT_EQ(taken.size(), 8u);
  EXPECT_EQ(results, 8u);
}

// Owner mode serves extended resources through DRA as kube-scheduler's PreBind would: bind
// creates the pod's special claim (generated name, the pod as owner, the finalizer, one request
// per container), allocates it (gpusched's ranked choice: one PCIe root) and names it in the pod's
// status; the ledger and the mode-switch guard count the pod.
TEST(DraOwner, BindCreatesAllocatesAndRecordsTheSpecialClaimOfExtendedResources) {
  LateClaimWriter writer;
  TestServer server(ListJson({DraNode("dra-big"), GpuSlice("dra-big", 8), std::string(kGpuClass),
                              Claim("busy", ClaimSpec(1, ""), {"dra-big/gpu-0"}, {"b"})}),
                    {}, "", {}, extender::ServiceCollaborators{.claim_writer = &writer});
  writer.target = std::make_unique<extender::InventoryClaimWriter>(&server.inventory());
  ASSERT_THAT(Filter(server.port(), ExtendedGpuPod("w", 2), {"dra-big"}).kept, ElementsAre("dra-big"));
  EXPECT_EQ(BindError(server.port(), "w", "dra-big"), "");

  std::optional<Pod> record = server.inventory().FindPod("w");
  ASSERT_TRUE(record.has_value());
  EXPECT_THAT(record->extended_resource_claim, ::testing::StartsWith("w-extended-resources-"));
  EXPECT_EQ(record->extended_resource_claim.size(), std::string("w-extended-resources-").size() + 5);
  const dra::ResourceClaim* claim = server.inventory().Snapshot()->dra().FindClaim("ml", record->extended_resource_claim);
  ASSERT_NE(claim, nullptr);
  EXPECT_EQ(claim->owner_pod_uid, "w");
  EXPECT_THAT(claim->finalizers, ElementsAre("resource.kubernetes.io/delete-protection"));
  ASSERT_EQ(claim->requests.size(), 1u);
  EXPECT_EQ(claim->requests[0].name, "container-0-request-0");
  ASSERT_TRUE(claim->allocation.has_value());
  EXPECT_THAT(DevicesOf(*claim), ElementsAre("gpu-2", "gpu-3"));  // one PCIe root, not gpu-1 beside the busy gpu-0
  ASSERT_EQ(claim->reserved_for.size(), 1u);
  EXPECT_EQ(claim->reserved_for[0].uid, "w");
  std::optional<Allocation> held = server.inventory().AllocationOf("w");
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->mode, NodeMode::kNvidiaDra);
  EXPECT_THAT(held->placement.devices, ElementsAre("gpu.nvidia.com/dra-big/gpu-2", "gpu.nvidia.com/dra-big/gpu-3"));

  // Five devices are left: a pod of five fits, one of six does not, and no device is taken twice.
  EXPECT_THAT(Filter(server.port(), ExtendedGpuPod("y", 6), {"dra-big"}).failed["dra-big"], HasSubstr("5 of 6 devices available"));
  ASSERT_THAT(Filter(server.port(), ExtendedGpuPod("x", 5), {"dra-big"}).kept, ElementsAre("dra-big"));
  EXPECT_EQ(BindError(server.port(), "x", "dra-big"), "");
  auto [taken, results] = AllocatedDevices(server);
  EXPECT_EQ(taken.size(), 8u);
  EXPECT_EQ(results, 8u);
  EXPECT_THAT(BindError(server.port(), "y", "dra-big"), HasSubstr("0 of 6 devices available"));
  EXPECT_NE(server.inventory().FindPod("x")->extended_resource_claim, record->extended_resource_claim);
}

// Issue 31 §4 in owner mode: the pod of an init container of 3 and app containers of 2 + 2 holds
// 4 devices for its lifetime, not 7: the 4 left take a pod of 4.
TEST(DraOwner, BindAllocatesOnlyTheAppContainersDevicesWhenTheyCoverTheInitContainer) {
  LateClaimWriter writer;
  TestServer server(ListJson({DraNode("dra-big"), GpuSlice("dra-big", 8), std::string(kGpuClass)}), {}, "", {},
                    extender::ServiceCollaborators{.claim_writer = &writer});
  writer.target = std::make_unique<extender::InventoryClaimWriter>(&server.inventory());
  ASSERT_THAT(Filter(server.port(), InitThenTwoPod("w"), {"dra-big"}).kept, ElementsAre("dra-big"));
  EXPECT_EQ(BindError(server.port(), "w", "dra-big"), "");
  std::optional<Pod> record = server.inventory().FindPod("w");
  ASSERT_TRUE(record.has_value());
  const dra::ResourceClaim* claim = server.inventory().Snapshot()->dra().FindClaim("ml", record->extended_resource_claim);
  ASSERT_NE(claim, nullptr);
  ASSERT_EQ(claim->requests.size(), 2u);
  EXPECT_EQ(claim->requests[0].name, "container-1-request-0");
  EXPECT_EQ(claim->requests[1].name, "container-2-request-0");
  EXPECT_EQ(DevicesOf(*claim).size(), 4u);
  ASSERT_THAT(Filter(server.port(), ExtendedGpuPod("x", 4), {"dra-big"}).kept, ElementsAre("dra-big"));
  EXPECT_EQ(BindError(server.port(), "x", "dra-big"), "");
  auto [taken, results] = AllocatedDevices(server);
  EXPECT_EQ(taken.size(), 8u);
  EXPECT_EQ(results, 8u);
}

TEST(DraOwner, ASecondPodOfASharedClaimIsOnlyAddedToReservedFor) {
  LateClaimWriter writer;
  TestServer server(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 2), std::string(kGpuClass), Claim("shared", ClaimSpec(2, ""))}),
                    {}, "", {}, extender::ServiceCollaborators{.claim_writer = &writer});
  writer.target = std::make_unique<extender::InventoryClaimWriter>(&server.inventory());
  ASSERT_THAT(Filter(server.port(), ClaimPod("first", "shared"), {"dra-a"}).kept, ElementsAre("dra-a"));
  EXPECT_EQ(BindError(server.port(), "first", "dra-a"), "");
  ASSERT_THAT(Filter(server.port(), ClaimPod("second", "shared"), {"dra-a"}).kept, ElementsAre("dra-a"));
  EXPECT_EQ(BindError(server.port(), "second", "dra-a"), "");
  const dra::ResourceClaim* claim = server.inventory().Snapshot()->dra().FindClaim("ml", "shared");
  ASSERT_TRUE(claim->allocation.has_value());
  EXPECT_EQ(claim->allocation->results.size(), 2u);
  ASSERT_EQ(claim->reserved_for.size(), 2u);
  EXPECT_EQ(claim->reserved_for[1].uid, "second");
}

}  // namespace dra_http_test
}  // namespace gpusched::testing
