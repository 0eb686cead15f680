// File: report.h
//
// What a replay grid writes to --out:
//   summary.csv  one row per (trace, policy, seed): unallocated_pct_at_100, frag_pct_at_100,
//                failed_pods, wall_s, ...; a timeline grid writes its own rows (kTimelineColumns)
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
#include "gpusched/replay/timeline_replay.h"

namespace gpusched::replay {

// summary.csv's columns after the first ten: timeline rows (mode "timeline") fill them, static
// rows have mode "static" and leave the rest empty. Scripts read the columns by position: new
// ones go at the end.
inline constexpr std::string_view kTimelineColumns =
    "mode,alloc_rate_mean,alloc_rate_p10,pending_p50_s,pending_p99_s,pending_p99_s_sharing,pending_p99_s_onegpu,"
    "pending_p99_s_multigpu,never_placed,moves,time_compress,gangs,gang_wait_p50_s,gang_wait_p99_s,gangs_one_domain_pct,"
    "stranded_gpus_mean";

std::string SummaryCsv(const std::vector<GridRun>& runs);
// The same file for a timeline grid (timeline_replay.h).
std::string TimelineSummaryCsv(const std::vector<TimelineRun>& runs);
std::string CurveCsv(const std::vector<GridRun>& runs);
std::string ReportHtml(const std::vector<GridRun>& runs);
// report.html for a timeline grid: per trace, a table of means over seeds and charts of the
// allocation and the fragmentation per simulated minute (median over seeds), per policy label.
std::string TimelineReportHtml(const std::vector<TimelineRun>& runs);

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
