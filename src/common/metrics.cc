// File: metrics.cc
//
// The registry in Prometheus text form: histogram observations on relaxed atomics, escaped label
// values, HELP and TYPE headers, counters, cumulative buckets with sum and count, then the
// collectors' scrape-time gauges.
#include "gpusched/common/metrics.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpusched::metrics {
namespace {

void AppendEscaped(std::string* out, std::string_view v) {
  for (char c : v) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '"') {
      out->append("\\\"");
    } else if (c == '\n') {
      out->append("\\n");
    } else {
      out->push_back(c);
    }
  }
}

}  // namespace

void Histogram::Observe(double seconds) {
  size_t i = std::lower_bound(kLatencyBuckets.begin(), kLatencyBuckets.end(), seconds) - kLatencyBuckets.begin();
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<uint64_t>(std::max(0.0, seconds) * 1e9), std::memory_order_relaxed);
}

uint64_t Histogram::Cumulative(size_t i) const {
  uint64_t sum = 0;
  for (size_t b = 0; b <= i && b < buckets_.size(); ++b) sum += buckets_[b].load(std::memory_order_relaxed);
  return sum;
}

void AppendLabels(std::string* out, const std::vector<std::string>& names, const std::vector<std::string>& values) {
  if (names.empty()) return;
  out->push_back('{');
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out->push_back(',');
    out->append(names[i]);
    out->append("=\"");
    AppendEscaped(out, i < values.size() ? values[i] : "");
    out->push_back('"');
  }
  out->push_back('}');
}

void AppendHeader(std::string* out, std::string_view name, std::string_view help, std::string_view type) {
  fmt::format_to(std::back_inserter(*out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

template <>
void Family<Counter>::Render(std::string* out) const {
  AppendHeader(out, name_, help_, "counter");
  MutexLock lock(&mu_);
  for (const auto& [values, c] : children_) {
    out->append(name_);
    AppendLabels(out, labels_, values);
    fmt::format_to(std::back_inserter(*out), " {}\n", c->Value());
  }
}

template <>
void Family<Histogram>::Render(std::string* out) const {
  AppendHeader(out, name_, help_, "histogram");
  MutexLock lock(&mu_);
  std::vector<std::string> names = labels_;
  names.push_back("le");
  for (const auto& [values, h] : children_) {
    std::vector<std::string> with_le = values;
    with_le.emplace_back();
    for (size_t i = 0; i <= kLatencyBuckets.size(); ++i) {
      with_le.back() = i < kLatencyBuckets.size() ? fmt::format("{}", kLatencyBuckets[i]) : "+Inf";
      out->append(name_ + "_bucket");
      AppendLabels(out, names, with_le);
      fmt::format_to(std::back_inserter(*out), " {}\n", h->Cumulative(i));
    }
    out->append(name_ + "_sum");
    AppendLabels(out, labels_, values);
    fmt::format_to(std::back_inserter(*out), " {:.9f}\n", h->Sum());
    out->append(name_ + "_count");
    AppendLabels(out, labels_, values);
    fmt::format_to(std::back_inserter(*out), " {}\n", h->Count());
  }
}

CounterFamily& Registry::AddCounter(std::string name, std::string help, std::vector<std::string> labels) {
  counters_.push_back(std::make_unique<CounterFamily>(std::move(name), std::move(help), std::move(labels)));
  return *counters_.back();
}

HistogramFamily& Registry::AddHistogram(std::string name, std::string help, std::vector<std::string> labels) {
  histograms_.push_back(std::make_unique<HistogramFamily>(std::move(name), std::move(help), std::move(labels)));
  return *histograms_.back();
}

void Registry::AddCollector(std::function<void(std::string*)> collector) { collectors_.push_back(std::move(collector)); }

std::string Registry::Render() const {
  std::string out;
  for (const auto& c : counters_) c->Render(&out);
  for (const auto& h : histograms_) h->Render(&out);
  for (const auto& collect : collectors_) collect(&out);
  return out;
}

}  // namespace gpusched::metrics
