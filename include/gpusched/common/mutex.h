// File: mutex.h
//
// A std::mutex with clang thread-safety annotations (leveldb's port::Mutex), and a condition
// variable bound to it (port::CondVar). Under clang with -Wthread-safety (scripts/thread-safety.sh,
// run by the test script), members marked GPUSCHED_GUARDED_BY(mu_) can only be touched while mu_
// is held. Every mutex in gpusched is one of these.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define GPUSCHED_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define GPUSCHED_THREAD_ANNOTATION(x)
#endif

#define GPUSCHED_LOCKABLE GPUSCHED_THREAD_ANNOTATION(capability("mutex"))
#define GPUSCHED_SCOPED_LOCKABLE GPUSCHED_THREAD_ANNOTATION(scoped_lockable)
#define GPUSCHED_GUARDED_BY(x) GPUSCHED_THREAD_ANNOTATION(guarded_by(x))
#define GPUSCHED_REQUIRES(...) GPUSCHED_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define GPUSCHED_EXCLUDES(...) GPUSCHED_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define GPUSCHED_ACQUIRE(...) GPUSCHED_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define GPUSCHED_RELEASE(...) GPUSCHED_THREAD_ANNOTATION(release_capability(__VA_ARGS__))

namespace gpusched {

class GPUSCHED_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() GPUSCHED_ACQUIRE() { mu_.lock(); }
  void Unlock() GPUSCHED_RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// A condition variable for one Mutex. Wait and WaitFor release the mutex while they wait and hold
// it again when they return; callers re-check their condition in a loop (wake-ups may be spurious).
// REQUIRES: the caller holds the mutex given at construction, which outlives the CondVar.
class CondVar {
 public:
  explicit CondVar(Mutex* mu) : mu_(mu) {}
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void Wait() {
    std::unique_lock<std::mutex> lock(mu_->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // Returns false if `timeout` passed without a signal.
  template <typename Rep, typename Period>
  bool WaitFor(std::chrono::duration<Rep, Period> timeout) {
    std::unique_lock<std::mutex> lock(mu_->mu_, std::adopt_lock);
    bool signalled = cv_.wait_for(lock, timeout) == std::cv_status::no_timeout;
    lock.release();
    return signalled;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  Mutex* const mu_;
  std::condition_variable cv_;
};

// Holds a Mutex for its scope.
class GPUSCHED_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) GPUSCHED_ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() GPUSCHED_RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

}  // namespace gpusched
