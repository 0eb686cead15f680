// File: domain_steering.cc
//
// domain_steering.h: whole nodes, the per-domain sums of a snapshot, and the fullest domain in use
// among the fitting nodes'.
#include "gpusched/extender/domain_steering.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <tuple>

namespace gpusched::extender {

bool TakesGpuPods(const placement::NodeState& node) {
  return node.view.gpu_count > 0 && node.ready() && !node.node.schedulability.unschedulable && node.node.spec_error.empty();
}

bool IsWholeNode(const placement::NodeState& node) {
  if (!TakesGpuPods(node) || node.view.FullyFree() != node.view.gpu_count) return false;
  if (!node.holds.empty() || !node.nominated.empty()) return false;
  if (node.uses == nullptr) return true;
  return std::all_of(node.uses->pods().begin(), node.uses->pods().end(),
                     [](const PodUse& p) { return p.labels != nullptr && RecreatedOnItsNode(*p.labels); });
}

std::shared_ptr<const DomainUses> DomainFullness::Of(const inventory::InventorySnapshot& snapshot, const std::string& key) const {
  {
    MutexLock lock(&mu_);
    if (uses_ != nullptr && version_ == snapshot.version() && key_ == key) return uses_;
  }
  auto uses = std::make_shared<DomainUses>();
  for (const inventory::NodeStatePtr& n : snapshot.nodes()) {
    auto label = n->node.labels.find(key);
    if (label == n->node.labels.end()) continue;
    DomainUse& d = (*uses)[label->second];
    int64_t idle = n->view.IdleMilli();
    d.free_milli += idle;
    d.used_milli += int64_t{1000} * n->view.gpu_count - idle;
    if (!TakesGpuPods(*n)) continue;
    ++d.nodes;
    d.whole_nodes += IsWholeNode(*n) ? 1 : 0;
  }
  MutexLock lock(&mu_);
  version_ = snapshot.version();
  key_ = key;
  uses_ = uses;
  return uses_;
}

bool GpusStrandedByOtherResources(const placement::NodeState& node) {
  if (!TakesGpuPods(node) || node.view.IdleMilli() <= 0 || IsWholeNode(node)) return false;
  double gpu_free = static_cast<double>(node.view.IdleMilli()) / (1000.0 * node.view.gpu_count);
  for (std::string_view resource : {"cpu", "memory"}) {
    int64_t allocatable = node.node.other_allocatable.Get(resource);
    if (allocatable <= 0) continue;
    int64_t requested = node.uses != nullptr ? node.uses->total().Get(resource) : 0;
    double free = static_cast<double>(std::max<int64_t>(0, allocatable - requested)) / static_cast<double>(allocatable);
    if (free < gpu_free) return true;
  }
  return false;
}

namespace {

// The value of label `key` on `node`, or nullptr.
const std::string* LabelOf(const placement::NodeState& node, const std::string& key) {
  auto label = node.node.labels.find(key);
  return label != node.node.labels.end() ? &label->second : nullptr;
}

}  // namespace

std::vector<std::pair<size_t, std::string>> OutsideFullestDomain(const std::vector<const placement::NodeState*>& fits,
                                                                 const std::string& key, const DomainUses& domains) {
  std::vector<char> stranded(fits.size(), 0);  // labelled fits whose GPUs other resources strand
  bool any_stranded = false;
  for (size_t i = 0; i < fits.size(); ++i) {
    stranded[i] = LabelOf(*fits[i], key) != nullptr && GpusStrandedByOtherResources(*fits[i]);
    any_stranded |= stranded[i] != 0;
  }
  std::optional<std::tuple<int, int64_t, std::string>> fullest;  // (whole nodes, free, value)
  for (size_t i = 0; i < fits.size(); ++i) {
    const std::string* label = LabelOf(*fits[i], key);
    if (label == nullptr || (any_stranded && !stranded[i])) continue;
    auto d = domains.find(*label);
    if (d == domains.end() || !d->second.in_use()) continue;
    std::tuple<int, int64_t, std::string> candidate{d->second.whole_nodes, d->second.free_milli, *label};
    if (!fullest || candidate < *fullest) fullest = std::move(candidate);
  }
  std::vector<std::pair<size_t, std::string>> out;
  if (!fullest) return out;
  const std::string& value = std::get<2>(*fullest);
  std::string to_domain = fmt::format("pods outside gangs go to the fullest domain in use ({}={}), so that whole domains "
                                      "stay free for gangs",
                                      key, value);
  std::string to_stranded = "pods outside gangs go first to GPUs that other pods' CPU or memory leaves idle, so that whole "
                            "nodes stay free for gangs";
  for (size_t i = 0; i < fits.size(); ++i) {
    const std::string* label = LabelOf(*fits[i], key);
    if (label == nullptr) continue;
    if (any_stranded && !stranded[i]) {
      out.emplace_back(i, to_stranded);
    } else if (*label != value) {
      out.emplace_back(i, to_domain);
    }
  }
  return out;
}

}  // namespace gpusched::extender
