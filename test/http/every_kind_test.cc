// Every kind of GPU pod through every verb that judges a pod, over a real socket: whole GPUs,
// mGPU shares, a DRA claim, a KEP 5004 extended resource served by DRA, and a fifth kind this test
// registers itself (a time-sliced GPU, the recipe of docs/architecture.md). Each kind has its own
// two-node cluster where the pending pod fits only after one eviction, so a verb that forgets a
// kind fails here: filter refuses, preempt names the victim, explain says evicting it makes
// room, defrag plans one move, the nominated-node hold keeps the room from other pods while the
// victim terminates, and once it is gone filter, prioritize and bind place the pod.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/json/json.h"
#include "gpusched/placement/kinds.h"
#include "gpusched/placement/kinds/counted.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/pod_request.h"
#include "http_client.h"
#include "test_server.h"

namespace gpusched::testing {
namespace every_kind_test {

using ::testing::HasSubstr;

// A fifth kind, as a newcomer would add one: nodes labelled "timeslice" offer replicas of a GPU
// that NVIDIA's device plugin time-slices (example.com/gpu-slice), and pods ask for a number of
// them. Its row and its decisions are all it takes; the verbs find it through the registry.
constexpr std::string_view kSlice = "example.com/gpu-slice";

class TimeSlicedKind final : public placement::CountedKind {
 public:
  TimeSlicedKind()
      : CountedKind(DeviceKind{.mode = static_cast<NodeMode>(8), .label = "timeslice", .request = static_cast<RequestKind>(8),
                               .short_name = "timeslice", .asks = kSlice, .payload = Payload::kCount}) {}

  bool Asks(const gpusched::Pod& pod) const override { return Requested(pod, nullptr) > 0; }
  int64_t Requested(const gpusched::Pod& pod, placement::Violations* invalid) const override {
    return placement::AggregateLikeKubernetes(pod, [](const Container& c) { return c.other_requests.Get(kSlice); });
  }
  std::string ReadLayout(placement::NodeState* state) const override {
    state->whole_total = state->node.other_allocatable.Get(kSlice);
    return "";
  }
};

const bool kTimeSlicedRegistered = placement::RegisterKind(std::make_unique<TimeSlicedKind>()).ok();

// One kind's cluster: nodes "<k>-a" and "<k>-b", a victim "lo-<k>a" on "<k>-a" and a pod on
// "<k>-b" that keeps the pending pod off it; `pending(name, node_nominated)` the pod to place and
// `other` a small pod of the same kind that the hold must refuse.
struct Kind {
  std::string name;
  // The cluster with the victim running, terminating, or gone.
  std::function<std::vector<std::string>(const std::string& victim_state)> cluster;
  std::function<std::string(const std::string& name, const std::string& nominated)> pending;
  std::string other;
  // Bind books the pod's GPUs (a device-plugin kind); DRA pods hold what kube-scheduler allocated
  // to their claims before it binds, which this test does not write.
  bool bind_books = true;
};

// A bound pod of ReplicaSet rs-<name>, priority 0.
PodJson Running(std::string name, std::string node, std::vector<ContainerJson> containers, const std::string& state,
                std::map<std::string, std::string> annotations = {}) {
  return PodJson{.name = name, .namespace_name = "ml", .uid = name, .node = std::move(node), .phase = "Running",
                 .containers = std::move(containers), .annotations = std::move(annotations), .labels = {{"app", name}},
                 .priority = 0, .deletion_timestamp = state == "terminating" ? "2026-12-02T10:00:00Z" : "",
                 .controller_uid = "rs-" + name};
}

std::string Pending(PodJson pod, const std::string& nominated) {
  pod.namespace_name = "ml";
  pod.uid = pod.name;
  pod.phase = "Pending";
  pod.priority = 100;
  pod.nominated_node = nominated;
  return pod.ToJson();
}

// `pod` (JSON) with `members` added to its metadata.
std::string WithMetadata(std::string pod, const std::string& members) {
  return pod.insert(pod.find(R"("metadata":{)") + 12, members + ",");
}

// `pod` (JSON) with a terminating deletionTimestamp, when `state` says so.
std::string MaybeTerminating(std::string pod, const std::string& state) {
  if (state != "terminating") return pod;
  return WithMetadata(std::move(pod), R"("deletionTimestamp":"2026-12-02T10:00:00Z","deletionGracePeriodSeconds":3600)");
}

// `pod` (JSON) owned by ReplicaSet `rs` (controller).
std::string Owned(std::string pod, const std::string& rs) {
  return WithMetadata(std::move(pod), fmt::format(R"("ownerReferences":[{{"apiVersion":"apps/v1","kind":"ReplicaSet",)"
                                                  R"("name":"{0}","uid":"{0}","controller":true,"blockOwnerDeletion":true}}])", rs));
}

Kind Whole() {
  auto cluster = [](const std::string& victim) {
    std::vector<std::string> items = {NvidiaNode("whole-a", 2).ToJson(), NvidiaNode("whole-b", 2).ToJson(),
                                      Running("lo-wholeb", "whole-b", {WholeGpus("c", 1)}, "").ToJson()};
    if (victim != "gone") items.push_back(Running("lo-wholea", "whole-a", {WholeGpus("c", 1)}, victim).ToJson());
    return items;
  };
  auto pending = [](const std::string& name, const std::string& nominated) {
    return Pending(PodJson{.name = name, .containers = {WholeGpus("c", 2)}}, nominated);
  };
  return Kind{"whole", cluster, pending, Pending(PodJson{.name = "other", .containers = {WholeGpus("c", 1)}}, "")};
}

Kind Shared() {
  auto on_gpu0 = std::map<std::string, std::string>{{"vke.volcengine.com/gpu-index-container-c", "0"}};
  auto cluster = [on_gpu0](const std::string& victim) {
    std::vector<std::string> items = {MgpuNode("mgpu-a", 1, 16384).ToJson(), MgpuNode("mgpu-b", 1, 16384).ToJson(),
                                      Running("lo-mgpub", "mgpu-b", {Mgpu("c", 60, 4096)}, "", on_gpu0).ToJson()};
    if (victim != "gone") items.push_back(Running("lo-mgpua", "mgpu-a", {Mgpu("c", 30, 4096)}, victim, on_gpu0).ToJson());
    return items;
  };
  auto pending = [](const std::string& name, const std::string& nominated) {
    return Pending(PodJson{.name = name, .containers = {Mgpu("c", 80, 4096)}}, nominated);
  };
  return Kind{"mgpu", cluster, pending, Pending(PodJson{.name = "other", .containers = {Mgpu("c", 30, 1024)}}, "")};
}

Kind Claims() {
  auto cluster = [](const std::string& victim) {
    std::vector<std::string> items = {DraNode("claim-a"), DraNode("claim-b"), GpuSlice("claim-a", 2), GpuSlice("claim-b", 2),
                                      std::string(kGpuClass), GeneratedClaim("c-lo-claimb", "lo-claimb", ClaimSpec(1, ""), {"claim-b/gpu-0"}),
                                      TemplateClaimPod("lo-claimb", "c-lo-claimb", "claim-b", "rs-lo-claimb"),
                                      Claim("big", ClaimSpec(2, "")), Claim("small", ClaimSpec(1, ""))};
    if (victim != "gone") {
      items.push_back(GeneratedClaim("c-lo-claima", "lo-claima", ClaimSpec(1, ""), {"claim-a/gpu-0"}));
      items.push_back(MaybeTerminating(TemplateClaimPod("lo-claima", "c-lo-claima", "claim-a", "rs-lo-claima"), victim));
    }
    return items;
  };
  auto pending = [](const std::string& name, const std::string& nominated) {
    PodJson p{.name = name, .containers = {ContainerJson{.name = "main"}}, .claims = {"big"}};
    std::string json = Pending(p, nominated);
    // The container uses the claim, as the API server requires.
    json.replace(json.find(R"("resources":{})"), 14, R"("resources":{"claims":[{"name":"big"}]})");
    return json;
  };
  PodJson other{.name = "other", .containers = {ContainerJson{.name = "main"}}, .claims = {"small"}};
  std::string other_json = Pending(other, "");
  other_json.replace(other_json.find(R"("resources":{})"), 14, R"("resources":{"claims":[{"name":"small"}]})");
  return Kind{"claim", cluster, pending, other_json, /*bind_books=*/false};
}

Kind Extended() {
  // A KEP 5004 pod: nvidia.com/gpu served by DRA through its special claim, allocated and owned by
  // the pod as kube-scheduler creates it.
  auto running = [](const std::string& name, const std::string& node, const std::string& state) {
    return std::vector<std::string>{GeneratedClaim(name + "-extended-resources-x7k2q", name, ClaimSpec(1, ""), {node + "/gpu-0"}),
                                    MaybeTerminating(Owned(ExtendedGpuPod(name, 1, node, name + "-extended-resources-x7k2q"), "rs-" + name), state)};
  };
  auto cluster = [running](const std::string& victim) {
    std::vector<std::string> items = {DraNode("kep-a"), DraNode("kep-b"), GpuSlice("kep-a", 2), GpuSlice("kep-b", 2),
                                      std::string(kGpuClass)};
    for (std::string& s : running("lo-kepb", "kep-b", "")) items.push_back(std::move(s));
    if (victim != "gone") {
      for (std::string& s : running("lo-kepa", "kep-a", victim)) items.push_back(std::move(s));
    }
    return items;
  };
  auto pending = [](const std::string& name, const std::string& nominated) {
    return Pending(PodJson{.name = name, .containers = {WholeGpus("main", 2)}}, nominated);
  };
  return Kind{"kep", cluster, pending, Pending(PodJson{.name = "other", .containers = {WholeGpus("main", 1)}}, ""),
              /*bind_books=*/false};
}

Kind TimeSliced() {
  auto node = [](const std::string& name) {
    return NodeJson{.name = name, .label = "timeslice", .extra_allocatable = {{std::string(kSlice), "2"}}}.ToJson();
  };
  auto slices = [](int64_t n) {
    std::string v = std::to_string(n);
    return ContainerJson{.name = "c", .limits = {{std::string(kSlice), v}}, .requests = {{std::string(kSlice), v}}};
  };
  auto cluster = [node, slices](const std::string& victim) {
    std::vector<std::string> items = {node("timeslice-a"), node("timeslice-b"),
                                      Running("lo-timesliceb", "timeslice-b", {slices(1)}, "").ToJson()};
    if (victim != "gone") items.push_back(Running("lo-timeslicea", "timeslice-a", {slices(1)}, victim).ToJson());
    return items;
  };
  auto pending = [slices](const std::string& name, const std::string& nominated) {
    return Pending(PodJson{.name = name, .containers = {slices(2)}}, nominated);
  };
  return Kind{"timeslice", cluster, pending, Pending(PodJson{.name = "other", .containers = {slices(1)}}, "")};
}

rapidjson::Document Parse(const std::string& body) {
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(body, &d).ok()) << body;
  return d;
}

void PrintTo(const Kind& kind, std::ostream* os) { *os << kind.name; }

class EveryKind : public ::testing::TestWithParam<Kind> {
 protected:
  std::string A() const { return GetParam().name + "-a"; }
  std::string B() const { return GetParam().name + "-b"; }
  std::string Victim() const { return "lo-" + GetParam().name + "a"; }
  std::vector<std::string> Cluster(const std::string& victim) const { return GetParam().cluster(victim); }
  std::string Pod(const std::string& nominated = "") const { return GetParam().pending("p", nominated); }
};

TEST_P(EveryKind, EveryVerbJudgesTheKindOnAClusterWhereOnlyAnEvictionMakesRoom) {
  ASSERT_TRUE(kTimeSlicedRegistered);
  std::vector<std::string> running = Cluster("");
  std::vector<std::string> with_pod = running;
  with_pod.push_back(Pod());
  TestServer server(ListJson(with_pod));
  HttpClient client(server.port());
  std::vector<std::string> nodes = {A(), B()};
  // filter: no node fits as they are.
  EXPECT_THAT(KeptNodes(client.Post("/filter", ArgsWithNames(Pod(), nodes)).body), ::testing::IsEmpty());
  // preempt: the victim on A (B's pod is needed there by nothing: its node is offered with none).
  EXPECT_EQ(client.Post("/preempt", PreemptMetaJson(Pod(), {{A(), {}}})).body,
            fmt::format(R"({{"NodeNameToMetaVictims":{{"{}":{{"Pods":[{{"UID":"{}"}}],"NumPDBViolations":0}}}}}})", A(), Victim()));
  // explain: evicting one pod makes room.
  rapidjson::Document explained = Parse(client.Post("/explain", Pod()).body);
  EXPECT_THAT(std::string(explained["summary"].GetString()), HasSubstr("evicting 1 pod on"));
  // defrag: one move makes room.
  rapidjson::Document plan = Parse(client.Post("/debug/defrag", Pod()).body);
  EXPECT_TRUE(plan["fits"].GetBool()) << plan["reason"].GetString();
  EXPECT_EQ(plan["moves"].Size(), 1u);

  // The victim terminating, the pod nominated to A: its room is held there against other pods.
  std::vector<std::string> terminating = Cluster("terminating");
  terminating.push_back(Pod(A()));
  server.Reload(ListJson(terminating));
  rapidjson::Document inventory = Parse(client.Get("/debug/inventory?node=" + A()).body);
  EXPECT_EQ(inventory["nodes"][0]["holds"].Size(), 1u) << "no room held for the nominated pod";
  HttpReply refused = client.Post("/filter", ArgsWithNames(GetParam().other, {A()}));
  EXPECT_THAT(KeptNodes(refused.body), ::testing::IsEmpty()) << refused.body;

  // The victim gone: filter and prioritize take A, and bind places the pod there.
  std::vector<std::string> gone = Cluster("gone");
  gone.push_back(Pod());
  server.Reload(ListJson(gone));
  EXPECT_THAT(KeptNodes(client.Post("/filter", ArgsWithNames(Pod(), nodes)).body), ::testing::ElementsAre(A()));
  rapidjson::Document scores = Parse(client.Post("/prioritize", ArgsWithNames(Pod(), {A()})).body);
  ASSERT_EQ(scores.Size(), 1u);
  EXPECT_EQ(std::string(scores[0]["Host"].GetString()), A());
  EXPECT_THAT(client.Post("/bind", BindJson("p", "ml", "p", A())).body, HasSubstr(R"("Error":"")"));
  // What bind booked counts at once: the other pod no longer fits there.
  if (!GetParam().bind_books) return;
  EXPECT_THAT(KeptNodes(client.Post("/filter", ArgsWithNames(GetParam().other, {A()})).body), ::testing::IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(Kinds, EveryKind, ::testing::Values(Whole(), Shared(), Claims(), Extended(), TimeSliced()),
                         [](const ::testing::TestParamInfo<Kind>& info) { return info.param.name; });

}  // namespace every_kind_test
}  // namespace gpusched::testing
