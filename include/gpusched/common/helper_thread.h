// File: helper_thread.h
//
// One thread kept alive to share a request's work with the thread serving it, so that a verb
// that splits its work in two (preempt's candidates) does not pay for a new thread each time:
// kube-scheduler waits on those verbs inside its scheduling cycle.
//
// RunTogether(work) runs `work` on the caller's thread and on the helper at once and returns when
// both calls have returned; `work` takes its items from a shared counter, so a helper that wakes
// late (or not before the caller ran out of items) takes fewer or none. One caller at a time uses
// the helper: a concurrent caller runs its work on its own thread only.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

#include "gpusched/common/mutex.h"

namespace gpusched {

class HelperThread {
 public:
  HelperThread();
  ~HelperThread();  // waits for the helper to stop; REQUIRES: no RunTogether in progress
  HelperThread(const HelperThread&) = delete;
  HelperThread& operator=(const HelperThread&) = delete;

  // Calls work() on this thread and, unless another caller holds the helper, on the helper
  // thread too; returns when every call that started has returned. `work` must be safe to call
  // twice at once, and must return once the items it shares are taken (the helper's call may
  // start after the caller's has returned, or not at all).
  void RunTogether(const std::function<void()>& work);

 private:
  using Task = std::function<void()>;
  void Loop();

  Mutex busy_;  // held by the caller that has the helper
  // nullptr: idle; a caller's task: posted, not started; &running_: the helper is running it;
  // &stop_: the helper returns.
  std::atomic<const Task*> task_{nullptr};
  const Task running_, stop_;
  std::thread thread_;
};

}  // namespace gpusched
