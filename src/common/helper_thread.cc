// File: helper_thread.cc
//
// The hand-off between a request's thread and its helper through one atomic task pointer: the
// helper claims posted work by compare-and-swap before running it, and Wait either takes back work
// not yet claimed or waits until the helper is done.
#include "gpusched/common/helper_thread.h"

namespace gpusched {

HelperThread::HelperThread() : thread_([this] { Loop(); }) {}

HelperThread::~HelperThread() {
  task_.store(&stop_);
  task_.notify_one();
  thread_.join();
}

void HelperThread::Loop() {
  while (true) {
    task_.wait(nullptr);
    const Task* task = task_.load();
    if (task == &stop_) return;
    // Claimed only if the caller has not taken it back in the meantime.
    if (task == nullptr || task == &running_ || !task_.compare_exchange_strong(task, &running_)) continue;
    (*task)();
    task_.store(nullptr);
    task_.notify_all();
  }
}

bool HelperThread::Start(const std::function<void()>& work) {
  if (busy_.exchange(true)) return false;
  posted_ = &work;
  task_.store(&work);
  task_.notify_one();
  return true;
}

void HelperThread::Wait() {
  // Taken back if the helper has not started it; otherwise wait until it returns.
  const Task* posted = posted_;
  if (!task_.compare_exchange_strong(posted, nullptr)) {
    for (const Task* t = task_.load(); t != nullptr; t = task_.load()) task_.wait(t);
  }
  posted_ = nullptr;
  busy_.store(false);
}

}  // namespace gpusched
