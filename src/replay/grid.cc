// File: grid.cc
//
// Running a grid: scorers built once per (trace, policy), every (trace, policy, seed) run on worker
// threads with progress reports; also the seed list syntax and the selection and trace names.
#include "gpusched/common/mutex.h"
#include "gpusched/replay/grid.h"

#include <fmt/format.h>

#include <atomic>
#include <charconv>
#include <memory>
#include <mutex>
#include <thread>

namespace gpusched::replay {

std::string_view SelectionName(Selection s) {
  switch (s) {
    case Selection::kPolicy:
      return "policy";
    case Selection::kExtenderRank:
      return "rank";
    case Selection::kExtenderLinear:
      return "linear";
  }
  return "policy";
}

std::string TraceName(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (base.ends_with(".csv")) base.resize(base.size() - 4);
  constexpr std::string_view kPrefix = "openb_pod_list_";
  if (base.starts_with(kPrefix)) base = base.substr(kPrefix.size());
  return base;
}

StatusOr<std::vector<uint64_t>> ParseSeeds(std::string_view text) {
  std::vector<uint64_t> out;
  auto number = [&](std::string_view s, uint64_t* v) {
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
    return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
  };
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view item = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    size_t dash = item.find('-');
    uint64_t a = 0;
    uint64_t b = 0;
    if (dash == std::string_view::npos) {
      if (!number(item, &a)) return InvalidArgumentError(fmt::format("--seeds \"{}\": \"{}\" is not a seed", text, item));
      out.push_back(a);
    } else {
      if (!number(item.substr(0, dash), &a) || !number(item.substr(dash + 1), &b) || b < a || b - a > 100000) {
        return InvalidArgumentError(fmt::format("--seeds \"{}\": \"{}\" is not a range FIRST-LAST", text, item));
      }
      for (uint64_t s = a; s <= b; ++s) out.push_back(s);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

StatusOr<std::vector<GridRun>> RunGrid(const std::vector<NamedTrace>& traces, const GridOptions& options,
                                       const std::function<void(size_t, size_t)>& progress) {
  // Scorers are built once per (trace, policy): they only borrow the trace's workload.
  std::vector<std::vector<std::unique_ptr<scoring::Scorer>>> scorers(traces.size());
  for (size_t t = 0; t < traces.size(); ++t) {
    for (const std::string& policy : options.policies) {
      GPUSCHED_ASSIGN_OR_RETURN(auto scorer, scoring::MakeScorer(policy, &traces[t].trace.workload));
      scorers[t].push_back(std::move(scorer));
    }
  }
  struct Job {
    size_t trace;
    size_t policy;
    uint64_t seed;
  };
  std::vector<Job> jobs;
  for (size_t t = 0; t < traces.size(); ++t) {
    for (size_t p = 0; p < options.policies.size(); ++p) {
      for (uint64_t seed : options.seeds) jobs.push_back(Job{t, p, seed});
    }
  }
  std::vector<GridRun> runs(jobs.size());
  ParallelFor(
      jobs.size(), options.threads,
      [&](size_t j) {
        const Job& job = jobs[j];
        ReplayOptions ro{.seed = job.seed, .tune_ratio = options.tune_ratio, .selection = options.selection};
        runs[j] = GridRun{.trace = traces[job.trace].name,
                          .selection = options.selection,
                          .result = RunReplay(traces[job.trace].trace, *scorers[job.trace][job.policy], ro)};
      },
      progress);
  return runs;
}

void ParallelFor(size_t n, int threads, const std::function<void(size_t)>& fn,
                 const std::function<void(size_t, size_t)>& progress) {
  std::atomic<size_t> next{0};
  Mutex progress_mu;
  size_t done = 0;  // under progress_mu
  auto worker = [&] {
    while (true) {
      size_t i = next.fetch_add(1);
      if (i >= n) return;
      fn(i);
      MutexLock lock(&progress_mu);
      ++done;
      if (progress) progress(done, n);
    }
  };
  int count = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  count = std::min<int>(count, static_cast<int>(std::max<size_t>(1, n)));
  std::vector<std::thread> pool;
  for (int i = 0; i < count; ++i) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
}

}  // namespace gpusched::replay
