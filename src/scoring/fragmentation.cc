// File: fragmentation.cc
//
// The three fragmentation measures over one NodeView, each a p-weighted sum over the workload's
// classes (F_FGD, F_fill) or a sum over the node's partly used GPUs (F_V, from the gap values).
#include "gpusched/scoring/fragmentation.h"

#include <algorithm>

namespace gpusched::scoring {

double FgdFragmentation(const NodeView& node, const TargetWorkload& workload) {
  double idle = static_cast<double>(node.IdleMilli());
  double f = 0;
  for (const TaskClass& m : workload.classes) {
    double fm = idle;
    if (m.milli > 0 && ModelAllowed(m.spec, node.model) && node.cpu_free >= m.cpu) {
      int enough = 0;
      int64_t small = 0;
      for (int i = 0; i < node.gpu_count; ++i) {
        if (node.gpu_free[i] >= m.milli) {
          ++enough;
        } else {
          small += node.gpu_free[i];
        }
      }
      if (enough >= m.gpus) fm = static_cast<double>(small);
    }
    f += m.p * fm;
  }
  return f;
}

double FillFragmentation(const NodeView& node, const TargetWorkload& workload) {
  double idle = static_cast<double>(node.IdleMilli());
  int fully_free = node.FullyFree();
  double f = 0;
  for (const TaskClass& m : workload.classes) {
    if (m.milli <= 0) continue;
    int64_t n = 0;
    if (ModelAllowed(m.spec, node.model)) {
      if (m.gpus <= 1) {
        for (int i = 0; i < node.gpu_count; ++i) n += node.gpu_free[i] / m.milli;
      } else {
        n = fully_free / m.gpus;
      }
      if (m.cpu > 0) n = std::min<int64_t>(n, node.cpu_free / m.cpu);
      if (m.mem_mean > 0) n = std::min<int64_t>(n, static_cast<int64_t>(static_cast<double>(node.mem_free) / m.mem_mean));
    }
    f += m.p * (idle - static_cast<double>(m.gpus) * m.milli * static_cast<double>(n));
  }
  return f;
}

double GapFragmentation(const NodeView& node, const TargetWorkload& workload) {
  double f = 0;
  for (int i = 0; i < node.gpu_count; ++i) {
    int32_t g = node.gpu_free[i];
    if (g < kMilliPerGpu && g >= 0) f += workload.gap_value[static_cast<size_t>(g)];
  }
  return f;
}

}  // namespace gpusched::scoring
