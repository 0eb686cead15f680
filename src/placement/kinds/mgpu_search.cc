// File: mgpu_search.cc
//
// The mGPU judgement (mgpu_search.h) and the one-slice parts victim choice reuses (mgpu.h).
#include "placement/kinds/mgpu_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>

#include "gpusched/model/names.h"
#include "gpusched/model/units.h"
#include "gpusched/placement/kinds/mgpu.h"

namespace gpusched::placement {
namespace {

// Orders keys so that the preferred one comes first: binpack prefers small keys (tight fits),
// spread large ones.
bool Prefer(Policy p, double a, double b) { return p == Policy::kBinpack ? a < b : a > b; }

// How much of a GPU is left after placing (milli, mib) on it, as a fraction of compute plus a
// fraction of its memory. Binpack prefers the smallest leftover, spread the largest.
double Leftover(int64_t free_milli, int64_t free_mib, int64_t memory_mib, int64_t milli, int64_t mib) {
  double mem = memory_mib > 0 ? static_cast<double>(free_mib - mib) / static_cast<double>(memory_mib) : 0.0;
  return static_cast<double>(free_milli - milli) / kMilliPerGpu + mem;
}

bool FitsShared(const GpuSlot& s, int64_t milli, int64_t mib) {
  return s.healthy && !s.exclusive && s.instances < kMaxInstancesPerGpu && s.free_milli() >= milli &&
         s.free_mib() >= mib;
}

std::string Percent(int64_t milli) { return fmt::format("{}%", CorePercentFromMilli(milli)); }

std::string FreePerGpu(const NodeState& node) {
  std::string out;
  for (const GpuSlot& s : node.gpus) {
    if (!out.empty()) out += ", ";
    if (!s.healthy) {
      fmt::format_to(std::back_inserter(out), "GPU{} {}", s.index, s.mig ? "MIG enabled" : "unhealthy");
    } else if (s.exclusive) {
      fmt::format_to(std::back_inserter(out), "GPU{} whole-card", s.index);
    } else if (s.instances >= kMaxInstancesPerGpu) {
      fmt::format_to(std::back_inserter(out), "GPU{} {}/{} instances", s.index, s.instances,
                     kMaxInstancesPerGpu);
    } else {
      fmt::format_to(std::back_inserter(out), "GPU{} {} core/{} MiB", s.index,
                     Percent(std::max<int64_t>(0, s.free_milli())), std::max<int64_t>(0, s.free_mib()));
    }
  }
  return out.empty() ? "none" : out;
}

}  // namespace

bool IsOneSlice(const PodRequest& request) {
  if (request.kind != RequestKind::kMgpu || request.containers.size() != 1) return false;
  const MgpuContainerRequest& only = request.containers.front();
  return only.cards == 1 && !only.whole_card;
}

bool GpuTakesSlice(const PodRequest& request, const GpuSlot& gpu) {
  const MgpuContainerRequest& only = request.containers.front();
  return FitsShared(gpu, only.milli_per_card, only.mib_per_card);
}

bool PolicyMatches(const PodRequest& request, const NodeState& node) {
  return request.any_compute_policy || node.compute_policy == request.compute_policy;
}

bool TotalsFit(const PodRequest& request, const NodeState& node) {
  return request.total_milli <= node.capacity_milli - node.used_milli && request.total_mib <= node.capacity_mib - node.used_mib;
}

void MgpuSearch::Evaluate(const PodRequest& request, const NodeState& node, const Judging& how, NodeVerdict* v) {
  how_ = &how;
  EvaluateMgpu(request, node, request.gpu_policy.value_or(how.options->gpu_policy), how.want_placement, v);
  how_ = nullptr;
}

void MgpuSearch::EvaluateMgpu(const PodRequest& request, const NodeState& node, Policy gpu_policy, bool want_placement,
                           NodeVerdict* v) {
  if (!PolicyMatches(request, node)) return how_->explain ? RejectComputePolicy(request, node, v) : void();
  if (!TotalsFit(request, node)) return how_->explain ? RejectTotals(request, node, v) : void();
  const MgpuContainerRequest& first = request.containers.front();
  if (IsOneSlice(request)) {
    // The common case, one shared slice: a single scan, no search state. Without a placement to
    // return, the first fitting GPU settles it. (Kept inline: this is the hot path.)
    const GpuSlot* best = nullptr;
    double best_key = 0;
    for (const GpuSlot& s : node.gpus) {
      if (!GpuTakesSlice(request, s)) continue;
      if (!want_placement) {
        best = &s;
        break;
      }
      double key = Leftover(s.free_milli(), s.free_mib(), s.memory_mib, first.milli_per_card, first.mib_per_card);
      if (best == nullptr || Prefer(gpu_policy, key, best_key)) {
        best = &s;
        best_key = key;
      }
    }
    if (best != nullptr) {
      v->outcome = Outcome::kFits;
      if (want_placement) PlaceSlice(first, best->index, v);
      if (how_->witness != nullptr) how_->witness->assign(1, best->index);
      return;
    }
    // No GPU takes the slice: the search below would only find the same, and explain why.
    if (!how_->explain) {
      v->reject = Reject::kInsufficient;
      return;
    }
  }
  SearchMgpu(request, node, gpu_policy, want_placement, v);
}

void MgpuSearch::RejectComputePolicy(const PodRequest& request, const NodeState& node, NodeVerdict* v) {
  v->reject = Reject::kComputePolicy;
  v->reason = fmt::format("compute policy {}: pod has {}, node has {}", names::kComputePolicy, request.compute_policy,
                          node.compute_policy);
}

void MgpuSearch::RejectTotals(const PodRequest& request, const NodeState& node, NodeVerdict* v) {
  int64_t need_milli = request.total_milli;
  int64_t need_mib = request.total_mib;
  int64_t free_milli = node.capacity_milli - node.used_milli;
  int64_t free_mib = node.capacity_mib - node.used_mib;
  v->reject = Reject::kInsufficient;
  v->outcome = NodeVerdict::Refusal(need_milli <= node.capacity_milli && need_mib <= node.capacity_mib);
  v->reason = need_mib == 0 ? fmt::format("insufficient mGPU: pod needs {} core, node has {} core free",
                                          Percent(need_milli), Percent(std::max<int64_t>(0, free_milli)))
                            : fmt::format("insufficient mGPU: pod needs {} core and {} MiB, node has {} core and {} "
                                          "MiB free",
                                          Percent(need_milli), need_mib, Percent(std::max<int64_t>(0, free_milli)),
                                          std::max<int64_t>(0, free_mib));
}

void MgpuSearch::PlaceSlice(const MgpuContainerRequest& c, int gpu_index, NodeVerdict* v) {
  v->placement.kind = RequestKind::kMgpu;
  v->placement.containers.push_back(ContainerAssignment{.container = c.container,
                                                        .gpu_indices = {gpu_index},
                                                        .milli_per_gpu = c.milli_per_card,
                                                        .mib_per_gpu = c.mib_per_card,
                                                        .init_position = c.init_position,
                                                        .sidecar = c.sidecar});
}

// The general case: a bounded search over GPU sets for every container.
void MgpuSearch::SearchMgpu(const PodRequest& request, const NodeState& node, Policy gpu_policy, bool want_placement,
                         NodeVerdict* v) {
  work_.clear();
  links_ = node.links.get();
  for (const GpuSlot& s : node.gpus) {
    work_.push_back(Work{s.index, s.numa_node, s.healthy, s.exclusive, s.instances, s.free_milli(), s.free_mib(), s.memory_mib});
  }
  base_ = work_;
  option_pool_.clear();
  if (options_by_depth_.size() < request.containers.size()) options_by_depth_.resize(request.containers.size());
  chosen_.resize(request.containers.size());
  transient_slots_.resize(request.containers.size());
  steps_ = 0;
  budget_hit_ = false;
  if (!Search(request, 0, gpu_policy)) {
    v->reject = Reject::kInsufficient;
    if (!how_->explain) return;
    v->outcome = NodeVerdict::Refusal(FitsEmptyNode(request, node));
    v->reason = ExplainFailure(request, node, gpu_policy);
    return;
  }
  v->outcome = Outcome::kFits;
  if (!want_placement) return;
  v->placement.kind = RequestKind::kMgpu;
  for (size_t i = 0; i < request.containers.size(); ++i) {
    const MgpuContainerRequest& c = request.containers[i];
    ContainerAssignment a{.container = c.container,
                          .milli_per_gpu = c.milli_per_card,
                          .mib_per_gpu = c.mib_per_card,
                          .exclusive = c.whole_card,
                          .init_position = c.init_position,
                          .sidecar = c.sidecar};
    if (c.transient()) {
      for (int p : transient_slots_[i]) a.gpu_indices.push_back(work_[p].index);
    } else {
      const Option& o = chosen_[i];
      for (int k = 0; k < o.count; ++k) a.gpu_indices.push_back(work_[option_pool_[o.begin + k]].index);
    }
    v->placement.containers.push_back(std::move(a));
  }
}

bool MgpuSearch::FitsEmptyNode(const PodRequest& request, const NodeState& node) {
  // Each container alone on the node with nothing else booked: enough healthy GPUs large enough?
  for (const MgpuContainerRequest& c : request.containers) {
    int big_enough = 0;
    for (const GpuSlot& s : node.gpus) big_enough += s.healthy && s.memory_mib >= c.mib_per_card ? 1 : 0;
    if (big_enough < c.cards) return false;
  }
  return true;
}

void MgpuSearch::CollectOptions(const MgpuContainerRequest& c, Policy gpu_policy, std::vector<Option>* options) {
  options->clear();
  candidates_.clear();
  for (int p = 0; p < static_cast<int>(work_.size()); ++p) {
    const Work& w = work_[p];
    if (!w.healthy || w.exclusive) continue;
    bool ok = c.whole_card ? w.instances == 0
                           : w.instances < kMaxInstancesPerGpu && w.free_milli >= c.milli_per_card &&
                                 w.free_mib >= c.mib_per_card;
    if (ok) candidates_.push_back(p);
  }
  if (static_cast<int>(candidates_.size()) < c.cards) return;
  // Links rank sets of several cards; a single whole card only among NVLink islands (it keeps
  // the largest island idle). Nodes with PCIe switches alone choose single cards as before.
  bool linked = links_ != nullptr && (c.cards > 1 || (c.whole_card && links_->islands));
  if (linked) AddLinkedSets(c, gpu_policy, options);
  const std::ptrdiff_t linked_end = static_cast<std::ptrdiff_t>(options->size());

  auto leftover = [&](int p) {
    const Work& w = work_[p];
    return Leftover(w.free_milli, w.free_mib, w.memory_mib, c.milli_per_card, c.mib_per_card);
  };

  if (c.cards == 1 && !c.whole_card) {
    for (int p : candidates_) {
      options->push_back(Option{static_cast<int>(option_pool_.size()), 1, leftover(p)});
      option_pool_.push_back(p);
    }
    std::stable_sort(options->begin(), options->end(),
                     [&](const Option& a, const Option& b) { return Prefer(gpu_policy, a.key, b.key); });
    return;
  }

  // Several GPUs for one container: prefer a set inside one NUMA node. Whole cards take GPUs from
  // the NUMA node with the fewest idle GPUs first (binpack), keeping large idle sets whole.
  std::map<int, int> per_numa;
  for (int p : candidates_) ++per_numa[work_[p].numa];
  auto key = [&](int p) { return c.whole_card ? static_cast<double>(per_numa[work_[p].numa]) : leftover(p); };
  std::stable_sort(candidates_.begin(), candidates_.end(),
                   [&](int a, int b) { return Prefer(gpu_policy, key(a), key(b)); });
  auto add_set = [&](auto&& member) {
    Option o{static_cast<int>(option_pool_.size()), 0, 0.0};
    for (int p : candidates_) {
      if (o.count == c.cards) break;
      if (!member(p)) continue;
      option_pool_.push_back(p);
      o.key += key(p);
      ++o.count;
    }
    if (o.count == c.cards) {
      options->push_back(o);
    } else {
      option_pool_.resize(o.begin);
    }
  };
  if (per_numa.size() > 1) {
    for (const auto& [numa, count] : per_numa) {
      if (count >= c.cards) add_set([&, numa = numa](int p) { return work_[p].numa == numa; });
    }
    // The NUMA sets by key, after the linked ones, which keep their order.
    std::stable_sort(options->begin() + linked_end, options->end(),
                     [&](const Option& a, const Option& b) { return Prefer(gpu_policy, a.key, b.key); });
  }
  add_set([](int) { return true; });  // across NUMA nodes, as a last resort
  if (linked) DropRepeats(options);
}

void MgpuSearch::AddLinkedSets(const MgpuContainerRequest& c, Policy gpu_policy, std::vector<Option>* options) {
  constexpr size_t kMaxSets = 256;
  GpuSet among = 0;
  GpuSet idle = 0;
  for (int p : candidates_) among |= GpuSet{1} << p;
  for (int p = 0; p < static_cast<int>(work_.size()); ++p) {
    const Work& w = work_[p];
    if (w.healthy && !w.exclusive && w.instances == 0) idle |= GpuSet{1} << p;
  }
  auto key = [&](GpuSet set) {
    double sum = 0;
    for (; set != 0; set &= set - 1) {
      const Work& w = work_[std::countr_zero(set)];
      sum += c.whole_card ? 0.0 : Leftover(w.free_milli, w.free_mib, w.memory_mib, c.milli_per_card, c.mib_per_card);
    }
    return sum;
  };
  struct Scored {
    GpuSet set;
    int left;   // the largest NVLink-connected idle set it leaves
    int links;  // its links inside
    double key;
  };
  std::vector<GpuSet> sets;
  if (links_->islands) ConnectedSets(links_->nvlink, among, c.cards, kMaxSets, &sets);
  std::vector<Scored> scored;
  for (GpuSet set : sets) {
    scored.push_back(Scored{set, LargestConnected(links_->nvlink, idle & ~set), LinksInside(links_->nvlink, set), key(set)});
  }
  std::stable_sort(scored.begin(), scored.end(), [&](const Scored& a, const Scored& b) {
    if (a.left != b.left) return a.left > b.left;
    if (a.links != b.links) return a.links > b.links;
    return Prefer(gpu_policy, a.key, b.key);
  });
  constexpr size_t kMaxLinked = 8;  // the search tries the best few; NUMA sets stay within its budget
  if (scored.size() > kMaxLinked) scored.resize(kMaxLinked);
  // Then, for several cards, one PCIe switch: its candidates in the policy's order.
  std::vector<Scored> switches;
  std::vector<int> ranked = candidates_;
  std::stable_sort(ranked.begin(), ranked.end(), [&](int a, int b) {
    return Prefer(gpu_policy, key(GpuSet{1} << a), key(GpuSet{1} << b));
  });
  for (GpuSet seen = 0; int p : ranked) {
    GpuSet group = (links_->pcie[p] | (GpuSet{1} << p)) & among;
    if (c.cards < 2 || (seen & (GpuSet{1} << p)) != 0 || std::popcount(group) < c.cards) continue;
    seen |= group;
    GpuSet set = 0;
    for (int q : ranked) {
      if (std::popcount(set) < c.cards && (group & (GpuSet{1} << q)) != 0) set |= GpuSet{1} << q;
    }
    switches.push_back(Scored{set, 0, 0, key(set)});
  }
  std::stable_sort(switches.begin(), switches.end(),
                   [&](const Scored& a, const Scored& b) { return Prefer(gpu_policy, a.key, b.key); });
  scored.insert(scored.end(), switches.begin(), switches.end());
  for (const Scored& s : scored) {
    Option o{static_cast<int>(option_pool_.size()), c.cards, s.key};
    for (GpuSet set = s.set; set != 0; set &= set - 1) option_pool_.push_back(std::countr_zero(set));
    options->push_back(o);
  }
}

void MgpuSearch::DropRepeats(std::vector<Option>* options) {
  std::vector<GpuSet> seen;
  std::erase_if(*options, [&](const Option& o) {
    GpuSet set = 0;
    for (int k = 0; k < o.count; ++k) set |= GpuSet{1} << option_pool_[o.begin + k];
    if (std::find(seen.begin(), seen.end(), set) != seen.end()) return true;
    seen.push_back(set);
    return false;
  });
}

void MgpuSearch::Apply(const MgpuContainerRequest& c, const Option& o, int sign) {
  for (int k = 0; k < o.count; ++k) {
    Work& w = work_[option_pool_[o.begin + k]];
    w.instances += sign;
    if (c.whole_card) {
      w.exclusive = sign > 0;
      w.free_milli -= sign * kMilliPerGpu;
      w.free_mib -= sign * w.memory_mib;
    } else {
      w.free_milli -= sign * c.milli_per_card;
      w.free_mib -= sign * c.mib_per_card;
    }
  }
}

bool MgpuSearch::Search(const PodRequest& request, size_t next, Policy gpu_policy) {
  if (next == request.containers.size()) return PlaceTransient(request, gpu_policy);
  const MgpuContainerRequest& c = request.containers[next];
  // Regular init containers run in phases of their own: placed once the rest is.
  if (c.transient()) return Search(request, next + 1, gpu_policy);
  size_t pool_mark = option_pool_.size();
  std::vector<Option>& options = options_by_depth_[next];
  CollectOptions(c, gpu_policy, &options);
  for (const Option& o : options) {
    if (++steps_ > how_->options->search_budget) {
      budget_hit_ = true;
      break;
    }
    Apply(c, o, +1);
    chosen_[next] = o;
    if (Search(request, next + 1, gpu_policy)) return true;
    Apply(c, o, -1);
  }
  option_pool_.resize(pool_mark);
  return false;
}

bool MgpuSearch::PlaceTransient(const PodRequest& request, Policy gpu_policy) {
  // The pod's own use of each GPU by its long-running containers: all, and the sidecars alone.
  struct Share {
    int64_t milli = 0, mib = 0;
    int instances = 0;
  };
  for (size_t t = 0; t < request.containers.size(); ++t) {
    const MgpuContainerRequest& init = request.containers[t];
    if (!init.transient()) continue;
    std::vector<Share> pod(work_.size()), sidecars(work_.size());
    for (size_t i = 0; i < request.containers.size(); ++i) {
      const MgpuContainerRequest& c = request.containers[i];
      if (c.transient()) continue;
      bool before = c.sidecar && c.init_position < init.init_position;
      for (int k = 0; k < chosen_[i].count; ++k) {
        int p = option_pool_[chosen_[i].begin + k];
        int64_t milli = c.whole_card ? kMilliPerGpu : c.milli_per_card;
        int64_t mib = c.whole_card ? base_[p].memory_mib : c.mib_per_card;
        pod[p] = {pod[p].milli + milli, pod[p].mib + mib, pod[p].instances + 1};
        if (before) sidecars[p] = {sidecars[p].milli + milli, sidecars[p].mib + mib, sidecars[p].instances + 1};
      }
    }
    // During its phase the init container meets the other pods (base_) and the sidecars before it.
    std::vector<std::pair<double, int>> fits;
    for (int p = 0; p < static_cast<int>(base_.size()); ++p) {
      const Work& b = base_[p];
      if (!b.healthy || b.exclusive) continue;
      bool ok = init.whole_card ? b.instances == 0 && sidecars[p].instances == 0
                                : b.instances + sidecars[p].instances < kMaxInstancesPerGpu &&
                                      b.free_milli - sidecars[p].milli >= init.milli_per_card &&
                                      b.free_mib - sidecars[p].mib >= init.mib_per_card;
      if (!ok) continue;
      // Prefer GPUs where the pod already holds as much: the booking grows least there.
      int64_t need = init.whole_card ? kMilliPerGpu : sidecars[p].milli + init.milli_per_card;
      double growth = static_cast<double>(std::max<int64_t>(0, need - pod[p].milli));
      double fit = Leftover(b.free_milli - sidecars[p].milli, b.free_mib - sidecars[p].mib, b.memory_mib,
                            init.milli_per_card, init.mib_per_card);
      fits.emplace_back(growth * 4 + (gpu_policy == Policy::kBinpack ? fit : 1 - fit), p);
    }
    if (static_cast<int>(fits.size()) < init.cards) return false;
    std::stable_sort(fits.begin(), fits.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    transient_slots_[t].clear();
    for (int k = 0; k < init.cards; ++k) transient_slots_[t].push_back(fits[k].second);
  }
  return true;
}

std::string MgpuSearch::ExplainFailure(const PodRequest& request, const NodeState& node, Policy gpu_policy) {
  std::vector<Option> options;
  for (const MgpuContainerRequest& c : request.containers) {
    CollectOptions(c, gpu_policy, &options);
    if (!options.empty()) continue;
    if (c.whole_card) {
      int idle = 0;
      for (const Work& w : work_) idle += w.healthy && w.instances == 0 ? 1 : 0;
      return fmt::format("container {} needs {} idle GPU{}; node has {} idle ({})", c.container, c.cards,
                         c.cards == 1 ? "" : "s", idle, FreePerGpu(node));
    }
    if (c.cards > 1) {
      return fmt::format("container {} needs {} GPUs with {} core and {} MiB free each, {} qualify ({})", c.container,
                         c.cards, Percent(c.milli_per_card), c.mib_per_card, candidates_.size(), FreePerGpu(node));
    }
    return fmt::format("container {} needs {} core and {} MiB on one GPU with a free instance slot ({})", c.container,
                       Percent(c.milli_per_card), c.mib_per_card, FreePerGpu(node));
  }
  if (budget_hit_) {
    return fmt::format("GPU search stopped after {} steps (search budget) without fitting the pod's {} containers",
                       how_->options->search_budget, request.containers.size());
  }
  return fmt::format("the pod's {} mGPU containers fit one by one but not together ({})", request.containers.size(),
                     FreePerGpu(node));
}

}  // namespace gpusched::placement
