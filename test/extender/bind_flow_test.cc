// The bind flow (extender/bind_flow.h) on its own, with a fake binder and a fake clock: what each
// binder answer does to the inventory's booking (kept, released, planned again, finished by a
// retry), the deadline, and one bind of a pod at a time.
#include "gpusched/extender/bind_flow.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>

#include "../placement/test_nodes.h"
#include "fake_clock.h"
#include "gpusched/extender/pod_binder.h"

namespace gpusched::extender {
namespace bind_flow_test {

using ::testing::HasSubstr;

// Answers binds from a script (OK once it runs out), recording each call; `during` runs inside
// each call first (to advance a clock or block).
class FakeBinder final : public PodBinder {
 public:
  Status Bind(const BindTarget& target) override {
    if (during) during();
    std::lock_guard lock(mu_);
    const Placement& p = target.allocation.placement;
    calls.push_back(Call{target.pod.uid, target.node.name, p.whole_gpus, p.containers.empty() ? std::vector<int>{} : p.containers[0].gpu_indices});
    if (answers.empty()) return OkStatus();
    Status s = answers.front();
    answers.pop_front();
    return s;
  }

  struct Call {
    std::string uid;
    std::string node;
    int64_t gpus = 0;
    std::vector<int> mgpu_indices;  // an mGPU pod's first container's GPUs
  };
  std::deque<Status> answers;
  std::vector<Call> calls;
  std::function<void()> during;

 private:
  std::mutex mu_;
};

Pod Pending(std::string uid, int64_t gpus) {
  Pod p = placement::WholePod(gpus);
  p.uid = uid;
  p.name = uid;
  return p;
}

BindingArgs Args(const std::string& uid, const std::string& node) {
  return BindingArgs{.pod_name = uid, .pod_namespace = "ns", .pod_uid = uid, .node = node};
}

// A node "w" of 2 whole GPUs, and pods remembered from filter as pending.
class BindFlowTest : public ::testing::Test {
 protected:
  BindFlowTest() {
    inventory_.ReplaceCluster({.nodes = {placement::WholeNode("w", 2)}});
    with_.binder = &binder_;
    with_.clock = &clock_;
  }

  void Pend(const std::string& uid, int64_t gpus) { inventory_.RememberPod(Pending(uid, gpus)); }
  int64_t UsedOnW() const { return inventory_.Snapshot()->FindNode("w")->whole_used; }

  inventory::Inventory inventory_;
  ServiceOptions options_;
  testing::FakeClock clock_;
  FakeBinder binder_;
  ServiceCollaborators with_;
  BindFlow flow_{&inventory_, &options_, &with_, nullptr};
};

TEST_F(BindFlowTest, ABindBooksThePodAndBindsItOnceThroughTheBinder) {
  Pend("a", 1);
  ASSERT_TRUE(flow_.Bind(Args("a", "w")).ok());
  ASSERT_EQ(binder_.calls.size(), 1u);
  EXPECT_EQ(binder_.calls[0].node, "w");
  EXPECT_EQ(binder_.calls[0].gpus, 1);
  std::optional<Allocation> held = inventory_.AllocationOf("a");
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->origin, AllocationOrigin::kCommitted);  // counted until the cluster shows it
  EXPECT_EQ(UsedOnW(), 1);
}

TEST_F(BindFlowTest, ARefusedBindReleasesTheBooking) {
  Pend("a", 1);
  binder_.answers = {InternalError("pods \"a\" is forbidden: cannot create pods/binding")};
  Status s = flow_.Bind(Args("a", "w"));
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("bind ns/a to w failed: pods \"a\" is forbidden"));
  EXPECT_FALSE(inventory_.AllocationOf("a").has_value());
  EXPECT_EQ(UsedOnW(), 0);
}

TEST_F(BindFlowTest, AnUnknownOutcomeKeepsTheBookingAndTheRetryFinishesIt) {
  Pend("a", 2);
  binder_.answers = {DeadlineExceededError("no answer from the API server")};
  EXPECT_EQ(flow_.Bind(Args("a", "w")).code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(UsedOnW(), 2);  // the pod may be bound: its GPUs stay taken
  // kube-scheduler retries: the same placement is bound again, not planned anew (the node is
  // full with the pod's own booking, so a new plan would not fit).
  ASSERT_TRUE(flow_.Bind(Args("a", "w")).ok());
  ASSERT_EQ(binder_.calls.size(), 2u);
  EXPECT_EQ(binder_.calls[1].gpus, 2);
  EXPECT_EQ(UsedOnW(), 2);
}

TEST_F(BindFlowTest, ANodeThatChangedUnderTheBindIsPlannedAgainOnTheNodeAsItIsNow) {
  // An mGPU node of 2 GPUs; pod a asks 60% of one. Its first bind is Aborted (the node changed);
  // before the next commit, pod b takes half of the GPU a was given: a lands on the other one.
  Node m = placement::SharedNode("m", 2, 16384);
  inventory_.UpsertNodes({m});
  Pod a = placement::MgpuPod({placement::MgpuC("c", 60, 4096)});
  a.uid = a.name = "a";
  inventory_.RememberPod(Pod(a));
  Pod b = placement::MgpuPod({placement::MgpuC("c", 50, 4096)});
  b.uid = b.name = "b";
  inventory_.RememberPod(Pod(b));
  binder_.answers = {AbortedError("node m changed (resourceVersion)")};
  int commits = 0;
  with_.before_commit = [&] {
    if (++commits != 2) return;
    Placement half{.kind = RequestKind::kMgpu};
    half.containers.push_back(ContainerAssignment{.container = "c", .gpu_indices = binder_.calls.at(0).mgpu_indices,
                                                  .milli_per_gpu = 500, .mib_per_gpu = 4096});
    ASSERT_TRUE(inventory_.Commit(b, "m", half).ok());
  };
  ASSERT_TRUE(flow_.Bind(Args("a", "m")).ok());
  ASSERT_EQ(binder_.calls.size(), 2u);
  ASSERT_THAT(binder_.calls[0].mgpu_indices, ::testing::SizeIs(1));
  ASSERT_THAT(binder_.calls[1].mgpu_indices, ::testing::SizeIs(1));
  EXPECT_NE(binder_.calls[1].mgpu_indices[0], binder_.calls[0].mgpu_indices[0]);
  EXPECT_EQ(inventory_.AllocationOf("a")->placement.containers[0].gpu_indices, binder_.calls[1].mgpu_indices);
}

TEST_F(BindFlowTest, ABindThatNoLongerFitsChangesNothing) {
  Pend("a", 2);
  Pend("b", 1);
  ASSERT_TRUE(flow_.Bind(Args("a", "w")).ok());
  Status s = flow_.Bind(Args("b", "w"));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("bind ns/b to w rejected"));
  EXPECT_EQ(binder_.calls.size(), 1u);
  EXPECT_FALSE(inventory_.AllocationOf("b").has_value());
}

TEST_F(BindFlowTest, ANodeThatKeepsChangingGivesUpAtTheDeadline) {
  Pend("a", 1);
  for (int i = 0; i < options_.bind_attempts; ++i) binder_.answers.push_back(AbortedError("node w changed"));
  binder_.during = [&] { clock_.Advance(std::chrono::seconds(4)); };  // past the 6 s deadline at the second try
  Status s = flow_.Bind(Args("a", "w"));
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(s.message(), HasSubstr("gave up after 2 attempts in 6 s"));
  EXPECT_EQ(binder_.calls.size(), 2u);
  EXPECT_EQ(UsedOnW(), 0);  // each refused try released its booking
}

TEST_F(BindFlowTest, ARetryWhileTheFirstBindRunsIsRefusedAndUndoesNothing) {
  Pend("a", 1);
  std::mutex mu;
  std::condition_variable cv;
  int entered = 0;
  bool release = false;
  // The first bind waits in the binder until released (at most 30 s, so that a broken guard
  // fails the test instead of hanging it); a second call into the binder does not wait.
  binder_.during = [&] {
    std::unique_lock lock(mu);
    if (++entered > 1) return;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(30), [&] { return release; });
  };
  auto first = std::async(std::launch::async, [&] { return flow_.Bind(Args("a", "w")); });
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return entered > 0; })) << "the first bind never reached the binder";
  }
  Status retry = flow_.Bind(Args("a", "w"));
  EXPECT_EQ(retry.code(), StatusCode::kAborted);
  EXPECT_THAT(retry.message(), HasSubstr("a bind of this pod is already in progress"));
  {
    std::lock_guard lock(mu);
    release = true;
    EXPECT_EQ(entered, 1) << "the retry reached the binder";
  }
  cv.notify_all();
  EXPECT_TRUE(first.get().ok());
  EXPECT_EQ(UsedOnW(), 1);
}

TEST_F(BindFlowTest, APodMustHavePassedFilterAndItsUidMustBeItsOwn) {
  EXPECT_EQ(flow_.Bind(Args("ghost", "w")).code(), StatusCode::kNotFound);
  Pend("a", 1);
  BindingArgs other = Args("a", "w");
  other.pod_name = "b";
  Status s = flow_.Bind(other);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("uid belongs to pod ns/a"));
  EXPECT_TRUE(binder_.calls.empty());
}

TEST(BindFlowWithoutBinder, TheBookingIsTheBindAndARepeatIsIdempotent) {
  inventory::Inventory inventory;
  inventory.ReplaceCluster({.nodes = {placement::WholeNode("w", 2), placement::WholeNode("v", 2)}});
  inventory.RememberPod(Pending("a", 1));
  ServiceOptions options;
  ServiceCollaborators with;  // no binder: snapshot mode
  BindFlow flow(&inventory, &options, &with, nullptr);
  ASSERT_TRUE(flow.Bind(Args("a", "w")).ok());
  EXPECT_TRUE(flow.Bind(Args("a", "w")).ok());  // already bound there
  Status elsewhere = flow.Bind(Args("a", "v"));
  EXPECT_EQ(elsewhere.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(elsewhere.message(), HasSubstr("pod is already bound to w"));
  EXPECT_EQ(inventory.Snapshot()->FindNode("w")->whole_used, 1);
}

}  // namespace bind_flow_test
}  // namespace gpusched::extender
