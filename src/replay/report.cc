// File: report.cc
//
// What a grid writes to --out: summary.csv and curve.csv, and report.html with SVG charts of the
// median over seeds and a table beside the FGD paper's means; the timeline grid's own CSV and HTML
// page.
#include "gpusched/replay/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

namespace gpusched::replay {
namespace {

// Artifact means at 100% arrived, fgd-replay.md §7.2, policies in the paper's order.
const std::map<std::string, std::map<std::string, double>>& PaperTable() {
  static const auto* table = new std::map<std::string, std::map<std::string, double>>{
      {"default", {{"random", 13.70}, {"dotprod", 9.38}, {"clustering", 8.35}, {"packing", 8.22}, {"bestfit", 7.14}, {"fgd", 4.77}}},
      {"gpushare40", {{"random", 15.14}, {"dotprod", 10.70}, {"clustering", 10.24}, {"packing", 10.23}, {"bestfit", 8.56}, {"fgd", 6.04}}},
      {"gpushare60", {{"random", 17.19}, {"dotprod", 13.18}, {"clustering", 13.10}, {"packing", 12.85}, {"bestfit", 10.94}, {"fgd", 8.75}}},
      {"gpushare80", {{"random", 19.38}, {"dotprod", 15.86}, {"clustering", 15.50}, {"packing", 15.35}, {"bestfit", 13.34}, {"fgd", 10.92}}},
      {"gpushare100", {{"random", 21.10}, {"dotprod", 18.02}, {"clustering", 17.78}, {"packing", 17.87}, {"bestfit", 15.38}, {"fgd", 13.36}}},
      {"multigpu20", {{"random", 13.08}, {"dotprod", 8.15}, {"clustering", 6.66}, {"packing", 6.50}, {"bestfit", 6.27}, {"fgd", 4.47}}},
      {"multigpu30", {{"random", 13.37}, {"dotprod", 6.89}, {"clustering", 5.45}, {"packing", 5.30}, {"bestfit", 5.43}, {"fgd", 3.64}}},
      {"multigpu40", {{"random", 14.62}, {"dotprod", 5.96}, {"clustering", 4.65}, {"packing", 4.41}, {"bestfit", 4.90}, {"fgd", 3.09}}},
      {"multigpu50", {{"random", 18.72}, {"dotprod", 5.27}, {"clustering", 4.31}, {"packing", 3.94}, {"bestfit", 4.38}, {"fgd", 2.91}}},
      {"gpuspec10", {{"random", 13.74}, {"dotprod", 9.83}, {"clustering", 8.04}, {"packing", 7.76}, {"bestfit", 6.90}, {"fgd", 5.34}}},
      {"gpuspec20", {{"random", 14.10}, {"dotprod", 11.71}, {"clustering", 10.89}, {"packing", 10.72}, {"bestfit", 11.54}, {"fgd", 5.34}}},
      {"gpuspec25", {{"random", 14.58}, {"dotprod", 14.56}, {"clustering", 13.59}, {"packing", 13.23}, {"bestfit", 14.33}, {"fgd", 6.09}}},
      {"gpuspec33", {{"random", 16.13}, {"dotprod", 20.18}, {"clustering", 18.91}, {"packing", 17.78}, {"bestfit", 19.61}, {"fgd", 12.16}}},
      {"cpu050", {{"random", 10.98}, {"dotprod", 6.97}, {"clustering", 6.48}, {"packing", 6.54}, {"bestfit", 6.44}, {"fgd", 5.00}}},
      {"cpu100", {{"random", 12.57}, {"dotprod", 8.27}, {"clustering", 7.58}, {"packing", 7.50}, {"bestfit", 6.74}, {"fgd", 4.79}}},
      {"cpu200", {{"random", 16.97}, {"dotprod", 12.55}, {"clustering", 10.33}, {"packing", 10.02}, {"bestfit", 7.85}, {"fgd", 5.18}}},
      {"cpu250", {{"random", 20.00}, {"dotprod", 16.43}, {"clustering", 12.25}, {"packing", 11.95}, {"bestfit", 8.79}, {"fgd", 6.80}}},
  };
  return *table;
}

std::vector<std::string> Ordered(const std::vector<GridRun>& runs, bool traces) {
  std::vector<std::string> out;
  for (const GridRun& r : runs) {
    const std::string& v = traces ? r.trace : r.result.policy;
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// Median over seeds of a curve quantity, per arrived percent.
std::map<int, double> MedianCurve(const std::vector<GridRun>& runs, const std::string& trace, const std::string& policy,
                                  double CurvePoint::*field, bool unallocated) {
  std::map<int, std::vector<double>> values;
  for (const GridRun& r : runs) {
    if (r.trace != trace || r.result.policy != policy) continue;
    for (const CurvePoint& p : r.result.curve) {
      double v = p.*field;
      values[p.arrived_pct].push_back(unallocated ? 100.0 - v : v);
    }
  }
  std::map<int, double> out;
  for (auto& [pct, v] : values) out[pct] = Median(v);
  return out;
}

constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000"};

std::string Svg(const std::string& title, const std::string& y_label, const std::vector<std::string>& policies,
                const std::vector<std::map<int, double>>& series, int x_lo, int x_hi,
                std::string_view x_label = "arrived workload (% of cluster GPU capacity)") {
  constexpr double kW = 640, kH = 360, kL = 60, kR = 150, kT = 30, kB = 45;
  double y_lo = HUGE_VAL;
  double y_hi = -HUGE_VAL;
  for (const auto& s : series) {
    for (const auto& [x, y] : s) {
      if (x < x_lo || x > x_hi || std::isnan(y)) continue;
      y_lo = std::min(y_lo, y);
      y_hi = std::max(y_hi, y);
    }
  }
  if (!(y_hi > y_lo)) {
    y_lo = 0;
    y_hi = 1;
  }
  y_lo = std::floor(y_lo);
  y_hi = std::ceil(y_hi);
  if (x_hi <= x_lo) x_hi = x_lo + 1;
  auto px = [&](double x) { return kL + (x - x_lo) / (x_hi - x_lo) * (kW - kL - kR); };
  auto py = [&](double y) { return kH - kB - (y - y_lo) / (y_hi - y_lo) * (kH - kT - kB); };
  std::string svg = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="11">)", kW, kH);
  svg += fmt::format(R"(<text x="{}" y="18" font-size="13" font-weight="bold">{}</text>)", kL, title);
  svg += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>)", kL, kT, kW - kL - kR, kH - kT - kB);
  for (int i = 0; i <= 5; ++i) {
    double y = y_lo + (y_hi - y_lo) * i / 5;
    svg += fmt::format(R"(<line x1="{0}" x2="{1}" y1="{2:.1f}" y2="{2:.1f}" stroke="#eee"/><text x="{3}" y="{4:.1f}" text-anchor="end">{5:.1f}</text>)",
                       kL, kW - kR, py(y), kL - 5, py(y) + 4, y);
  }
  for (int x = x_lo; x <= x_hi; x += std::max(1, (x_hi - x_lo) / 8)) {
    svg += fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="middle">{}</text>)", px(x), kH - kB + 15, x);
  }
  svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", (kL + kW - kR) / 2, kH - 8, x_label);
  svg += fmt::format(R"svg(<text x="14" y="{}" transform="rotate(-90 14 {})" text-anchor="middle">{}</text>)svg", (kT + kH - kB) / 2,
                     (kT + kH - kB) / 2, y_label);
  for (size_t s = 0; s < series.size(); ++s) {
    const char* color = kColors[s % std::size(kColors)];
    std::string points;
    for (const auto& [x, y] : series[s]) {
      if (x < x_lo || x > x_hi || std::isnan(y)) continue;
      points += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    }
    svg += fmt::format(R"(<polyline fill="none" stroke="{}" stroke-width="1.6" points="{}"/>)", color, points);
    svg += fmt::format(R"(<line x1="{0}" x2="{1}" y1="{2}" y2="{2}" stroke="{3}" stroke-width="2"/><text x="{4}" y="{5}">{6}</text>)",
                       kW - kR + 10, kW - kR + 30, kT + 12 + 16 * s, color, kW - kR + 35, kT + 16 + 16 * s, policies[s]);
  }
  svg += "</svg>";
  return svg;
}

// The page's head, style and title, with `note` under the title.
std::string HtmlHead(std::string_view note) {
  return fmt::format(R"(<!DOCTYPE html><html><head><meta charset="utf-8"><title>gpusched replay</title>
<style>body{{font-family:sans-serif;margin:24px;color:#222}}table{{border-collapse:collapse;margin:12px 0}}
td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}th{{background:#f4f4f4}}td:first-child,th:first-child{{text-align:left}}
.best{{font-weight:bold}}.note{{color:#666;font-size:12px}}</style></head><body>
<h1>gpusched replay</h1>
<p class="note">{}</p>)",
                     note);
}

// Median over seeds of a timeline series (one sample per simulated minute), by minute.
std::map<int, double> MedianSeries(const std::vector<TimelineRun>& runs, const std::string& trace, const std::string& policy,
                                   std::vector<double> TimelineResult::*series) {
  std::map<int, std::vector<double>> values;
  for (const TimelineRun& t : runs) {
    if (t.trace != trace || t.result.policy != policy) continue;
    const std::vector<double>& v = t.result.*series;
    for (size_t i = 0; i < v.size(); ++i) values[static_cast<int>(i)].push_back(v[i]);
  }
  std::map<int, double> out;
  for (auto& [minute, v] : values) out[minute] = Median(v);
  return out;
}

// The mean over seeds of `field` for one trace and policy label, and the number of runs.
std::pair<double, int> MeanOf(const std::vector<TimelineRun>& runs, const std::string& trace, const std::string& policy,
                              const std::function<double(const TimelineResult&)>& field) {
  double sum = 0;
  int n = 0;
  for (const TimelineRun& t : runs) {
    if (t.trace != trace || t.result.policy != policy) continue;
    sum += field(t.result);
    ++n;
  }
  return {n > 0 ? sum / n : 0, n};
}

std::string TimelineTable(const std::vector<TimelineRun>& runs, const std::string& trace, const std::vector<std::string>& policies) {
  std::string html = fmt::format(
      "<h2>{}</h2><table><tr><th>policy</th><th>runs</th><th>allocation mean %</th><th>allocation p10 %</th><th>fragmented mean %</th>"
      "<th>pending p99 s</th><th>p99 multi-GPU s</th><th>p99 one GPU s</th><th>p99 sharing s</th><th>never placed</th><th>moves</th></tr>",
      trace);
  using R = const TimelineResult&;
  const std::vector<std::function<double(R)>> columns = {
      [](R r) { return r.alloc_rate_mean; },       [](R r) { return r.alloc_rate_p10; },
      [](R r) { return r.frag_pct_mean; },         [](R r) { return r.pending_p99_s; },
      [](R r) { return r.pending_p99_s_multigpu; }, [](R r) { return r.pending_p99_s_onegpu; },
      [](R r) { return r.pending_p99_s_sharing; }, [](R r) { return static_cast<double>(r.never_placed); },
      [](R r) { return static_cast<double>(r.moves); }};
  for (const std::string& p : policies) {
    int n = MeanOf(runs, trace, p, columns[0]).second;
    if (n == 0) continue;
    html += fmt::format("<tr><td>{}</td><td>{}</td>", p, n);
    for (const auto& column : columns) html += fmt::format("<td>{:.2f}</td>", MeanOf(runs, trace, p, column).first);
    html += "</tr>";
  }
  return html + "</table>";
}

}  // namespace

std::string TimelineReportHtml(const std::vector<TimelineRun>& runs) {
  std::vector<std::string> traces, policies;
  for (const TimelineRun& t : runs) {
    if (std::find(traces.begin(), traces.end(), t.trace) == traces.end()) traces.push_back(t.trace);
    if (std::find(policies.begin(), policies.end(), t.result.policy) == policies.end()) policies.push_back(t.result.policy);
  }
  std::string html = HtmlHead(
      "Churn replay (timeline): means over seeds; pending times of placed pods by class; the charts show the median over "
      "seeds of each simulated minute while pods arrive.");
  for (const std::string& trace : traces) {
    html += TimelineTable(runs, trace, policies);
    std::vector<std::map<int, double>> alloc, frag;
    int minutes = 0;
    for (const std::string& p : policies) {
      alloc.push_back(MedianSeries(runs, trace, p, &TimelineResult::alloc_rate));
      frag.push_back(MedianSeries(runs, trace, p, &TimelineResult::frag_rate));
      if (!alloc.back().empty()) minutes = std::max(minutes, alloc.back().rbegin()->first);
    }
    html += "<div>" + Svg(trace + ": GPU allocation over time", "allocated GPU (%)", policies, alloc, 0, minutes,
                          "simulated minute") + "</div>";
    html += "<div>" + Svg(trace + ": fragmentation over time (FGD)", "fragmented GPU (%)", policies, frag, 0, minutes,
                          "simulated minute") + "</div>";
  }
  return html + "</body></html>\n";
}

double PaperUnallocatedAt100(const std::string& trace, const std::string& policy) {
  auto t = PaperTable().find(trace);
  if (t == PaperTable().end()) return -1;
  auto p = t->second.find(policy);
  return p == t->second.end() ? -1 : p->second;
}

MeanSd UnallocatedAt100(const std::vector<GridRun>& runs, const std::string& trace, const std::string& policy) {
  std::vector<double> v;
  for (const GridRun& r : runs) {
    if (r.trace == trace && r.result.policy == policy) v.push_back(r.result.unallocated_pct_at_100);
  }
  MeanSd out{.n = static_cast<int>(v.size())};
  if (v.empty()) return out;
  for (double x : v) out.mean += x;
  out.mean /= static_cast<double>(v.size());
  if (v.size() > 1) {
    for (double x : v) out.sd += (x - out.mean) * (x - out.mean);
    out.sd = std::sqrt(out.sd / static_cast<double>(v.size() - 1));
  }
  return out;
}

constexpr std::string_view kSummaryColumns =
    "trace,policy,selection,seed,pods,failed_pods,unallocated_pct_at_100,frag_pct_at_100,paper_unallocated_pct_at_100,wall_s";

std::string SummaryCsv(const std::vector<GridRun>& runs) {
  std::string out = fmt::format("{},{}\n", kSummaryColumns, kTimelineColumns);
  for (const GridRun& r : runs) {
    double paper = PaperUnallocatedAt100(r.trace, r.result.policy);
    out += fmt::format("{},{},{},{},{},{},{:.2f},{:.2f},{},{:.3f},static,,,,,,,,,,,,,,,\n", r.trace, r.result.policy,
                       SelectionName(r.selection), r.result.seed, r.result.pods, r.result.failed_pods, r.result.unallocated_pct_at_100,
                       r.result.frag_pct_at_100, paper < 0 ? "" : fmt::format("{:.2f}", paper), r.result.wall_s);
  }
  return out;
}

std::string TimelineSummaryCsv(const std::vector<TimelineRun>& runs) {
  std::string out = fmt::format("{},{}\n", kSummaryColumns, kTimelineColumns);
  for (const TimelineRun& t : runs) {
    const TimelineResult& r = t.result;
    out += fmt::format("{},{},policy,{},{},{},,,,{:.3f},timeline,{:.2f},{:.2f},{:.0f},{:.0f},{:.0f},{:.0f},{:.0f},{},{},{:.2f},", t.trace,
                       r.policy, r.seed, r.pods, r.never_placed, r.wall_s, r.alloc_rate_mean, r.alloc_rate_p10, r.pending_p50_s,
                       r.pending_p99_s, r.pending_p99_s_sharing, r.pending_p99_s_onegpu, r.pending_p99_s_multigpu, r.never_placed,
                       r.moves, r.time_compress);
    out += fmt::format("{},{:.0f},{:.0f},{:.1f},{:.2f}\n", r.gangs, r.gang_wait_p50_s, r.gang_wait_p99_s, r.gangs_one_domain_pct,
                       r.stranded_gpus_mean);
  }
  return out;
}

std::string CurveCsv(const std::vector<GridRun>& runs) {
  std::string out = "trace,policy,seed,arrived_pct,allocated_pct,unallocated_pct,frag_pct,frag_ratio_pct\n";
  for (const GridRun& r : runs) {
    for (const CurvePoint& p : r.result.curve) {
      out += fmt::format("{},{},{},{},{:.2f},{:.2f},{:.2f},{:.2f}\n", r.trace, r.result.policy, r.result.seed, p.arrived_pct,
                         p.allocated_pct, 100.0 - p.allocated_pct, p.frag_pct, p.frag_ratio_pct);
    }
  }
  return out;
}

std::string ReportHtml(const std::vector<GridRun>& runs) {
  std::vector<std::string> traces = Ordered(runs, true);
  std::vector<std::string> policies = Ordered(runs, false);
  std::string html = HtmlHead(R"(Unallocated GPU (% of cluster GPU capacity) when the arrived workload reaches 100%: mean &plusmn; sd over seeds;
the paper column is the FGD artifact's 10-seed mean (USENIX ATC'23). Charts: median over seeds.)");
  for (const std::string& trace : traces) {
    html += fmt::format("<h2>{}</h2><table><tr><th>policy</th><th>unallocated at 100%</th><th>paper</th><th>frag at 100%</th><th>failed pods</th><th>runs</th></tr>", trace);
    double best = HUGE_VAL;
    for (const std::string& p : policies) {
      MeanSd m = UnallocatedAt100(runs, trace, p);
      if (m.n > 0) best = std::min(best, m.mean);
    }
    for (const std::string& p : policies) {
      MeanSd m = UnallocatedAt100(runs, trace, p);
      if (m.n == 0) continue;
      double frag = 0;
      double failed = 0;
      for (const GridRun& r : runs) {
        if (r.trace != trace || r.result.policy != p) continue;
        frag += r.result.frag_pct_at_100;
        failed += r.result.failed_pods;
      }
      double paper = PaperUnallocatedAt100(trace, p);
      html += fmt::format(R"(<tr><td>{}</td><td class="{}">{:.2f} &plusmn; {:.2f}</td><td>{}</td><td>{:.2f}</td><td>{:.0f}</td><td>{}</td></tr>)", p,
                          m.mean == best ? "best" : "", m.mean, m.sd, paper < 0 ? "" : fmt::format("{:.2f}", paper),
                          frag / m.n, failed / m.n, m.n);
    }
    html += "</table>";
    std::vector<std::map<int, double>> unalloc;
    std::vector<std::map<int, double>> frag;
    for (const std::string& p : policies) {
      unalloc.push_back(MedianCurve(runs, trace, p, &CurvePoint::allocated_pct, true));
      frag.push_back(MedianCurve(runs, trace, p, &CurvePoint::frag_pct, false));
    }
    html += "<div>" + Svg(trace + ": unallocated GPU (Fig. 9 style)", "unallocated GPU (%)", policies, unalloc, 75, 130) + "</div>";
    html += "<div>" + Svg(trace + ": fragmentation amount (Fig. 7 style)", "fragmented GPU (%)", policies, frag, 0, 130) + "</div>";
  }
  html += "</body></html>\n";
  return html;
}

Status WriteReport(const std::vector<GridRun>& runs, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return UnavailableError(fmt::format("--out {}: {}", dir, ec.message()));
  for (const auto& [name, content] : {std::pair{"summary.csv", SummaryCsv(runs)}, std::pair{"curve.csv", CurveCsv(runs)},
                                      std::pair{"report.html", ReportHtml(runs)}}) {
    std::string path = dir + "/" + name;
    std::ofstream out(path, std::ios::binary);
    out << content;
    if (!out) return UnavailableError(fmt::format("{}: write failed", path));
  }
  return OkStatus();
}

}  // namespace gpusched::replay
