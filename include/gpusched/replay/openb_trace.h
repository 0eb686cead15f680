// File: openb_trace.h
//
// The Alibaba cluster-trace-gpu-v2023 ("openb") CSV files: the node list
// (sn,cpu_milli,memory_mib,gpu,model) and the pod lists (name,cpu_milli,memory_mib,num_gpu,
// gpu_milli[,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time]). Columns are found
// by header name, so the 5-column multigpu files read like the others. Errors name the file, line
// and column.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/status.h"

namespace gpusched::replay {

struct TraceNode {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpus = 0;
  std::string model;  // "" for CPU-only nodes
};

struct TracePod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  int32_t gpu_milli = 0;  // per GPU
  std::string gpu_spec;   // "A|B|C" or ""
  int64_t creation_time = -1;  // seconds; -1 when the file has no such column
  int64_t deletion_time = -1;
};

// Parse CSV text; `origin` names it in errors (a file name).
StatusOr<std::vector<TraceNode>> ParseNodeCsv(std::string_view text, std::string_view origin);
StatusOr<std::vector<TracePod>> ParsePodCsv(std::string_view text, std::string_view origin);

StatusOr<std::vector<TraceNode>> LoadNodeCsv(const std::string& path);
StatusOr<std::vector<TracePod>> LoadPodCsv(const std::string& path);

// Returns the model names in a gpu_spec ("V100M16|V100M32" -> {V100M16, V100M32}); empty tokens
// are dropped, duplicates kept.
std::vector<std::string> SpecModels(std::string_view spec);

}  // namespace gpusched::replay
