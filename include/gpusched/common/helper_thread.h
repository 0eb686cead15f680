// File: helper_thread.h
//
// One thread kept alive to share a request's work with the thread serving it, so that a verb
// that splits its work in two (preempt's candidates) does not pay for a new thread each time:
// kube-scheduler waits on those verbs inside its scheduling cycle.
//
// Start(work) posts `work` to the helper and returns at once; the caller goes on (parsing the
// rest of the request, or running the same work), then Wait()s. `work` takes its items from a
// queue or counter it shares with the caller, so a helper that wakes late takes fewer or none;
// Wait takes the work back if the helper has not started it. One caller at a time holds the
// helper: Start fails for the others, which do all their work themselves.
//
// Thread-safe.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>

namespace gpusched {

class HelperThread {
 public:
  HelperThread();
  ~HelperThread();  // stops the helper; REQUIRES: no work posted and not waited for
  HelperThread(const HelperThread&) = delete;
  HelperThread& operator=(const HelperThread&) = delete;

  // Posts work() to the helper, unless another caller holds it: returns false then (work is
  // never called). After true the caller must call Wait() before `work` is destroyed.
  bool Start(const std::function<void()>& work);
  // Returns once the work of the last successful Start has returned, or has been taken back
  // before the helper started it (it is never called then); the helper is free again after.
  void Wait();

 private:
  using Task = std::function<void()>;
  void Loop();

  std::atomic<bool> busy_{false};  // a caller holds the helper (between Start and Wait)
  const Task* posted_ = nullptr;   // the holder's work; read and written by the holder only
  // nullptr: idle; a caller's task: posted, not started; &running_: the helper is running it;
  // &stop_: the helper returns.
  std::atomic<const Task*> task_{nullptr};
  const Task running_, stop_;
  std::thread thread_;
};

// Shares the items [0, count) between this thread and `helper` (null, busy, or one core: this
// thread alone), `chunk` at a time: calls worker(take) on each thread, where take(&begin, &end)
// sets the next items [begin, end) and returns false once none are left. Returns when all are
// done. A worker keeps what it must not share (buffers, choosers) for its whole run.
template <typename Worker>
void ShareItems(HelperThread* helper, size_t count, size_t chunk, Worker&& worker) {
  std::atomic<size_t> next{0};
  auto take = [&](size_t* begin, size_t* end) {
    *begin = std::min(next.fetch_add(chunk, std::memory_order_relaxed), count);
    *end = std::min(*begin + chunk, count);
    return *begin < *end;
  };
  std::function<void()> run = [&] { worker(take); };
  bool shared = helper != nullptr && count > chunk && std::thread::hardware_concurrency() >= 2 && helper->Start(run);
  run();
  if (shared) helper->Wait();
}

}  // namespace gpusched
