#include "gpusched/replay/timeline_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <queue>

#include "gpusched/common/random.h"
#include "replay_cluster.h"

namespace gpusched::replay {
namespace {

using scoring::PodShape;

constexpr double kSampleEvery = 60;  // simulated seconds

// The q-quantile (nearest rank) of `v`; 0 when empty.
double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

enum PodClass { kCpuOnly, kSharing, kOneGpu, kMultiGpu, kClasses };

PodClass ClassOf(const PodShape& p) {
  if (!p.uses_gpu()) return kCpuOnly;
  if (p.sharing()) return kSharing;
  return p.gpus == 1 ? kOneGpu : kMultiGpu;
}

// One run's state: the cluster, the events still to come, the waiting pods and what was measured.
class Timeline {
 public:
  Timeline(const PreparedTrace& trace, const std::vector<TimelinePod>& pods, const scoring::Scorer& scorer,
           const TimelineOptions& options, double compress)
      : trace_(trace), pods_(pods), options_(options), rng_(options.seed), cluster_(trace, scorer, rng_), where_(pods.size()) {
    int64_t t0 = pods.empty() ? 0 : std::min_element(pods.begin(), pods.end(), [](const TimelinePod& a, const TimelinePod& b) {
                                      return a.created_s < b.created_s;
                                    })->created_s;
    arrive_.resize(pods.size());
    for (size_t k = 0; k < pods.size(); ++k) {
      arrive_[k] = static_cast<double>(pods[k].created_s - t0) / compress;
      order_.push_back(k);
    }
    std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) { return arrive_[a] < arrive_[b]; });
    horizon_ = order_.empty() ? 0 : arrive_[order_.back()];
  }

  void Run() {
    size_t next = 0;
    while (next < order_.size() || !departures_.empty()) {
      bool depart = !departures_.empty() && (next == order_.size() || departures_.top().first <= arrive_[order_[next]]);
      double now = depart ? departures_.top().first : arrive_[order_[next]];
      SampleUntil(now);
      if (depart) {
        size_t k = departures_.top().second;
        departures_.pop();
        cluster_.Remove(Shape(k), where_[k]);
        RetryWaiting(where_[k].node, now);
      } else {
        size_t k = order_[next++];
        if (!TryPlace(k, now)) waiting_.push_back(k);
      }
    }
    SampleUntil(horizon_);
  }

  void Report(TimelineResult* r) const {
    r->never_placed = static_cast<int>(waiting_.size());
    double sum = 0;
    for (double a : alloc_) sum += a;
    r->alloc_rate_mean = alloc_.empty() ? 0 : sum / static_cast<double>(alloc_.size());
    r->alloc_rate_p10 = Percentile(alloc_, 0.10);
    double frag = 0;
    for (double f : frag_) frag += f;
    r->frag_pct_mean = frag_.empty() ? 0 : frag / static_cast<double>(frag_.size());
    r->pending_p50_s = Percentile(pending_all_, 0.50);
    r->pending_p99_s = Percentile(pending_all_, 0.99);
    r->pending_max_s = pending_all_.empty() ? 0 : *std::max_element(pending_all_.begin(), pending_all_.end());
    r->pending_p99_s_sharing = Percentile(pending_[kSharing], 0.99);
    r->pending_p99_s_onegpu = Percentile(pending_[kOneGpu], 0.99);
    r->pending_p99_s_multigpu = Percentile(pending_[kMultiGpu], 0.99);
    r->alloc_rate = alloc_;
  }

 private:
  const PodShape& Shape(size_t k) const { return trace_.pods[pods_[k].index]; }

  bool TryPlace(size_t k, double now) {
    if (!cluster_.Place(Shape(k), options_.selection, rng_, &where_[k])) return false;
    double waited = now - arrive_[k];
    pending_all_.push_back(waited);
    pending_[ClassOf(Shape(k))].push_back(waited);
    departures_.push({now + static_cast<double>(pods_[k].duration_s), k});
    return true;
  }

  // A pod left `node`: the waiting pods that now fit there are placed, in arrival order.
  void RetryWaiting(size_t node, double now) {
    std::vector<size_t> still;
    for (size_t k : waiting_) {
      if (scoring::Fits(Shape(k), cluster_.node(node)) && TryPlace(k, now)) continue;
      still.push_back(k);
    }
    waiting_ = std::move(still);
  }

  void SampleUntil(double t) {
    double capacity = static_cast<double>(trace_.capacity_milli);
    for (; next_sample_ <= t && next_sample_ <= horizon_; next_sample_ += kSampleEvery) {
      alloc_.push_back(100.0 * (capacity - static_cast<double>(cluster_.idle_total())) / capacity);
      frag_.push_back(100.0 * cluster_.frag_total() / capacity);
    }
  }

  const PreparedTrace& trace_;
  const std::vector<TimelinePod>& pods_;
  const TimelineOptions& options_;
  Rng rng_;
  ReplayCluster cluster_;
  std::vector<PlacedPod> where_;
  std::vector<double> arrive_;  // compressed arrival time, by pod
  std::vector<size_t> order_;   // pods by arrival
  double horizon_ = 0;          // the last arrival
  std::priority_queue<std::pair<double, size_t>, std::vector<std::pair<double, size_t>>, std::greater<>> departures_;
  std::vector<size_t> waiting_;  // in arrival order
  double next_sample_ = 0;
  std::vector<double> alloc_, frag_;
  std::vector<double> pending_all_;
  std::vector<double> pending_[kClasses];
};

}  // namespace

StatusOr<std::vector<TimelinePod>> TimelinePods(std::vector<TracePod> pods) {
  std::sort(pods.begin(), pods.end(), [](const TracePod& a, const TracePod& b) { return a.name < b.name; });
  bool created = false, deleted = false;
  int64_t end = 0;
  for (const TracePod& p : pods) {
    created |= p.creation_time >= 0;
    deleted |= p.deletion_time >= 0;
    end = std::max({end, p.creation_time, p.deletion_time});
  }
  if (!pods.empty() && (!created || !deleted)) {
    return InvalidArgumentError(fmt::format("the trace has no {} column: timeline mode needs creation_time and deletion_time",
                                            created ? "deletion_time" : "creation_time"));
  }
  std::vector<TimelinePod> out;
  out.reserve(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) {
    int64_t from = std::max<int64_t>(0, pods[i].creation_time);
    int64_t to = pods[i].deletion_time >= from ? pods[i].deletion_time : end;  // still running: leaves at the end
    out.push_back(TimelinePod{.index = i, .created_s = from, .duration_s = std::max<int64_t>(1, to - from)});
  }
  return out;
}

double OfferedLoad(const PreparedTrace& trace, const std::vector<TimelinePod>& pods, double compress) {
  if (pods.empty() || trace.capacity_milli <= 0) return 0;
  auto [first, last] = std::minmax_element(pods.begin(), pods.end(),
                                           [](const TimelinePod& a, const TimelinePod& b) { return a.created_s < b.created_s; });
  double span = static_cast<double>(last->created_s - first->created_s);
  if (span <= 0) return 0;
  double asked = 0;  // GPU milli-seconds
  for (const TimelinePod& p : pods) asked += static_cast<double>(trace.pods[p.index].gpu_milli()) * static_cast<double>(p.duration_s);
  return asked * compress / (static_cast<double>(trace.capacity_milli) * span);
}

double DefaultTimeCompress(const PreparedTrace& trace, const std::vector<TimelinePod>& pods) {
  double at_one = OfferedLoad(trace, pods, 1);  // the load grows linearly with the factor
  return at_one > 0 ? std::max(1.0, 1.0 / at_one) : 1.0;
}

TimelineResult RunTimeline(const PreparedTrace& trace, const std::vector<TimelinePod>& pods, const scoring::Scorer& scorer,
                           const TimelineOptions& options) {
  auto start = std::chrono::steady_clock::now();
  double compress = options.time_compress > 0 ? options.time_compress : DefaultTimeCompress(trace, pods);
  Timeline timeline(trace, pods, scorer, options, compress);
  timeline.Run();
  TimelineResult r{.policy = std::string(scorer.Name()), .seed = options.seed, .pods = static_cast<int>(pods.size()),
                   .time_compress = compress};
  timeline.Report(&r);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace gpusched::replay
