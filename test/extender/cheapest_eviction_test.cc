// The order in which evictions that make room compare (cheapest_eviction.h): kube-scheduler's
// order of preemption candidates, so that explain and the filter's Event name the node preempt
// would pick.
#include "gpusched/extender/cheapest_eviction.h"

#include <gtest/gtest.h>

namespace gpusched::extender {
namespace cheapest_eviction_test {

Evictions Of(std::vector<int32_t> priorities, int64_t pdb_violations = 0) {
  Evictions out{.pdb_violations = pdb_violations};
  for (int32_t p : priorities) out.pods.push_back(Eviction{.pod = "ml/p", .uid = "u", .priority = p});
  return out;
}

TEST(CheapestEviction, FewerBudgetViolationsComeFirstWhateverThePriorities) {
  EXPECT_TRUE(Cheaper(Of({100, 100}, 0), "b", Of({1}, 1), "a"));
  EXPECT_FALSE(Cheaper(Of({1}, 1), "a", Of({100, 100}, 0), "b"));
}

TEST(CheapestEviction, ThenTheLowestHighestPriorityThenTheLeastTotal) {
  EXPECT_TRUE(Cheaper(Of({5, 5, 5}), "b", Of({6}), "a"));   // highest 5 < 6
  EXPECT_TRUE(Cheaper(Of({5, 1}), "b", Of({5, 3}), "a"));   // same highest, total 6 < 8
}

TEST(CheapestEviction, ThenFewerVictimsThenTheNodeName) {
  EXPECT_TRUE(Cheaper(Of({5, 0}), "b", Of({5, 0, 0}), "a"));  // same total, 2 < 3 victims
  EXPECT_TRUE(Cheaper(Of({5}), "a", Of({5}), "b"));
  EXPECT_FALSE(Cheaper(Of({5}), "b", Of({5}), "a"));
  EXPECT_FALSE(Cheaper(Of({5}), "a", Of({5}), "a"));  // a strict order
}

}  // namespace cheapest_eviction_test
}  // namespace gpusched::extender
