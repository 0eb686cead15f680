// File: report.h
//
// What a replay grid writes to --out:
//   summary.csv  one row per (trace, policy, seed): unallocated_pct_at_100, frag_pct_at_100,
//                failed_pods, wall_s, ...
//   curve.csv    one row per (trace, policy, seed, arrived %): allocated, unallocated,
//                fragmentation amount and ratio
//   report.html  a self-contained page: per trace, SVG charts of unallocated GPU and
//                fragmentation against arrived workload (median over seeds, as the FGD paper's
//                Figures 9 and 7), and a table of means +- sd at 100% arrived next to the paper's.
#pragma once

#include <string>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/replay/grid.h"

namespace gpusched::replay {

std::string SummaryCsv(const std::vector<GridRun>& runs);
std::string CurveCsv(const std::vector<GridRun>& runs);
std::string ReportHtml(const std::vector<GridRun>& runs);

// Writes the three files into `dir` (created if missing). Errors name the file.
Status WriteReport(const std::vector<GridRun>& runs, const std::string& dir);

// The paper artifact's mean unallocated GPU % at 100% arrived (fgd-replay.md §7.2), or a negative
// value when unknown.
double PaperUnallocatedAt100(const std::string& trace, const std::string& policy);

struct MeanSd {
  double mean = 0;
  double sd = 0;
  int n = 0;
};
// Returns mean and sample sd of unallocated_pct_at_100 over the seeds of (trace, policy).
MeanSd UnallocatedAt100(const std::vector<GridRun>& runs, const std::string& trace, const std::string& policy);

}  // namespace gpusched::replay
