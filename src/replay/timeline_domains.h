// File: timeline_domains.h (private to replay)
//
// The churn replay's topology (timeline_replay.h, docs/topology.md): nodes split into contiguous
// domains, the GPU each domain has allocated (which domains are in use), the gang jobs mixed into
// a trace, and the measure of domain fragmentation: free GPUs stranded in domains that cannot host
// one gang of the target shape, as FGD counts the GPUs a target pod cannot use.
#pragma once

#include <cstdint>
#include <vector>

#include "gpusched/common/random.h"
#include "gpusched/replay/timeline_replay.h"
#include "gpusched/scoring/node_view.h"
#include "replay_cluster.h"

namespace gpusched::replay {

// One synthetic gang job: when it arrives (compressed seconds) and how long it runs.
struct GangJob {
  double arrive = 0;
  int64_t duration_s = 0;
};

// The gang jobs of `spec` for a trace whose pods are `pods` (their durations drawn from), which
// asks `trace_gpu_time` GPU milli-seconds, arriving over [0, horizon]. Sorted by arrival.
std::vector<GangJob> MakeGangJobs(const GangSpec& spec, const std::vector<TimelinePod>& pods, double trace_gpu_time,
                                  double horizon, uint64_t seed);
// The pod shape of one member of `spec`.
scoring::PodShape MemberShape(const GangSpec& spec);

class Domains {
 public:
  // `count` domains over `nodes` nodes (0: none), node i in domain i * count / nodes.
  Domains(size_t nodes, int count);
  bool enabled() const { return !of_.empty(); }
  int count() const { return static_cast<int>(masks_.size()); }
  int of(size_t node) const { return of_[node]; }
  const std::vector<uint8_t>& nodes(int d) const { return masks_[d]; }
  // A pod came to `node` (pods 1) or left it (-1), with `milli` GPU (negative when leaving);
  // `unsteered`: a pod gpusched does not steer (another scheduler's).
  void Book(size_t node, int64_t milli, int pods, bool unsteered = false) {
    if (!enabled()) return;
    int d = of_[node];
    used_[d] += milli;
    pods_[d] += pods;
    unsteered_[d] += unsteered ? pods : 0;
    whole_[d] += (node_pods_[node] + pods == 0) - (node_pods_[node] == 0);
    node_pods_[node] += pods;
  }
  // A node without GPUs: never whole, as gpusched's IsWholeNode (it counts as one more pod).
  void NeverWhole(size_t node) {
    if (!enabled()) return;
    whole_[of_[node]] -= node_pods_[node] == 0 ? 1 : 0;
    ++node_pods_[node];
  }
  bool whole(size_t node) const { return node_pods_[node] == 0; }  // no pod on it, and GPUs
  int64_t used(int d) const { return used_[d]; }
  int pods(int d) const { return pods_[d]; }
  int unsteered(int d) const { return unsteered_[d]; }  // pods running there that gpusched does not steer
  // The domain with the most whole nodes, then the most free GPU, then the lowest index: the one
  // kept for a waiting gang (gpusched's gang_reservation.h).
  int MostWhole(const ReplayCluster& cluster) const;
  // The domains fullest first: fewest whole nodes (no pod at all: what a gang member of any
  // shape can take), then least free GPU, then more pods, then index.
  std::vector<int> FullestFirst(const ReplayCluster& cluster) const;
  // By node: whether it is whole and its domain's whole nodes hold `demand` milli-GPU (more than
  // the node's own) only with it (gpusched's LastRoomForGang).
  std::vector<uint8_t> LastRoomForGang(const ReplayCluster& cluster, int64_t demand) const;
  // Free GPUs (whole-GPU equivalents) in the domains where fewer than `members` nodes fit one
  // `member` each: what no gang of that shape can use.
  double Stranded(const ReplayCluster& cluster, const scoring::PodShape& member, int members) const;

 private:
  std::vector<int> of_;                      // by node
  std::vector<std::vector<uint8_t>> masks_;  // by domain
  std::vector<int64_t> used_;                // by domain: GPU milli allocated
  std::vector<int> pods_;                    // by domain: pods running
  std::vector<int> unsteered_;               // by domain: of those, pods gpusched does not steer
  std::vector<int> whole_;                   // by domain: nodes without pods
  std::vector<int> node_pods_;               // by node: pods running
};

}  // namespace gpusched::replay
