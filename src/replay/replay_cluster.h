// File: replay_cluster.h (private to replay)
//
// One replay's cluster of scoring views (openb_replay.h, timeline_replay.h): the nodes, each
// node's FGD fragmentation and the scorer's potential, kept current as pods are placed and, in a
// timeline, removed again. The node order kube-scheduler would list the nodes in is drawn with
// the seed and breaks score ties.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/common/random.h"
#include "gpusched/replay/openb_replay.h"
#include "gpusched/scoring/node_view.h"
#include "gpusched/scoring/scorer.h"

namespace gpusched::replay {

// Where a pod went: its node and the milli it took from each GPU there.
struct PlacedPod {
  size_t node = 0;
  std::array<int32_t, scoring::kMaxGpus> taken{};
};

// One pod running on a node, as victim choice reads it.
struct RunningPod {
  const scoring::PodShape* shape = nullptr;
  const PlacedPod* placed = nullptr;
};

// The pods of `on_node` (positions into it) that must leave node `view` for `pod` to fit, the
// largest kept where the pod still fits with them (so that small pods, which land elsewhere more
// easily, move): nullopt if the pod does not fit even with all of them gone. The defrag of the
// churn replay (the replay's counterpart of placement/defrag_planner.h's LargestKept).
std::optional<std::vector<size_t>> RoomOnNode(const scoring::PodShape& pod, scoring::NodeView view,
                                              const std::vector<RunningPod>& on_node);

class ReplayCluster {
 public:
  // REQUIRES: `trace` and `scorer` outlive the cluster.
  ReplayCluster(const PreparedTrace& trace, const scoring::Scorer& scorer, Rng& rng);

  // Places `pod` where the scorer (through `selection`) picks; returns false if no node fits.
  // `placed` (optional) receives where it went; `allowed` (optional, by node) limits the nodes.
  bool Place(const scoring::PodShape& pod, Selection selection, Rng& rng, PlacedPod* placed = nullptr,
             const std::vector<uint8_t>* allowed = nullptr);
  // Takes `pod`, placed as `placed`, off its node.
  void Remove(const scoring::PodShape& pod, const PlacedPod& placed);
  // Puts `pod` back exactly as `placed` took it (undoes Remove).
  void Restore(const scoring::PodShape& pod, const PlacedPod& placed);

  const scoring::NodeView& node(size_t i) const { return nodes_[i]; }
  double frag_total() const { return frag_total_; }
  int64_t idle_total() const { return idle_total_; }

 private:
  size_t Pick(Selection selection, Rng& rng);
  // Recomputes node i's fragmentation and potential.
  void Refresh(size_t i);

  const PreparedTrace& trace_;
  const scoring::Scorer& scorer_;
  std::vector<scoring::NodeView> nodes_;
  std::vector<uint32_t> order_;
  std::vector<std::string> ordered_names_;
  std::vector<double> frag_;
  std::vector<double> potential_;
  double frag_total_ = 0;
  int64_t idle_total_;
  std::vector<scoring::Candidate> candidates_;
  std::vector<size_t> candidate_node_;
  std::vector<scoring::Choice> choices_;
};

}  // namespace gpusched::replay
