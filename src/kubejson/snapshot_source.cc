// File: snapshot_source.cc
//
// Loading snapshot files: every file read into one ClusterObjects, then of objects sharing a key
// the newest resourceVersion kept (the later file where versions are not integers), and of pods
// sharing a name only the newer UID.
#include "gpusched/kubejson/snapshot_source.h"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include "gpusched/json/json.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::kubejson {
namespace {

// Returns true if resourceVersion `a` is newer than `b`. The API server's versions are etcd
// revisions (integers); other text cannot be ordered, so the later file wins.
bool Newer(std::string_view a, std::string_view b) {
  uint64_t x = 0, y = 0;
  auto [pa, ea] = std::from_chars(a.data(), a.data() + a.size(), x);
  auto [pb, eb] = std::from_chars(b.data(), b.data() + b.size(), y);
  bool numeric = ea == std::errc() && pa == a.data() + a.size() && eb == std::errc() && pb == b.data() + b.size();
  return numeric ? x >= y : true;
}

// Keeps, of the objects sharing a key, the newest; the survivors stay in first-seen order.
template <typename T, typename Key, typename Version>
void KeepNewest(std::vector<T>* objects, Key key, Version version) {
  std::map<std::string, size_t> newest;  // key -> index into *objects
  for (size_t i = 0; i < objects->size(); ++i) {
    auto [it, fresh] = newest.emplace(key((*objects)[i]), i);
    if (!fresh && Newer(version((*objects)[i]), version((*objects)[it->second]))) it->second = i;
  }
  std::vector<T> kept;
  for (size_t i = 0; i < objects->size(); ++i) {
    auto it = newest.find(key((*objects)[i]));
    if (it->second == i) kept.push_back(std::move((*objects)[i]));
  }
  *objects = std::move(kept);
}

}  // namespace

void KeepNewestObjects(ClusterObjects* objects) {
  KeepNewest(&objects->nodes, [](const Node& n) { return n.name; }, [](const Node& n) { return n.resource_version; });
  auto version = [](const Pod& p) { return p.resource_version; };
  KeepNewest(&objects->pods, [](const Pod& p) { return p.uid; }, version);
  // A pod deleted and created again under its name is a new UID: only the newer one exists.
  KeepNewest(&objects->pods, [](const Pod& p) { return p.namespace_name + "/" + p.name; }, version);
  KeepNewest(
      &objects->dra_objects, [](const dra::DraObject& o) { return fmt::format("{}/{}", dra::ObjectKindName(o.kind), o.key); },
      [](const dra::DraObject& o) { return o.resource_version; });
}

StatusOr<ClusterObjects> LoadSnapshotFiles(const std::vector<std::string>& files) {
  ClusterObjects out;
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return NotFoundError(fmt::format("snapshot {}: cannot open", file));
    std::stringstream ss;
    ss << in.rdbuf();
    size_t errors = out.errors.size();
    Status s = AppendClusterJson(ss.str(), &out);
    if (!s.ok()) return s.WithContext(fmt::format("snapshot {}", file));
    for (size_t i = errors; i < out.errors.size(); ++i) out.errors[i] = fmt::format("snapshot {}: {}", file, out.errors[i]);
  }
  KeepNewestObjects(&out);
  return out;
}

}  // namespace gpusched::kubejson
