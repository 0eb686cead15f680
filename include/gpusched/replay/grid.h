// File: grid.h
//
// Many replays at once: every (trace, policy, seed) of a grid, spread over worker threads, with a
// progress callback. Each run owns its state; the prepared traces and scorers are shared
// read-only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/replay/openb_replay.h"

namespace gpusched::replay {

struct NamedTrace {
  std::string name;  // e.g. "default" for openb_pod_list_default.csv
  PreparedTrace trace;
};

struct GridOptions {
  std::vector<std::string> policies;
  std::vector<uint64_t> seeds;
  double tune_ratio = 1.3;
  Selection selection = Selection::kPolicy;
  int threads = 0;  // 0: one per hardware thread
};

struct GridRun {
  std::string trace;
  Selection selection = Selection::kPolicy;
  ReplayResult result;
};

// Runs the grid. `progress(done, total)` is called from worker threads after each run (serialized).
// Errors: InvalidArgument for an unknown policy (before anything runs).
StatusOr<std::vector<GridRun>> RunGrid(const std::vector<NamedTrace>& traces, const GridOptions& options,
                                       const std::function<void(size_t, size_t)>& progress);

// Runs fn(i) for i in [0, n) on `threads` worker threads (0: one per hardware thread), then
// progress(done, n) after each (serialized).
void ParallelFor(size_t n, int threads, const std::function<void(size_t)>& fn,
                 const std::function<void(size_t, size_t)>& progress);

// Returns "policy", "rank" or "linear".
std::string_view SelectionName(Selection s);

// Returns the trace name of a pod file: "openb_pod_list_default.csv" -> "default".
std::string TraceName(const std::string& path);

// Parses "42-51" or "42,45,50" (or a mix) into seeds. Errors name the text.
StatusOr<std::vector<uint64_t>> ParseSeeds(std::string_view text);

}  // namespace gpusched::replay
