// File: mutex.h
//
// A std::mutex with clang thread-safety annotations (leveldb's port::Mutex). Under clang with
// -Wthread-safety, members marked GPUSCHED_GUARDED_BY(mu_) can only be touched while mu_ is held.
#pragma once

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
  std::mutex mu_;
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
