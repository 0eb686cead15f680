// File: domain_steering.cc
//
// domain_steering.h: the per-domain GPU sums of a snapshot, and the fullest domain in use among
// the fitting nodes'.
#include "gpusched/extender/domain_steering.h"

#include <fmt/format.h>

#include <optional>

namespace gpusched::extender {

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
  }
  MutexLock lock(&mu_);
  version_ = snapshot.version();
  key_ = key;
  uses_ = uses;
  return uses_;
}

std::vector<std::pair<size_t, std::string>> OutsideFullestDomain(const std::vector<const placement::NodeState*>& fits,
                                                                 const std::string& key, const DomainUses& domains) {
  std::optional<std::pair<int64_t, std::string>> fullest;  // (free, value)
  for (const placement::NodeState* n : fits) {
    auto label = n->node.labels.find(key);
    if (label == n->node.labels.end()) continue;
    auto d = domains.find(label->second);
    if (d == domains.end() || d->second.used_milli <= 0) continue;
    std::pair<int64_t, std::string> candidate{d->second.free_milli, label->second};
    if (!fullest || candidate < *fullest) fullest = std::move(candidate);
  }
  std::vector<std::pair<size_t, std::string>> out;
  if (!fullest) return out;
  std::string reason = fmt::format("pods outside gangs go to the fullest domain in use ({}={}), so that whole domains stay "
                                   "free for gangs",
                                   key, fullest->second);
  for (size_t i = 0; i < fits.size(); ++i) {
    auto label = fits[i]->node.labels.find(key);
    if (label != fits[i]->node.labels.end() && label->second != fullest->second) out.emplace_back(i, reason);
  }
  return out;
}

}  // namespace gpusched::extender
