#include "gpusched/k8s/snapshot_source.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "gpusched/k8s/objects.h"

namespace gpusched::k8s {

StatusOr<ClusterObjects> LoadSnapshotFiles(const std::vector<std::string>& files) {
  ClusterObjects out;
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return NotFoundError(fmt::format("snapshot {}: cannot open", file));
    std::stringstream ss;
    ss << in.rdbuf();
    Status s = AppendClusterJson(ss.str(), &out);
    if (!s.ok()) return s.WithContext(fmt::format("snapshot {}", file));
  }
  return out;
}

}  // namespace gpusched::k8s
