// File: node_ranking.cc
//
// The extender's nodes and pods as scoring views and shapes, the target workload observed from what
// is booked, a stable per-name rank for the soft policies' penalty, and ranking nodes one at a time
// or in one batch for the policies that need the whole set.
#include "gpusched/placement/node_ranking.h"

#include "gpusched/scoring/reservation.h"

#include <algorithm>

namespace gpusched::placement {
namespace {

// Returns the scoring shape of one mGPU container, or of a whole pod of k GPUs.
scoring::PodShape ContainerShape(int cards, int64_t milli_per_card) {
  return scoring::PodShape{.gpus = cards, .milli = static_cast<int32_t>(std::min<int64_t>(milli_per_card, kMilliPerGpu))};
}

void Tag(const scoring::PodShape& shape, scoring::NodeView* view) {
  if (shape.tag() >= 0) ++view->tags[shape.tag()];
}

}  // namespace

scoring::NodeView ScoringView(const NodeState& node) {
  scoring::NodeView v;
  if (HasPayload(node.mode, Payload::kShares)) {
    v.gpu_count = static_cast<int>(std::min<size_t>(node.gpus.size(), scoring::kMaxGpus));
    for (int i = 0; i < v.gpu_count; ++i) {
      const GpuSlot& s = node.gpus[i];
      int64_t free = 0;
      if (s.healthy && !s.exclusive && s.instances < kMaxInstancesPerGpu && s.memory_mib > 0) {
        int64_t memory_share = std::max<int64_t>(0, s.free_mib()) * kMilliPerGpu / s.memory_mib;
        free = std::clamp<int64_t>(std::min(s.free_milli(), memory_share), 0, kMilliPerGpu);
      }
      v.gpu_free[i] = static_cast<int32_t>(free);
    }
  } else {
    v.gpu_count = static_cast<int>(std::min<int64_t>(node.whole_total, scoring::kMaxGpus));
    int64_t used = std::min<int64_t>(node.whole_used, v.gpu_count);
    for (int i = 0; i < v.gpu_count; ++i) v.gpu_free[i] = i < used ? 0 : static_cast<int32_t>(kMilliPerGpu);
  }
  for (const Allocation& a : node.allocations) {
    if (HasPayload(a.placement.kind, Payload::kCount)) Tag(ContainerShape(static_cast<int>(a.placement.whole_gpus), kMilliPerGpu), &v);
    for (const ContainerAssignment& c : a.placement.containers) {
      Tag(ContainerShape(static_cast<int>(std::max<size_t>(1, c.gpu_indices.size())), c.milli_per_gpu), &v);
    }
  }
  return v;
}

scoring::PodShape ScoringShape(const PodRequest& request) {
  if (HasPayload(request.kind, Payload::kCount)) return ContainerShape(static_cast<int>(request.whole_gpus), kMilliPerGpu);
  if (!HasPayload(request.kind, Payload::kShares) || request.containers.empty()) return scoring::PodShape{};
  if (request.containers.size() == 1) {
    const MgpuContainerRequest& c = request.containers.front();
    return ContainerShape(c.cards, c.milli_per_card);
  }
  // Several containers: as many GPUs as they span, each as busy as the busiest card.
  int cards = 0;
  int64_t milli = 0;
  for (const MgpuContainerRequest& c : request.containers) {
    cards += c.cards;
    milli = std::max(milli, c.milli_per_card);
  }
  return ContainerShape(cards, milli);
}

scoring::TargetWorkload ObservedWorkload(std::span<const NodeState* const> nodes) {
  std::vector<scoring::WorkloadSample> samples;
  for (const NodeState* n : nodes) {
    for (const Allocation& a : n->allocations) {
      if (HasPayload(a.placement.kind, Payload::kCount)) {
        samples.push_back({ContainerShape(static_cast<int>(a.placement.whole_gpus), kMilliPerGpu), ""});
      }
      for (const ContainerAssignment& c : a.placement.containers) {
        int cards = static_cast<int>(std::max<size_t>(1, c.gpu_indices.size()));
        samples.push_back({ContainerShape(cards, c.milli_per_gpu), ""});
      }
    }
  }
  scoring::TargetWorkload workload = scoring::BuildTargetWorkload(samples);
  scoring::BuildGapValue(samples, 0.05, &workload);
  std::vector<scoring::NodeView> views;  // GPU count only: the nodes' CPU is not tracked here
  views.reserve(nodes.size());
  for (const NodeState* n : nodes) {
    if (n->view.gpu_count > 0) views.push_back(n->view);
  }
  workload.picky = scoring::PickyShapes(samples, views, scoring::kPickyShare);
  return workload;
}

double StableRank(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  h ^= h >> 33;  // spread the low bits a little
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

Ranker::Ranker(const scoring::Scorer& scorer, const PodRequest& request, uint64_t seed)
    : scorer_(scorer), batch_(scorer.Batch()), uses_rank_(scorer.UsesRank()), shape_(ScoringShape(request)), rng_(seed) {
  if (!batch_) ranked_.reserve(256);
}

void Ranker::Add(size_t pos, const NodeState& node, uint32_t order) {
  scoring::Candidate c{.node = &node.view, .order = order, .rank = uses_rank_ ? StableRank(node.node.name) : 0.0};
  if (!batch_) {
    // Scored at once, while the node is in cache.
    scoring::Choice choice;
    scorer_.Score(shape_, std::span(&c, 1), std::span(&choice, 1), rng_);
    ranked_.push_back(RankedNode{pos, choice.score});
    return;
  }
  candidates_.push_back(c);
  positions_.push_back(pos);
}

std::vector<RankedNode> Ranker::Finish() {
  if (!batch_) return std::move(ranked_);
  std::vector<scoring::Choice> choices(candidates_.size());
  scorer_.Score(shape_, candidates_, choices, rng_);
  std::vector<RankedNode> out(candidates_.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = RankedNode{positions_[i], choices[i].score};
  return out;
}

std::vector<RankedNode> MergeByPosition(std::vector<RankedNode> a, const std::vector<RankedNode>& b) {
  if (b.empty()) return a;
  if (b.size() < 8) {  // the usual case: a few changed nodes, inserted in place
    for (const RankedNode& r : b) {
      auto at = std::lower_bound(a.begin(), a.end(), r.pos, [](const RankedNode& x, size_t pos) { return x.pos < pos; });
      a.insert(at, r);
    }
    return a;
  }
  std::vector<RankedNode> out(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), out.begin(),
             [](const RankedNode& x, const RankedNode& y) { return x.pos < y.pos; });
  return out;
}

}  // namespace gpusched::placement
