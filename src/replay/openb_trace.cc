// File: openb_trace.cc
//
// Reading the openb CSV files: rows split, columns found by header name, integer cells checked with
// file, line and column in every error, and a pod's GPU spec split into its allowed models.
#include "gpusched/replay/openb_trace.h"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

namespace gpusched::replay {
namespace {

std::vector<std::string_view> SplitRow(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    std::string_view field = line.substr(start, comma == std::string_view::npos ? line.npos : comma - start);
    if (field.size() >= 2 && field.front() == '"' && field.back() == '"') field = field.substr(1, field.size() - 2);
    out.push_back(field);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

// A parsed CSV: header positions and rows, each row with its 1-based line number.
struct Table {
  std::map<std::string, size_t, std::less<>> column;
  std::vector<std::pair<size_t, std::vector<std::string_view>>> rows;
};

StatusOr<Table> ParseTable(std::string_view text, std::string_view origin) {
  Table t;
  size_t line_no = 0;
  size_t pos = 0;
  bool header = true;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string_view line = text.substr(pos, end == std::string_view::npos ? text.npos : end - pos);
    pos = end == std::string_view::npos ? text.size() : end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    std::vector<std::string_view> fields = SplitRow(line);
    if (header) {
      for (size_t i = 0; i < fields.size(); ++i) t.column.emplace(std::string(fields[i]), i);
      header = false;
      continue;
    }
    if (fields.size() != t.column.size()) {
      return InvalidArgumentError(
          fmt::format("{}:{}: want {} fields, got {}", origin, line_no, t.column.size(), fields.size()));
    }
    t.rows.emplace_back(line_no, std::move(fields));
  }
  if (header) return InvalidArgumentError(fmt::format("{}: empty file, no header", origin));
  return t;
}

class RowReader {
 public:
  RowReader(const Table& t, std::string_view origin) : t_(t), origin_(origin) {}

  Status Require(std::initializer_list<std::string_view> names) const {
    for (std::string_view n : names) {
      if (!t_.column.contains(n)) return InvalidArgumentError(fmt::format("{}: no column \"{}\"", origin_, n));
    }
    return OkStatus();
  }
  bool Has(std::string_view name) const { return t_.column.contains(name); }

  std::string_view Text(const std::vector<std::string_view>& row, std::string_view name) const {
    return row[t_.column.find(name)->second];
  }

  // Reads an integer cell; an empty cell is `empty_value`.
  Status Int(size_t line, const std::vector<std::string_view>& row, std::string_view name, int64_t* out,
             int64_t empty_value = 0) const {
    std::string_view v = Text(row, name);
    if (v.empty() || v == "nan") {
      *out = empty_value;
      return OkStatus();
    }
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), *out);
    if (ec != std::errc() || ptr != v.data() + v.size() || *out < 0) {
      return InvalidArgumentError(fmt::format("{}:{}: column {}: \"{}\" is not a non-negative integer", origin_, line, name, v));
    }
    return OkStatus();
  }

 private:
  const Table& t_;
  std::string_view origin_;
};

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(fmt::format("{}: cannot open", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::vector<std::string> SpecModels(std::string_view spec) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t bar = spec.find('|', start);
    std::string_view token = spec.substr(start, bar == std::string_view::npos ? spec.npos : bar - start);
    if (!token.empty() && token != "nan") out.emplace_back(token);
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  return out;
}

StatusOr<std::vector<TraceNode>> ParseNodeCsv(std::string_view text, std::string_view origin) {
  GPUSCHED_ASSIGN_OR_RETURN(Table t, ParseTable(text, origin));
  RowReader r(t, origin);
  GPUSCHED_RETURN_IF_ERROR(r.Require({"sn", "cpu_milli", "memory_mib", "gpu", "model"}));
  std::vector<TraceNode> out;
  out.reserve(t.rows.size());
  for (const auto& [line, row] : t.rows) {
    TraceNode n{.name = std::string(r.Text(row, "sn")), .model = std::string(r.Text(row, "model"))};
    if (n.model == "nan") n.model.clear();
    int64_t gpus = 0;
    GPUSCHED_RETURN_IF_ERROR(r.Int(line, row, "cpu_milli", &n.cpu_milli));
    GPUSCHED_RETURN_IF_ERROR(r.Int(line, row, "memory_mib", &n.memory_mib));
    GPUSCHED_RETURN_IF_ERROR(r.Int(line, row, "gpu", &gpus));
    if (gpus > 64) return InvalidArgumentError(fmt::format("{}:{}: column gpu: {} GPUs on one node", origin, line, gpus));
    n.gpus = static_cast<int>(gpus);
    out.push_back(std::move(n));
  }
  return out;
}

StatusOr<std::vector<TracePod>> ParsePodCsv(std::string_view text, std::string_view origin) {
  GPUSCHED_ASSIGN_OR_RETURN(Table t, ParseTable(text, origin));
  RowReader r(t, origin);
  GPUSCHED_RETURN_IF_ERROR(r.Require({"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}));
  std::vector<TracePod> out;
  out.reserve(t.rows.size());
  for (const auto& [line, row] : t.rows) {
    TracePod p{.name = std::string(r.Text(row, "name"))};
    int64_t num_gpu = 0;
    int64_t gpu_milli = 0;
    GPUSCHED_RETURN_IF_ERROR(r.Int(line, row, "cpu_milli", &p.cpu_milli));
    GPUSCHED_RETURN_IF_ERROR(r.Int(line, row, "memory_mib", &p.memory_mib));
    GPUSCHED_RETURN_IF_ERROR(r.Int(line, row, "num_gpu", &num_gpu));
    GPUSCHED_RETURN_IF_ERROR(r.Int(line, row, "gpu_milli", &gpu_milli));
    if (num_gpu > 64 || gpu_milli > 1000) {
      return InvalidArgumentError(
          fmt::format("{}:{}: num_gpu {} / gpu_milli {} out of range (<= 64, <= 1000)", origin, line, num_gpu, gpu_milli));
    }
    p.num_gpu = static_cast<int>(num_gpu);
    p.gpu_milli = static_cast<int32_t>(gpu_milli);
    if (r.Has("gpu_spec")) p.gpu_spec = std::string(r.Text(row, "gpu_spec"));
    if (p.gpu_spec == "nan") p.gpu_spec.clear();
    if (r.Has("creation_time")) GPUSCHED_RETURN_IF_ERROR(r.Int(line, row, "creation_time", &p.creation_time, -1));
    if (r.Has("deletion_time")) GPUSCHED_RETURN_IF_ERROR(r.Int(line, row, "deletion_time", &p.deletion_time, -1));
    out.push_back(std::move(p));
  }
  return out;
}

StatusOr<std::vector<TraceNode>> LoadNodeCsv(const std::string& path) {
  GPUSCHED_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseNodeCsv(text, path);
}

StatusOr<std::vector<TracePod>> LoadPodCsv(const std::string& path) {
  GPUSCHED_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParsePodCsv(text, path);
}

}  // namespace gpusched::replay
