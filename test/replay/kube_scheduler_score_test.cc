// kube-scheduler's default resource scores, as the churn replay places CPU-only pods with them
// (kube_scheduler_score.h): LeastAllocated plus BalancedAllocation over cpu and memory.
#include "kube_scheduler_score.h"

#include <gtest/gtest.h>

namespace gpusched::replay {
namespace kube_scheduler_score_test {

// A node of 64 CPUs and 256 GiB with `cpu_used` milli-CPU and `mem_used` MiB requested.
scoring::NodeView Node(int64_t cpu_used, int64_t mem_used) {
  scoring::NodeView n;
  n.cpu_cap = 64000;
  n.mem_cap = 262144;
  n.cpu_free = n.cpu_cap - cpu_used;
  n.mem_free = n.mem_cap - mem_used;
  return n;
}

// A pod of 8 CPUs and 16 GiB. On a node with 16 CPUs used, LeastAllocated gives cpu 62 (40/64)
// and memory 93 (240/256), mean 77; on one with 64 GiB used, 87 and 68, mean 77 too. Balanced-
// Allocation breaks the tie: used fractions 0.375 and 0.0625 (std 0.156) score 84; 0.125 and
// 0.3125 (std 0.094) score 90. Without it the two nodes were a random choice.
TEST(KubeSchedulerScore, BalancedAllocationBreaksALeastAllocatedTie) {
  scoring::PodShape pod;
  pod.cpu = 8000;
  pod.mem = 16384;
  EXPECT_EQ(KubeSchedulerScore(pod, Node(16000, 0)), 77 + 84);
  EXPECT_EQ(KubeSchedulerScore(pod, Node(0, 65536)), 77 + 90);
  // An empty node: 87 and 93 (mean 90); fractions 0.125 and 0.0625 (std 0.031): 96.
  EXPECT_EQ(KubeSchedulerScore(pod, Node(0, 0)), 90 + 96);
}

// A node that tracks no memory: both plugins leave it out, as upstream leaves out a resource the
// node does not list (LeastAllocated's mean is cpu's alone; one fraction deviates by nothing).
TEST(KubeSchedulerScore, AnUntrackedResourceIsLeftOut) {
  scoring::PodShape pod;
  pod.cpu = 8000;
  scoring::NodeView n = Node(0, 0);
  n.mem_cap = scoring::kUntracked;
  n.mem_free = scoring::kUntracked;
  EXPECT_EQ(KubeSchedulerScore(pod, n), 87 + 100);
}

}  // namespace kube_scheduler_score_test
}  // namespace gpusched::replay
