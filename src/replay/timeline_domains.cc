// File: timeline_domains.cc
//
// timeline_domains.h: domains as node masks with their allocated GPU, gang jobs drawn with the
// seed, and the stranded-GPU measure.
#include "timeline_domains.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>
#include <tuple>

namespace gpusched::replay {

std::vector<GangJob> MakeGangJobs(const GangSpec& spec, const std::vector<TimelinePod>& pods, double trace_gpu_time,
                                  double horizon, uint64_t seed) {
  std::vector<GangJob> out;
  if (spec.members <= 0 || spec.gpus <= 0 || spec.share <= 0 || spec.share >= 1 || pods.empty()) return out;
  double mean_duration = 0;
  for (const TimelinePod& p : pods) mean_duration += static_cast<double>(p.duration_s);
  mean_duration /= static_cast<double>(pods.size());
  // Their GPU time is `share` of all: share / (1 - share) of the trace's.
  double wanted = trace_gpu_time * spec.share / (1 - spec.share);
  double per_job = static_cast<double>(spec.members) * spec.gpus * 1000.0 * mean_duration;
  size_t jobs = static_cast<size_t>(wanted / per_job + 0.5);
  Rng rng(seed ^ 0x6a09e667f3bcc909ULL);
  for (size_t j = 0; j < jobs; ++j) {
    const TimelinePod& like = pods[static_cast<size_t>(rng.Unit() * static_cast<double>(pods.size())) % pods.size()];
    out.push_back(GangJob{.arrive = rng.Unit() * horizon, .duration_s = like.duration_s});
  }
  std::sort(out.begin(), out.end(), [](const GangJob& a, const GangJob& b) { return a.arrive < b.arrive; });
  return out;
}

scoring::PodShape MemberShape(const GangSpec& spec) {
  return scoring::PodShape{.cpu = spec.cpu_milli > 0 ? spec.cpu_milli : int64_t{16000} * spec.gpus,
                           .mem = spec.memory_mib > 0 ? spec.memory_mib : int64_t{65536} * spec.gpus,
                           .gpus = spec.gpus,
                           .milli = 1000};
}

Domains::Domains(size_t nodes, int count) {
  if (count <= 0 || nodes == 0) return;
  of_.resize(nodes);
  masks_.assign(static_cast<size_t>(count), std::vector<uint8_t>(nodes, 0));
  used_.assign(static_cast<size_t>(count), 0);
  pods_.assign(static_cast<size_t>(count), 0);
  unsteered_.assign(static_cast<size_t>(count), 0);
  whole_.assign(static_cast<size_t>(count), 0);
  node_pods_.assign(nodes, 0);
  for (size_t i = 0; i < nodes; ++i) {
    of_[i] = static_cast<int>(i * static_cast<size_t>(count) / nodes);
    masks_[of_[i]][i] = 1;
    ++whole_[of_[i]];
  }
}

std::vector<int> Domains::FullestFirst(const ReplayCluster& cluster) const {
  std::vector<int64_t> free(masks_.size(), 0);
  for (size_t i = 0; i < of_.size(); ++i) free[of_[i]] += cluster.node(i).IdleMilli();
  std::vector<int> order(masks_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return std::tie(whole_[a], free[a], pods_[b]) < std::tie(whole_[b], free[b], pods_[a]);
  });
  return order;
}

int Domains::MostWhole(const ReplayCluster& cluster) const {
  std::vector<int64_t> free(masks_.size(), 0);
  for (size_t i = 0; i < of_.size(); ++i) free[of_[i]] += cluster.node(i).IdleMilli();
  int best = 0;
  for (int d = 1; d < count(); ++d) {
    if (std::tie(whole_[d], free[d]) > std::tie(whole_[best], free[best])) best = d;
  }
  return best;
}

std::vector<uint8_t> Domains::LastRoomForGang(const ReplayCluster& cluster, int64_t demand) const {
  std::vector<int64_t> whole(masks_.size(), 0);
  for (size_t i = 0; i < of_.size(); ++i) whole[of_[i]] += this->whole(i) ? cluster.node(i).IdleMilli() : 0;
  std::vector<uint8_t> out(of_.size(), 0);
  for (size_t i = 0; i < of_.size(); ++i) {
    int64_t w = whole[of_[i]];
    int64_t own = cluster.node(i).IdleMilli();
    out[i] = this->whole(i) && w >= demand && w - own < demand && own < demand;
  }
  return out;
}

double Domains::Stranded(const ReplayCluster& cluster, const scoring::PodShape& member, int members) const {
  std::vector<int> hosts(masks_.size(), 0);
  std::vector<int64_t> free(masks_.size(), 0);
  for (size_t i = 0; i < of_.size(); ++i) {
    const scoring::NodeView& n = cluster.node(i);
    hosts[of_[i]] += scoring::Fits(member, n) ? 1 : 0;
    free[of_[i]] += n.IdleMilli();
  }
  int64_t stranded = 0;
  for (size_t d = 0; d < masks_.size(); ++d) stranded += hosts[d] < members ? free[d] : 0;
  return static_cast<double>(stranded) / 1000.0;
}

StatusOr<GangSpec> ParseGangSpec(std::string_view text) {
  GangSpec spec;
  for (size_t at = 0; at <= text.size();) {
    size_t comma = std::min(text.find(',', at), text.size());
    std::string_view item = text.substr(at, comma - at);
    at = comma + 1;
    size_t eq = item.find('=');
    std::string_view key = item.substr(0, eq), value = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    double v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || v < 0) {
      return InvalidArgumentError(fmt::format("--gangs: \"{}\": want key=number (members, gpus, share, cpu, memory)", item));
    }
    if (key == "members") spec.members = static_cast<int>(v);
    else if (key == "gpus") spec.gpus = static_cast<int>(v);
    else if (key == "share") spec.share = v;
    else if (key == "cpu") spec.cpu_milli = static_cast<int64_t>(v);
    else if (key == "memory") spec.memory_mib = static_cast<int64_t>(v);
    else return InvalidArgumentError(fmt::format("--gangs: unknown field \"{}\" (members, gpus, share, cpu, memory)", key));
  }
  if (spec.members < 1 || spec.members > 4096) return InvalidArgumentError(fmt::format("--gangs: members={} is outside 1-4096", spec.members));
  if (spec.gpus < 1 || spec.gpus > scoring::kMaxGpus) {
    return InvalidArgumentError(fmt::format("--gangs: gpus={} is outside 1-{}", spec.gpus, scoring::kMaxGpus));
  }
  if (spec.share <= 0 || spec.share >= 1) return InvalidArgumentError(fmt::format("--gangs: share={} is outside (0, 1)", spec.share));
  return spec;
}

}  // namespace gpusched::replay
