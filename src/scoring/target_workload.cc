// File: target_workload.cc
//
// Building the target workload from samples: pods grouped into classes by (CPU, milli, GPU count,
// model constraint), the most frequent kept up to `coverage`; and the gap value of each free milli
// amount, by recursion over the sharing pods small enough to refill it.
#include "gpusched/scoring/target_workload.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace gpusched::scoring {

TargetWorkload BuildTargetWorkload(std::span<const WorkloadSample> samples, double coverage) {
  using Key = std::tuple<int64_t, int32_t, int, std::string>;
  struct Group {
    int64_t count = 0;
    double mem_sum = 0;
    uint64_t spec = 0;
  };
  std::map<Key, Group> groups;
  for (const WorkloadSample& s : samples) {
    Group& g = groups[Key{s.shape.cpu, s.shape.milli, s.shape.gpus, s.spec_key}];
    ++g.count;
    g.mem_sum += static_cast<double>(s.shape.mem);
    g.spec = s.shape.spec;
  }
  std::vector<std::pair<Key, Group>> sorted(groups.begin(), groups.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    if (a.second.count != b.second.count) return a.second.count > b.second.count;
    return a.first > b.first;  // larger key first: cpu, then milli, then gpus, then spec text
  });
  TargetWorkload out;
  int64_t total = static_cast<int64_t>(samples.size());
  int64_t covered = 0;
  for (const auto& [key, g] : sorted) {
    if (total > 0 && static_cast<double>(covered) >= coverage * static_cast<double>(total)) break;
    covered += g.count;
    out.classes.push_back(TaskClass{.cpu = std::get<0>(key),
                                    .milli = std::get<1>(key),
                                    .gpus = std::get<2>(key),
                                    .spec = g.spec,
                                    .mem_mean = g.mem_sum / static_cast<double>(g.count),
                                    .count = g.count});
  }
  for (TaskClass& c : out.classes) c.p = static_cast<double>(c.count) / static_cast<double>(covered);
  return out;
}

void BuildGapValue(std::span<const WorkloadSample> samples, double kappa, TargetWorkload* workload) {
  constexpr int kMax = static_cast<int>(kMilliPerGpu);
  std::vector<double> q(kMax + 1, 0.0);
  double all = 0;
  for (const WorkloadSample& s : samples) {
    if (!s.shape.sharing()) continue;
    q[s.shape.milli] += 1;
    all += 1;
  }
  std::vector<double>& v = workload->gap_value;
  v.assign(kMax + 1, 0.0);
  double fitting = 0;  // sharing pods of size <= g
  for (int g = 0; g <= kMax; ++g) {
    fitting += q[g];
    if (fitting == 0 || all == 0) {
      v[g] = g;
      continue;
    }
    double share = fitting / all;
    double pi = share / (share + kappa);
    double expect = 0;
    for (int s = 1; s <= g; ++s) {
      if (q[s] > 0) expect += q[s] * v[g - s];
    }
    expect /= fitting;
    v[g] = pi * expect + (1 - pi) * g;
  }
}

}  // namespace gpusched::scoring
