// The preempt verb's bodies as kube-scheduler sends them, in both cache modes, with placeholder
// candidates; and the answer as kube-scheduler reads it.
#include "gpusched/extender/preemption_wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::extender {
namespace preemption_wire_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// kube-scheduler sends every top-level key; the Pod as encoding/json writes a v1.Pod.
constexpr std::string_view kPod =
    R"({"metadata":{"name":"train-job-x7k2p","namespace":"ml","uid":"5f0c3a1e-2b4d-4c6e-8f10-123456789abc","creationTimestamp":null},
        "spec":{"containers":[{"name":"main","resources":{"limits":{"nvidia.com/gpu":"2"}}}],"priority":1000},"status":{}})";

std::string Body(std::string_view victims, std::string_view meta) {
  return std::string(R"({"Pod":)") + std::string(kPod) + R"(,"NodeNameToVictims":)" + std::string(victims) +
         R"(,"NodeNameToMetaVictims":)" + std::string(meta) + "}";
}

TEST(PreemptionWire, ReadsMetaVictimsWithPlaceholderCandidates) {
  StatusOr<PreemptionArgs> a = ParsePreemptionArgs(Body("null", R"({
      "gpu-node-0004": {"Pods": [{"UID": "1a2b"}, {"UID": "2b3c"}], "NumPDBViolations": 1},
      "gpu-node-0003": {"Pods": [{"UID": "9d8c"}], "NumPDBViolations": 0},
      "gpu-node-0007": {"Pods": [], "NumPDBViolations": 0},
      "gpu-node-0009": {"Pods": null, "NumPDBViolations": 0}})"));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_TRUE(a->meta);
  EXPECT_EQ(a->pod.uid, "5f0c3a1e-2b4d-4c6e-8f10-123456789abc");
  EXPECT_EQ(a->pod.priority, 1000);
  ASSERT_EQ(a->candidates.size(), 4u);
  EXPECT_EQ(a->candidates[0].node, "gpu-node-0004");  // in the order of the body
  EXPECT_THAT(a->candidates[0].victim_uids, ElementsAre("1a2b", "2b3c"));
  EXPECT_EQ(a->candidates[0].pdb_violations, 1);
  EXPECT_EQ(a->candidates[1].node, "gpu-node-0003");
  EXPECT_THAT(a->candidates[1].victim_uids, ElementsAre("9d8c"));
  EXPECT_THAT(a->candidates[2].victim_uids, IsEmpty());  // placeholders
  EXPECT_THAT(a->candidates[3].victim_uids, IsEmpty());
}

TEST(PreemptionWire, ReadsFullVictimPodsWhenTheSchedulerDoesNotCacheNodes) {
  StatusOr<PreemptionArgs> a = ParsePreemptionArgs(Body(R"({"gpu-node-0003": {"Pods": [
      {"metadata": {"name": "batch-infer-0", "namespace": "ml", "uid": "9d8c7b6a"},
       "spec": {"nodeName": "gpu-node-0003", "priority": 10, "containers": [{"name": "infer",
                "resources": {"limits": {"nvidia.com/gpu": "4"}, "requests": {"nvidia.com/gpu": "4"}}}]},
       "status": {"phase": "Running", "startTime": "2025-05-01T08:00:00Z"}}], "NumPDBViolations": 0},
      "gpu-node-0005": {"Pods": [], "NumPDBViolations": 0}})",
                                                        "null"));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_FALSE(a->meta);
  ASSERT_EQ(a->candidates.size(), 2u);
  EXPECT_THAT(a->candidates[0].victim_uids, ElementsAre("9d8c7b6a"));
  EXPECT_THAT(a->candidates[1].victim_uids, IsEmpty());
}

TEST(PreemptionWire, NoCandidatesAtAllIsAnEmptyRequestNotAnError) {
  StatusOr<PreemptionArgs> a = ParsePreemptionArgs(Body("null", "null"));
  ASSERT_TRUE(a.ok());
  EXPECT_THAT(a->candidates, IsEmpty());
  // Lower-case keys, as a hand-written client might send them, read the same.
  a = ParsePreemptionArgs(std::string(R"({"pod":)") + std::string(kPod) + R"(,"nodeNameToMetaVictims":{"n":{"pods":[{"uid":"u"}]}}})");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_THAT(a->candidates[0].victim_uids, ElementsAre("u"));
}

TEST(PreemptionWire, BadBodiesNameTheFieldAndTheValue) {
  auto error = [](const std::string& body) { return std::string(ParsePreemptionArgs(body).status().message()); };
  EXPECT_THAT(error(R"({"NodeNameToMetaVictims":{}})"), HasSubstr("ExtenderPreemptionArgs.Pod: missing"));
  EXPECT_THAT(error(Body("null", R"({"n1":{"Pods":[{"UID":7}]}})")),
              HasSubstr(R"(ExtenderPreemptionArgs.NodeNameToMetaVictims["n1"].Pods[0].UID: want string)"));
  EXPECT_THAT(error(Body("null", R"({"n1":{"Pods":{}}})")), HasSubstr(R"(NodeNameToMetaVictims["n1"].Pods: want array)"));
  EXPECT_THAT(error(Body("null", R"({"n1":{"Pods":[],"NumPDBViolations":-1}})")), HasSubstr("NumPDBViolations: -1 is not a count"));
  EXPECT_THAT(error(Body(R"({"n1":{"Pods":[{"spec":{}}]}})", "null")), HasSubstr(R"(NodeNameToVictims["n1"].Pods[0].metadata: missing)"));
  EXPECT_THAT(error(Body("null", "[]")), HasSubstr("ExtenderPreemptionArgs.NodeNameToMetaVictims: want object"));
  EXPECT_THAT(error("not json"), HasSubstr("JSON"));
}

// NodeNameToMetaVictims is read as the parser streams it; the DOM reading, which NodeNameToVictims
// uses, is the reference: every body here reads the same both ways, answer or error.
TEST(PreemptionWire, StreamedMetaVictimsReadAsTheDomReadsThem) {
  const std::vector<std::string> maps = {
      R"({})",
      R"({"n1":null,"n2":{"Pods":null},"n3":{"Pods":[],"NumPDBViolations":null}})",
      R"({"n2":{"Pods":[{"UID":"b"},{"UID":"a","extra":{"x":[1,{"y":2}]}}],"NumPDBViolations":3},"n1":{"pods":[{"uid":"c"}]}})",
      R"({"n1":{"Extra":[{"Pods":[{"UID":"hidden"}]}],"Pods":[{"UID":"a"}],"PODS":[{"UID":"ignored"}]}})",
      R"({"n1":{"Pods":null,"pods":[{"UID":"ignored"}]}})",
      R"({"n1":{"Pods":[{"UID":null,"uid":"ignored"}]}})",
      R"({"n1":{"Pods":[{"UID":"a","UID":"b"}]},"n1":{"Pods":[{"UID":"c"}]}})",
      R"({"n1":{"Pods":[{"UID":"\u0061\n"}]}})",
      R"({"n1":{"Pods":[{"UID":7}]}})",
      R"({"n1":{"Pods":[{"UID":""}]}})",
      R"({"n1":{"Pods":[{"UID":{}}]}})",
      R"({"n1":{"Pods":[{"UID":["a"]}]}})",
      R"({"n1":{"Pods":[{}]}})",
      R"({"n1":{"Pods":[null]}})",
      R"({"n1":{"Pods":["a"]}})",
      R"({"n1":{"Pods":[[]]}})",
      R"({"n1":{"Pods":{}}})",
      R"({"n1":{"Pods":"a"}})",
      R"({"n1":{"Pods":[],"NumPDBViolations":-1}})",
      R"({"n1":{"Pods":[],"NumPDBViolations":1.5}})",
      R"({"n1":{"Pods":[],"NumPDBViolations":"2"}})",
      R"({"n1":{"Pods":[],"NumPDBViolations":{}}})",
      R"({"n1":{"Pods":[],"NumPDBViolations":[1]}})",
      R"({"n1":[]})",
      R"({"n1":"x"})",
      R"({"n1":7})",
  };
  for (const std::string& map : maps) {
    for (const std::string& body : {Body("null", map), Body(R"({"other":{"Pods":[]}})", map),
                                    std::string(R"({"nodeNameToMetaVictims":)") + map + R"(,"pod":)" + std::string(kPod) + "}",
                                    std::string(R"({"NodeNameToMetaVictims":)") + map + "}",  // no Pod: that error comes first
                                    Body("null", map) + "}"}) {                                 // a syntax error after the map
      StatusOr<PreemptionArgs> streamed = ParsePreemptionArgs(body);
      StatusOr<PreemptionArgs> dom = ParsePreemptionArgs(body, PreemptionRead::kDom);
      ASSERT_EQ(streamed.ok(), dom.ok()) << body << "\n" << streamed.status().message() << "\n" << dom.status().message();
      if (!dom.ok()) {
        EXPECT_EQ(streamed.status().message(), dom.status().message()) << body;
        continue;
      }
      EXPECT_EQ(streamed->meta, dom->meta) << body;
      ASSERT_EQ(streamed->candidates.size(), dom->candidates.size()) << body;
      for (size_t i = 0; i < dom->candidates.size(); ++i) {
        EXPECT_EQ(streamed->candidates[i].node, dom->candidates[i].node) << body;
        EXPECT_EQ(streamed->candidates[i].victim_uids, dom->candidates[i].victim_uids) << body;
        EXPECT_EQ(streamed->candidates[i].pdb_violations, dom->candidates[i].pdb_violations) << body;
      }
    }
  }
  // The streamed reading was taken where it applies.
  StatusOr<PreemptionArgs> args = ParsePreemptionArgs(Body("null", R"({"n1":{"Pods":[{"UID":"a"}]}})"));
  ASSERT_TRUE(args.ok());
  EXPECT_THAT(args->candidates[0].victim_uids, ElementsAre("a"));
}

// Records what a CandidateListener is told.
struct Told : CandidateListener {
  std::vector<const PreemptionCandidate*> read;
  bool abandoned = false;
  void Read(const PreemptionCandidate& c) override { read.push_back(&c); }
  void Abandon() override { abandoned = true; }
};

TEST(PreemptionWire, TheListenerIsToldOfEachCandidateWhereItStays) {
  std::string map = R"({"n2":{"Pods":[{"UID":"a"}]},"n1":null,"n3":{"Pods":[]}})";
  for (PreemptionRead mode : {PreemptionRead::kStreamed, PreemptionRead::kDom}) {
    for (const std::string& body : {Body("null", map), Body(R"({"n2":{"Pods":[{"metadata":{"uid":"a"}}]},"n1":null,"n3":{}})", "null")}) {
      Told told;
      StatusOr<PreemptionArgs> a = ParsePreemptionArgs(body, mode, &told);
      ASSERT_TRUE(a.ok()) << a.status().message();
      ASSERT_EQ(told.read.size(), 3u) << body;
      EXPECT_FALSE(told.abandoned);
      for (size_t i = 0; i < 3; ++i) EXPECT_EQ(told.read[i], &a->candidates[i]) << body;  // the same object, not a copy
      EXPECT_EQ(told.read[0]->node, "n2");
      EXPECT_THAT(told.read[0]->victim_uids, ElementsAre("a"));
    }
  }
}

TEST(PreemptionWire, TheListenerIsToldToAbandonWhenTheParseFailsAfterCandidates) {
  for (const std::string& body : {Body("null", R"({"n1":{"Pods":[{"UID":"a"}]},"n2":{"Pods":[{"UID":""}]}})"),  // an empty UID
                                  Body("null", R"({"n1":{"Pods":[{"UID":"a"}]}})") + "x",                       // a syntax error after
                                  std::string(R"({"NodeNameToMetaVictims":{"n1":null}})")}) {                  // no Pod
    Told told;
    StatusOr<PreemptionArgs> a = ParsePreemptionArgs(body, PreemptionRead::kStreamed, &told);
    ASSERT_FALSE(a.ok()) << body;
    EXPECT_TRUE(told.abandoned) << body;
    EXPECT_EQ(told.read.size(), 1u) << body;  // n1; never one read with an error
  }
}

TEST(PreemptionWire, ThePreemptorIsReadAheadWhenItComesFirst) {
  std::string body = Body("null", R"({"n1":null})");
  std::optional<Pod> early = PeekPreemptor(body);
  StatusOr<PreemptionArgs> a = ParsePreemptionArgs(body);
  ASSERT_TRUE(early.has_value());
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(*early == a->pod);
  EXPECT_EQ(early->priority, 1000);
  EXPECT_TRUE(PeekPreemptor(std::string(" {\n \"pod\" : ") + std::string(kPod) + "}").has_value());  // any case, spaces
  // Not first, null, not a Pod, or a key with escapes: left to the full parse.
  EXPECT_FALSE(PeekPreemptor(std::string(R"({"NodeNameToMetaVictims":null,"Pod":)") + std::string(kPod) + "}").has_value());
  EXPECT_FALSE(PeekPreemptor(R"({"Pod":null,"NodeNameToMetaVictims":null})").has_value());
  EXPECT_FALSE(PeekPreemptor(R"({"Pod":[1,2],"NodeNameToMetaVictims":null})").has_value());
  EXPECT_FALSE(PeekPreemptor(R"({"Pod":{"metadata":{"uid":7}}})").has_value());
  EXPECT_FALSE(PeekPreemptor(std::string(R"({"P\u006fd":)") + std::string(kPod) + "}").has_value());
  EXPECT_FALSE(PeekPreemptor(R"({"Pod":{"metadata":)").has_value());
  EXPECT_FALSE(PeekPreemptor("").has_value());
}

TEST(PreemptionWire, TheAnswerIsMetaVictimsByNodeNameAsGoWritesAMap) {
  std::vector<MetaVictims> nodes = {{.node = "b", .uids = {"u2", "u1"}, .pdb_violations = 1}, {.node = "a", .uids = {"u3"}}};
  EXPECT_EQ(EncodePreemptionResult(nodes),
            R"({"NodeNameToMetaVictims":{"a":{"Pods":[{"UID":"u3"}],"NumPDBViolations":0},)"
            R"("b":{"Pods":[{"UID":"u2"},{"UID":"u1"}],"NumPDBViolations":1}}})");
  EXPECT_EQ(EncodePreemptionResult({}), R"({"NodeNameToMetaVictims":{}})");
}

}  // namespace preemption_wire_test
}  // namespace gpusched::extender
