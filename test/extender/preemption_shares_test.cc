// DecidePreemption over many candidates, where it shares them out between threads: the answer is
// the one each candidate gets alone, in the same order. And the preempt verb, which decides
// candidates while the rest of the body is parsed: the answer is the parsed request's.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpusched/extender/preemption.h"
#include "gpusched/extender/service.h"
#include "gpusched/extender/service_options.h"
#include "gpusched/inventory/cluster_objects.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/placement/pod_request.h"
#include "cluster_json.h"

namespace gpusched::extender {
namespace preemption_shares_test {

// `nodes` mGPU nodes of 2 GPUs, each GPU holding 2 to 4 pods of random shares and priorities.
ClusterObjects FullMgpuCluster(int nodes) {
  std::mt19937 rng(5);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  ClusterObjects c;
  for (int n = 0; n < nodes; ++n) {
    std::string name = fmt::format("m{:03}", n);
    c.nodes.push_back(Node{.name = name, .mode_label = "mgpu", .compute_policy_label = "fixed-share",
                           .allocatable = {.mgpu_core_percent = 200, .mgpu_memory_mib = 2 * 16384}});
    for (int g = 0; g < 2; ++g) {
      for (int k = uniform(2, 4); k > 0; --k) {
        std::string uid = fmt::format("{}-g{}-{}", name, g, k);
        Pod pod{.uid = uid, .namespace_name = "t", .name = uid, .node_name = name, .phase = PodPhase::kRunning,
                .priority = uniform(0, 3)};
        Container ctr{.name = "main"};
        ctr.limits.mgpu_core_percent = 20;
        ctr.limits.mgpu_memory_mib = 2048;
        pod.containers.push_back(ctr);
        pod.annotations["vke.volcengine.com/gpu-index-container-main"] = std::to_string(g);
        c.pods.push_back(std::move(pod));
      }
    }
  }
  return c;
}

TEST(PreemptionShares, ManyCandidatesGetTheAnswerEachGetsAlone) {
  inventory::Inventory inv;
  inv.ReplaceCluster(FullMgpuCluster(300));
  auto snapshot = inv.Snapshot();
  ServiceOptions options;
  HelperThread helper;
  EvaluationInputs inputs{.snapshot = snapshot.get(), .options = &options, .helper = &helper};
  Container ctr{.name = "c"};
  ctr.limits.mgpu_core_percent = 70;
  ctr.limits.mgpu_memory_mib = 4096;
  PreemptionArgs all{.pod = Pod{.uid = "urgent", .namespace_name = "t", .name = "urgent", .priority = 2, .containers = {ctr}},
                     .meta = true};
  for (int n = 0; n < 300; ++n) all.candidates.push_back(PreemptionCandidate{.node = fmt::format("m{:03}", n)});
  placement::PodRequest request = placement::AnalyzePod(all.pod);
  std::vector<MetaVictims> together = DecidePreemption(all, request, inputs);
  std::vector<MetaVictims> alone;
  std::vector<PreemptionArgs> ones;  // the answers' node names point into them
  ones.reserve(all.candidates.size());
  for (const PreemptionCandidate& c : all.candidates) {
    ones.push_back(PreemptionArgs{.pod = all.pod, .meta = true, .candidates = {c}});
    for (MetaVictims& m : DecidePreemption(ones.back(), request, inputs)) alone.push_back(std::move(m));
  }
  ASSERT_GT(alone.size(), 100u);  // most nodes are helped by evicting pods of priority 0 or 1
  ASSERT_LT(alone.size(), 300u);  // and some are not (a GPU of pods of priority 2 and 3 only)
  ASSERT_EQ(together.size(), alone.size());
  for (size_t i = 0; i < alone.size(); ++i) {
    EXPECT_EQ(together[i].node, alone[i].node);
    EXPECT_EQ(together[i].uids, alone[i].uids) << alone[i].node;
  }
}

// A preempt body for an mGPU pod of priority 2 over every node of `inv`, kube-scheduler offering
// up to 10 pods of each as victims.
std::string PreemptBody(const inventory::Inventory& inv) {
  std::map<std::string, std::vector<std::string>> offered;
  for (const inventory::NodeStatePtr& node : inv.Snapshot()->nodes()) {
    std::vector<std::string>& uids = offered[node->node.name];
    for (const Allocation& a : node->allocations) {
      if (uids.size() < 10) uids.push_back(a.pod_uid);
    }
  }
  testing::PodJson pod{.name = "urgent", .namespace_name = "t", .uid = "urgent", .containers = {testing::Mgpu("c", 70, 4096)},
                       .priority = 2};
  return testing::PreemptMetaJson(pod.ToJson(), offered);
}

// The answer of deciding the fully parsed request, on one thread.
std::string ParsedAnswer(const std::string& body, const inventory::Inventory& inv) {
  StatusOr<PreemptionArgs> args = ParsePreemptionArgs(body);
  EXPECT_TRUE(args.ok()) << args.status().message();
  if (!args.ok()) return "";
  auto snapshot = inv.Snapshot();
  ServiceOptions options;
  placement::PodRequest request = placement::AnalyzePod(args->pod);
  return EncodePreemptionResult(DecidePreemption(*args, request, {.snapshot = snapshot.get(), .options = &options}));
}

// The preempt verb over 300 full mGPU nodes, with a request and the answer it must get.
class PreemptVerb : public ::testing::Test {
 protected:
  PreemptVerb() {
    inv.ReplaceCluster(FullMgpuCluster(300));
    body = PreemptBody(inv);
    expected = ParsedAnswer(body, inv);
  }
  inventory::Inventory inv;
  Service service{&inv, ServiceOptions{}};
  std::string body, expected;
};

TEST_F(PreemptVerb, DecidingWhileParsingAnswersAsTheParsedRequest) {
  ASSERT_EQ(body.rfind(R"({"Pod":)", 0), 0u);  // the Pod first, as kube-scheduler writes it: read ahead
  ASSERT_GT(expected.size(), 1000u);
  for (int round = 0; round < 20; ++round) {  // the helper's share differs from run to run
    StatusOr<std::string> answer = service.Preempt(body);
    ASSERT_TRUE(answer.ok()) << answer.status().message();
    ASSERT_EQ(*answer, expected) << "round " << round;
  }
  // The Pod last: nothing is read ahead, and the answer is the same.
  size_t map = body.find(R"(,"NodeNameToMetaVictims")");
  ASSERT_NE(map, std::string::npos);
  std::string pod_last = "{" + body.substr(map + 1, body.size() - map - 2) + "," + body.substr(1, map - 1) + "}";
  StatusOr<std::string> answer = service.Preempt(pod_last);
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  EXPECT_EQ(*answer, expected);
}

TEST_F(PreemptVerb, AnErrorAfterCandidatesWereDecidedFailsTheRequestAndTheNextOneIsServed) {
  // Broken near the end, after most candidates were handed to the helper: a syntax error, and a
  // victim without a UID.
  std::string syntax = body.substr(0, body.size() - 2) + "]}";
  std::string no_uid = body;
  size_t last = no_uid.rfind(R"({"UID":")");
  ASSERT_NE(last, std::string::npos);
  no_uid.replace(last, 8, R"({"UID":7,"x":")");
  for (int round = 0; round < 10; ++round) {
    StatusOr<std::string> broken = service.Preempt(syntax);
    ASSERT_FALSE(broken.ok());
    EXPECT_NE(broken.status().message().find("malformed JSON"), std::string::npos) << broken.status().message();
    broken = service.Preempt(no_uid);
    ASSERT_FALSE(broken.ok());
    EXPECT_NE(broken.status().message().find(".UID: want string, got number"), std::string::npos) << broken.status().message();
    StatusOr<std::string> answer = service.Preempt(body);
    ASSERT_TRUE(answer.ok()) << answer.status().message();
    EXPECT_EQ(*answer, expected);
  }
}

TEST_F(PreemptVerb, ConcurrentCallsEachGetTheirAnswer) {
  std::atomic<int> wrong{0};
  auto caller = [&] {
    for (int round = 0; round < 10; ++round) {
      StatusOr<std::string> answer = service.Preempt(body);
      if (!answer.ok() || *answer != expected) wrong.fetch_add(1);
    }
  };
  std::thread other(caller);  // one holds the helper, the other decides alone
  caller();
  other.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace preemption_shares_test
}  // namespace gpusched::extender
