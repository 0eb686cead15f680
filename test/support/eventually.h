// File: eventually.h
//
// Waiting on asynchronous effects (watches, threads) in tests.
#pragma once

#include <chrono>
#include <thread>

namespace gpusched::testing {

// Polls `done` every 10 ms for up to 10 s; returns its last answer.
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 1000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

// Polls `done` every 10 ms for up to `limit`; returns its last answer. For waits made of slow
// steps on purpose (requests the fake API server holds back), which a loaded machine stretches.
template <typename F>
bool EventuallyWithin(std::chrono::milliseconds limit, F done) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

}  // namespace gpusched::testing
