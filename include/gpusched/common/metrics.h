// File: metrics.h
//
// A small Prometheus registry: counters and histograms in labeled families, rendered in the text
// exposition format (version 0.0.4). Families are created once at start-up; children (one per
// label-value tuple) are created on first use and live as long as the registry. Collectors add
// gauges computed at scrape time (inventory state).
//
// Thread-safe: Inc/Observe are lock-free; With() takes the family's lock only to find a child.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/mutex.h"

namespace gpusched::metrics {

class Counter {
 public:
  void Inc(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// Latency buckets in seconds, 50 us to 5 s.
inline constexpr std::array<double, 14> kLatencyBuckets = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                           0.01,    0.025,  0.05,    0.1,    0.25,   1.0,   5.0};

class Histogram {
 public:
  void Observe(double seconds);
  // Returns the cumulative count of observations <= bucket i's bound; i == size: all.
  uint64_t Cumulative(size_t i) const;
  uint64_t Count() const { return count_.load(std::memory_order_relaxed); }
  double Sum() const { return static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9; }

 private:
  std::array<std::atomic<uint64_t>, kLatencyBuckets.size() + 1> buckets_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_ns_{0};
};

template <typename T>
class Family {
 public:
  Family(std::string name, std::string help, std::vector<std::string> labels)
      : name_(std::move(name)), help_(std::move(help)), labels_(std::move(labels)) {}

  // Returns the child for `values` (one per label name, in order).
  T& With(const std::vector<std::string>& values) GPUSCHED_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    std::unique_ptr<T>& child = children_[values];
    if (child == nullptr) child = std::make_unique<T>();
    return *child;
  }

  // Appends the family in the text format.
  void Render(std::string* out) const GPUSCHED_EXCLUDES(mu_);

 private:
  const std::string name_;
  const std::string help_;
  const std::vector<std::string> labels_;
  mutable Mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> children_ GPUSCHED_GUARDED_BY(mu_);
};

using CounterFamily = Family<Counter>;
using HistogramFamily = Family<Histogram>;

// Appends `{a="x",b="y"}` (escaped) for the label names and values; nothing when there are none.
void AppendLabels(std::string* out, const std::vector<std::string>& names, const std::vector<std::string>& values);
// Appends "# HELP" and "# TYPE" lines.
void AppendHeader(std::string* out, std::string_view name, std::string_view help, std::string_view type);

class Registry {
 public:
  CounterFamily& AddCounter(std::string name, std::string help, std::vector<std::string> labels);
  HistogramFamily& AddHistogram(std::string name, std::string help, std::vector<std::string> labels);
  // Adds a function that appends metrics computed at scrape time.
  void AddCollector(std::function<void(std::string*)> collector);

  // Returns every metric in the text exposition format.
  std::string Render() const;

 private:
  std::vector<std::unique_ptr<CounterFamily>> counters_;
  std::vector<std::unique_ptr<HistogramFamily>> histograms_;
  std::vector<std::function<void(std::string*)>> collectors_;
};

}  // namespace gpusched::metrics
