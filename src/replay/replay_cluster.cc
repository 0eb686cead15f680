// File: replay_cluster.cc
//
// One replay's cluster: scoring views with each node's fragmentation and potential kept current as
// pods come and go, the seeded node order, the pick as the policy or kube-scheduler (after the 0-10
// mapping) makes it, and the pods a node must shed for a pod.
#include "replay_cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <span>

#include "gpusched/placement/score_mapping.h"
#include "gpusched/scoring/fragmentation.h"

namespace gpusched::replay {
namespace {

using scoring::Candidate;
using scoring::Choice;

// Picks the candidate kube-scheduler would bind when gpusched maps the scores to 0-10.
size_t PickThroughExtender(std::span<const Candidate> candidates, std::span<const Choice> choices,
                           const std::vector<std::string>& ordered_names, placement::ScoreMapping mapping, Rng& rng) {
  std::vector<placement::ScoredNode> scored(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) scored[i] = {ordered_names[candidates[i].order], choices[i].score};
  std::vector<int64_t> mapped = placement::MapScores(scored, mapping);
  int64_t top = *std::max_element(mapped.begin(), mapped.end());
  std::vector<size_t> tied;
  for (size_t i = 0; i < mapped.size(); ++i) {
    if (mapped[i] == top) tied.push_back(i);
  }
  return tied.size() == 1 ? tied[0] : tied[rng.Below(tied.size())];
}

// Takes `pod` (placed as `placed`) off `node`, or (sign -1) books it there again.
void Unbook(const scoring::PodShape& pod, const PlacedPod& placed, scoring::NodeView* node, int sign = 1) {
  for (int g = 0; g < scoring::kMaxGpus; ++g) node->gpu_free[g] += sign * placed.taken[g];
  node->cpu_free += sign * pod.cpu;
  node->mem_free += sign * pod.mem;
  if (pod.tag() >= 0) node->tags[pod.tag()] -= sign;
}

}  // namespace

std::optional<std::vector<size_t>> RoomOnNode(const scoring::PodShape& pod, scoring::NodeView view,
                                              const std::vector<RunningPod>& on_node) {
  for (const RunningPod& r : on_node) Unbook(*r.shape, *r.placed, &view);
  if (!scoring::Fits(pod, view)) return std::nullopt;
  std::vector<size_t> order(on_node.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return on_node[a].shape->gpu_milli() > on_node[b].shape->gpu_milli(); });
  std::vector<size_t> victims;
  for (size_t i : order) {
    Unbook(*on_node[i].shape, *on_node[i].placed, &view, -1);
    if (scoring::Fits(pod, view)) continue;
    Unbook(*on_node[i].shape, *on_node[i].placed, &view);
    victims.push_back(i);
  }
  return victims;
}

ReplayCluster::ReplayCluster(const PreparedTrace& trace, const scoring::Scorer& scorer, Rng& rng)
    : trace_(trace), scorer_(scorer), nodes_(trace.nodes), idle_total_(trace.capacity_milli) {
  size_t n = nodes_.size();
  // The order kube-scheduler would list the nodes in, and their names sorting in that order.
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), 0u);
  for (size_t i = n; i > 1; --i) std::swap(order_[i - 1], order_[rng.Below(i)]);
  ordered_names_.resize(n);
  for (size_t i = 0; i < n; ++i) ordered_names_[order_[i]] = fmt::format("{:05}-{}", order_[i], trace.node_names[i]);
  frag_.resize(n);
  potential_.assign(n, std::numeric_limits<double>::quiet_NaN());
  for (size_t i = 0; i < n; ++i) {
    frag_[i] = scoring::FgdFragmentation(nodes_[i], trace.workload);
    frag_total_ += frag_[i];
    if (scorer.HasPotential()) potential_[i] = scorer.Potential(nodes_[i]);
  }
}

bool ReplayCluster::Place(const scoring::PodShape& pod, Selection selection, Rng& rng, PlacedPod* placed,
                          const std::vector<uint8_t>* allowed) {
  candidates_.clear();
  candidate_node_.clear();
  size_t n = nodes_.size();
  for (size_t i = 0; i < n; ++i) {
    if ((allowed != nullptr && (*allowed)[i] == 0) || !scoring::Fits(pod, nodes_[i])) continue;
    candidates_.push_back(Candidate{.node = &nodes_[i],
                                    .order = order_[i],
                                    .rank = static_cast<double>(order_[i]) / static_cast<double>(n),
                                    .potential = potential_[i]});
    candidate_node_.push_back(i);
  }
  if (candidates_.empty()) return false;
  choices_.assign(candidates_.size(), Choice{});
  scorer_.Score(pod, candidates_, choices_, rng);
  size_t pick = Pick(selection, rng);
  size_t i = candidate_node_[pick];
  int gpu = choices_[pick].gpu;
  if (pod.sharing() && gpu < 0) gpu = scoring::BestFitGpu(pod, nodes_[i]);
  std::array<int32_t, scoring::kMaxGpus> before = nodes_[i].gpu_free;
  scoring::Place(pod, gpu, &nodes_[i]);
  if (placed != nullptr) {
    placed->node = i;
    for (int g = 0; g < scoring::kMaxGpus; ++g) placed->taken[g] = before[g] - nodes_[i].gpu_free[g];
  }
  idle_total_ -= pod.gpu_milli();
  Refresh(i);
  return true;
}

void ReplayCluster::Remove(const scoring::PodShape& pod, const PlacedPod& placed) {
  Unbook(pod, placed, &nodes_[placed.node]);
  idle_total_ += pod.gpu_milli();
  Refresh(placed.node);
}

void ReplayCluster::Restore(const scoring::PodShape& pod, const PlacedPod& placed) {
  Unbook(pod, placed, &nodes_[placed.node], -1);
  idle_total_ -= pod.gpu_milli();
  Refresh(placed.node);
}

void ReplayCluster::Refresh(size_t i) {
  frag_total_ -= frag_[i];
  frag_[i] = scoring::FgdFragmentation(nodes_[i], trace_.workload);
  frag_total_ += frag_[i];
  if (scorer_.HasPotential()) potential_[i] = scorer_.Potential(nodes_[i]);
}

size_t ReplayCluster::Pick(Selection selection, Rng& rng) {
  switch (selection) {
    case Selection::kPolicy: return scoring::Best(candidates_, choices_);
    case Selection::kExtenderRank:
      return PickThroughExtender(candidates_, choices_, ordered_names_, placement::ScoreMapping::kRank, rng);
    case Selection::kExtenderLinear:
      return PickThroughExtender(candidates_, choices_, ordered_names_, placement::ScoreMapping::kLinear, rng);
  }
  return 0;
}

}  // namespace gpusched::replay
