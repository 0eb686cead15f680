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

std::shared_ptr<const DomainIndex> DomainFullness::Of(const inventory::InventorySnapshot& snapshot, const std::string& key) const {
  {
    MutexLock lock(&mu_);
    if (index_ != nullptr && version_ == snapshot.version() && key_ == key) return index_;
  }
  auto index = std::make_shared<DomainIndex>();
  const auto& nodes = snapshot.nodes();
  index->of.assign(nodes.size(), nullptr);
  index->stranded.assign(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const placement::NodeState& n = *nodes[i];
    auto label = n.node.labels.find(key);
    if (label == n.node.labels.end()) continue;
    auto [d, added] = index->domains.try_emplace(label->second);
    index->of[i] = &*d;
    DomainUse& use = d->second;
    int64_t idle = n.view.IdleMilli();
    use.free_milli += idle;
    use.used_milli += int64_t{1000} * n.view.gpu_count - idle;
    if (!TakesGpuPods(n)) continue;
    ++use.nodes;
    use.whole_nodes += IsWholeNode(n) ? 1 : 0;
    index->stranded[i] = GpusStrandedByOtherResources(n);
  }
  MutexLock lock(&mu_);
  version_ = snapshot.version();
  key_ = key;
  index_ = index;
  return index_;
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

std::vector<std::pair<std::string, std::vector<size_t>>> OutsideFullestDomain(const std::vector<uint32_t>& fits,
                                                                              const std::string& key, const DomainIndex& index) {
  bool any_stranded = std::any_of(fits.begin(), fits.end(), [&](uint32_t n) { return index.of[n] != nullptr && index.stranded[n]; });
  const DomainUses::value_type* fullest = nullptr;
  for (uint32_t n : fits) {
    const DomainUses::value_type* d = index.of[n];
    if (d == nullptr || (any_stranded && !index.stranded[n]) || !d->second.in_use()) continue;
    if (fullest == nullptr || std::tie(d->second.whole_nodes, d->second.free_milli, d->first) <
                                  std::tie(fullest->second.whole_nodes, fullest->second.free_milli, fullest->first)) {
      fullest = d;
    }
  }
  if (fullest == nullptr) return {};
  std::vector<size_t> to_stranded, to_domain;
  for (size_t i = 0; i < fits.size(); ++i) {
    const DomainUses::value_type* d = index.of[fits[i]];
    if (d == nullptr) continue;
    if (any_stranded && !index.stranded[fits[i]]) {
      to_stranded.push_back(i);
    } else if (d != fullest) {
      to_domain.push_back(i);
    }
  }
  std::vector<std::pair<std::string, std::vector<size_t>>> out;
  if (!to_stranded.empty()) {
    out.emplace_back("pods outside gangs go first to GPUs that other pods' CPU or memory leaves idle, so that whole nodes "
                     "stay free for gangs",
                     std::move(to_stranded));
  }
  if (!to_domain.empty()) {
    out.emplace_back(fmt::format("pods outside gangs go to the fullest domain in use ({}={}), so that whole domains stay "
                                 "free for gangs",
                                 key, fullest->first),
                     std::move(to_domain));
  }
  return out;
}

}  // namespace gpusched::extender
