// HelperThread: a request's work shared with one kept thread, items taken from a shared counter.
#include "gpusched/common/helper_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "eventually.h"
#include "gpusched/common/mutex.h"

namespace gpusched {
namespace helper_thread_test {

// Items [0, count) taken one at a time by whoever calls Work; counts how often each was done.
class Items {
 public:
  explicit Items(size_t count) : done_(count) {}
  void Work() {
    for (size_t i = next_.fetch_add(1); i < done_.size(); i = next_.fetch_add(1)) done_[i].fetch_add(1);
  }
  bool EachDoneOnce() const {
    for (const std::atomic<int>& d : done_) {
      if (d.load() != 1) return false;
    }
    return true;
  }

 private:
  std::atomic<size_t> next_{0};
  std::vector<std::atomic<int>> done_;
};

// Start, the same work on the caller's thread, Wait.
void RunTogether(HelperThread& helper, const std::function<void()>& work) {
  bool started = helper.Start(work);
  work();
  if (started) helper.Wait();
}

TEST(HelperThread, RunsTheWorkOnTheCallerAndOnTheHelperAtOnce) {
  HelperThread helper;
  Mutex mu;
  std::set<std::thread::id> threads;
  std::atomic<int> started{0};
  RunTogether(helper, [&] {
    started.fetch_add(1);
    {
      MutexLock lock(&mu);
      threads.insert(std::this_thread::get_id());
    }
    // Each call waits for the other to start: it returns only once both ran at the same time.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  });
  EXPECT_EQ(started.load(), 2);
  EXPECT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 1u);
}

TEST(HelperThread, EveryItemIsDoneOnceWhoeverTakesIt) {
  HelperThread helper;
  for (size_t round = 0; round < 2000; ++round) {
    Items items(round % 50);  // from none to a few dozen: the helper often wakes after they are gone
    RunTogether(helper, [&] { items.Work(); });
    ASSERT_TRUE(items.EachDoneOnce()) << "round " << round;
  }
}

TEST(HelperThread, ConcurrentCallersEachFinishTheirOwnWork) {
  HelperThread helper;
  std::atomic<bool> failed{false};
  auto caller = [&] {
    for (int round = 0; round < 500; ++round) {
      Items items(64);
      RunTogether(helper, [&] { items.Work(); });
      if (!items.EachDoneOnce()) failed.store(true);
    }
  };
  std::thread a(caller), b(caller);
  caller();
  a.join();
  b.join();
  EXPECT_FALSE(failed.load());
}

TEST(HelperThread, OneCallerHoldsItUntilItWaits) {
  HelperThread helper;
  std::atomic<bool> release{false};
  std::function<void()> slow = [&] {
    while (!release.load()) std::this_thread::yield();
  };
  ASSERT_TRUE(helper.Start(slow));
  std::function<void()> other = [] { ADD_FAILURE() << "ran while another caller held the helper"; };
  EXPECT_FALSE(helper.Start(other));
  release.store(true);
  helper.Wait();
  std::atomic<bool> ran{false};
  std::function<void()> next = [&] { ran.store(true); };
  ASSERT_TRUE(helper.Start(next));
  // The helper runs it, or Wait takes it back unstarted: either way Wait returns with it done or never begun.
  helper.Wait();
  bool after = ran.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(ran.load(), after);  // never called after Wait returned
}

// The process's threads, as Linux lists them. A joined thread leaves the list soon after the join
// returns (the kernel wakes the joiner before it removes the thread's entry).
size_t ThreadCount() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

TEST(HelperThread, StopsWhenDestroyedUnused) {
  size_t before = ThreadCount();
  for (int i = 0; i < 100; ++i) {
    {
      HelperThread helper;
      ASSERT_EQ(ThreadCount(), before + 1);
    }
    ASSERT_TRUE(gpusched::testing::Eventually([&] { return ThreadCount() == before; }))
        << "the helper's thread outlived it (iteration " << i << ")";
  }
}

}  // namespace helper_thread_test
}  // namespace gpusched
