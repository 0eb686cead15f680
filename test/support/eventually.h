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

}  // namespace gpusched::testing
