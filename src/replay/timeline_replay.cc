// File: timeline_replay.cc
//
// The churn replay: arrivals and departures in time order, waiting pods retried when a node frees,
// a budgeted defragmentation that moves pods for waiting ones (multi-GPU first), and the sampled
// measures; plus the offered load and the default compression.
#include "gpusched/replay/timeline_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <queue>
#include <tuple>

#include "gpusched/common/random.h"
#include "gpusched/scoring/reservation.h"
#include "kube_scheduler_score.h"
#include "replay_cluster.h"
#include "timeline_domains.h"

namespace gpusched::replay {
namespace {

using scoring::PodShape;

constexpr double kSampleEvery = 60;  // simulated seconds

// The q-quantile (nearest rank) of `v`; 0 when empty.
double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

enum PodClass { kCpuOnly, kSharing, kOneGpu, kMultiGpu, kClasses };

PodClass ClassOf(const PodShape& p) {
  if (!p.uses_gpu()) return kCpuOnly;
  if (p.sharing()) return kSharing;
  return p.gpus == 1 ? kOneGpu : kMultiGpu;
}

// One run's state: the cluster, the events still to come, the waiting pods and what was measured.
class Timeline {
 public:
  Timeline(const PreparedTrace& trace, const std::vector<TimelinePod>& pods, const scoring::Scorer& scorer,
           const TimelineOptions& options, double compress)
      : trace_(trace), pods_(pods), options_(options), rng_(options.seed), cluster_(trace, scorer, rng_),
        where_(pods.size()), on_node_(trace.nodes.size()), domains_(trace.nodes.size(), options.domains),
        member_(MemberShape(options.gangs)) {
    int64_t t0 = pods.empty() ? 0 : std::min_element(pods.begin(), pods.end(), [](const TimelinePod& a, const TimelinePod& b) {
                                      return a.created_s < b.created_s;
                                    })->created_s;
    arrive_.resize(pods.size());
    for (size_t k = 0; k < pods.size(); ++k) {
      arrive_[k] = static_cast<double>(pods[k].created_s - t0) / compress;
      order_.push_back(k);
    }
    std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) { return arrive_[a] < arrive_[b]; });
    horizon_ = order_.empty() ? 0 : arrive_[order_.back()];
    next_defrag_ = options.defrag_every_s > 0 ? options.defrag_every_s : kNever;
    double gpu_time = 0;
    for (const TimelinePod& p : pods) gpu_time += static_cast<double>(trace.pods[p.index].gpu_milli()) * static_cast<double>(p.duration_s);
    for (size_t i = 0; i < trace.nodes.size(); ++i) {
      if (trace.nodes[i].gpu_count == 0) domains_.NeverWhole(i);
    }
    gangs_ = MakeGangJobs(options.gangs, pods, gpu_time, horizon_, options.seed);
    gang_where_.resize(gangs_.size());
  }

  void Run() {
    size_t next = 0;
    while (next < order_.size() || next_gang_ < gangs_.size() || !departures_.empty()) {
      double arrival = next < order_.size() ? arrive_[order_[next]] : kNever;
      double gang_arrival = next_gang_ < gangs_.size() ? gangs_[next_gang_].arrive : kNever;
      double departure = departures_.empty() ? kNever : departures_.top().first;
      double now = std::min({arrival, gang_arrival, departure, next_defrag_});
      SampleUntil(now);
      end_ = now;
      if (now == departure) {
        size_t k = departures_.top().second;
        departures_.pop();
        Depart(k, now);
      } else if (now == arrival) {
        size_t k = order_[next++];
        if (!TryPlace(k, now)) {
          waiting_.push_back(k);
        } else if (options_.topology_aware && !Steered(k) && domains_.enabled() && domains_.of(where_[k].node) == KeptDomain()) {
          RetryWaiting({}, now);  // the kept domain no longer drains: gangs past fallback_after go now
        }
      } else if (now == gang_arrival) {
        size_t g = next_gang_++;
        if (!TryPlaceGang(g, now)) gangs_waiting_.push_back(g);
      } else {
        Defrag(now);
        next_defrag_ = waiting_.empty() && next == order_.size() ? kNever : now + options_.defrag_every_s;
      }
    }
  }

  void Report(TimelineResult* r) const;
  void ReportGangs(TimelineResult* r, size_t samples) const;

 private:
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  // A defrag makes room for a waiting pod with at most this many moves.
  static constexpr size_t kMaxMovesPerPod = 4;
  // ... and tries at most this many waiting pods, oldest first, and this many nodes for each.
  static constexpr size_t kDefragPods = 16;
  static constexpr size_t kDefragNodes = 4;

  const PodShape& Shape(size_t k) const { return trace_.pods[pods_[k].index]; }

  // Places pod k where the policy picks; false if it fits nowhere.
  // Topology-aware: a GPU pod outside gangs goes first to nodes whose GPUs their CPU or memory
  // strands, then (while gangs run or wait: gpusched's target, GangDemands) to the fullest domain
  // in use where it fits on a node that is no domain's last room for a gang, then to the fullest
  // domain in use where it fits, as gpusched steers it, so that whole domains stay free; CPU-only
  // pods too (without the first step) with steer_cpu_pods. While a gang waits, a steered pod
  // stays off the domain kept for it (KeptDomain), even where nothing else fits.
  bool Place(size_t k) {
    bool steered = Steered(k);
    int kept = steered ? KeptDomain() : -1;
    std::vector<uint8_t> allowed;
    if (kept >= 0) {
      allowed.assign(trace_.nodes.size(), 0);
      for (size_t i = 0; i < allowed.size(); ++i) allowed[i] = domains_.of(i) != kept;
    }
    const std::vector<uint8_t>* only = kept >= 0 ? &allowed : nullptr;
    bool placed = false;
    if (steered && Shape(k).uses_gpu()) {
      std::vector<uint8_t> stranded(trace_.nodes.size(), 0);
      for (size_t i = 0; i < stranded.size(); ++i) stranded[i] = GpusStrandedByOtherResources(i) && (only == nullptr || allowed[i]);
      placed = PlaceInFullestDomain(k, &stranded);
    }
    if (!placed && steered && (gangs_running_ > 0 || !gangs_waiting_.empty())) {
      std::vector<uint8_t> spare = domains_.LastRoomForGang(cluster_, int64_t{options_.gangs.members} * member_.gpu_milli());
      for (size_t i = 0; i < spare.size(); ++i) spare[i] = !spare[i] && (only == nullptr || (*only)[i]);
      placed = PlaceInFullestDomain(k, &spare);
    }
    if (!placed && steered) placed = PlaceInFullestDomain(k, only);
    if (!placed && !PlaceAmong(k, only)) return false;
    domains_.Book(where_[k].node, Shape(k).gpu_milli(), 1, !steered);
    on_node_[where_[k].node].push_back(k);
    ++running_;
    return true;
  }
  // Whether gpusched steers pod k: a topology-aware run's GPU pods, and CPU-only pods with
  // steer_cpu_pods (the others are another scheduler's).
  bool Steered(size_t k) const {
    return options_.topology_aware && domains_.enabled() && (Shape(k).uses_gpu() || options_.steer_cpu_pods);
  }
  // The domain kept for the waiting gangs, as gpusched's topology.reserveForGangs: -1 when none.
  int KeptDomain() {
    if (!options_.reserve_for_gangs || gangs_waiting_.empty() || !SomeDomainCouldHold()) return -1;
    return domains_.MostWhole(cluster_);
  }
  // Places pod k on the nodes of the fullest domain in use where it fits (among `only`, by node,
  // when given); false if it fits in none.
  bool PlaceInFullestDomain(size_t k, const std::vector<uint8_t>* only) {
    std::vector<uint8_t> mask;
    for (int d : domains_.FullestFirst(cluster_)) {
      if (domains_.pods(d) == 0) continue;  // empty: pods go there only when no domain in use fits
      const std::vector<uint8_t>* allowed = &domains_.nodes(d);
      if (only != nullptr) {
        mask = *allowed;
        for (size_t i = 0; i < mask.size(); ++i) mask[i] &= (*only)[i];
        allowed = &mask;
      }
      if (PlaceAmong(k, allowed)) return true;
    }
    return false;
  }
  // Places pod k among `allowed` (null: any node): a GPU pod where the policy picks; in a
  // topology-aware run a CPU-only pod where kube-scheduler's own scoring would, since gpusched
  // scores no pod without GPUs (prioritize answers []): KubeSchedulerScore, ties broken at
  // random.
  bool PlaceAmong(size_t k, const std::vector<uint8_t>* allowed) {
    if (!options_.topology_aware || Shape(k).uses_gpu()) return cluster_.Place(Shape(k), options_.selection, rng_, &where_[k], allowed);
    int best = -1;
    int64_t best_score = -1;
    uint64_t ties = 0;
    for (size_t i = 0; i < trace_.nodes.size(); ++i) {
      if ((allowed != nullptr && !(*allowed)[i]) || !scoring::Fits(Shape(k), cluster_.node(i))) continue;
      int64_t score = KubeSchedulerScore(Shape(k), cluster_.node(i));
      if (score > best_score) { best_score = score; best = static_cast<int>(i); ties = 1; }
      else if (score == best_score && rng_.Next() % ++ties == 0) best = static_cast<int>(i);  // a random one of the best
    }
    if (best < 0) return false;
    std::vector<uint8_t> one(trace_.nodes.size(), 0);
    one[best] = 1;
    return cluster_.Place(Shape(k), options_.selection, rng_, &where_[k], &one);
  }
  // As gpusched's GpusStrandedByOtherResources (domain_steering.h): node i has pods and a GPU
  // free, and the free share of its CPU or memory is below its free GPU share by more than one
  // GPU's share.
  bool GpusStrandedByOtherResources(size_t i) const {
    const scoring::NodeView& n = cluster_.node(i);
    if (n.gpu_count == 0 || domains_.whole(i) || n.IdleMilli() <= 0) return false;
    double bar = static_cast<double>(n.IdleMilli()) / (1000.0 * n.gpu_count) - 1.0 / n.gpu_count;
    auto below = [&](int64_t free, int64_t cap) {
      return cap > 0 && cap < scoring::kUntracked && static_cast<double>(free) / static_cast<double>(cap) < bar;
    };
    return below(n.cpu_free, n.cpu_cap) || below(n.mem_free, n.mem_cap);
  }
  void Unplace(size_t k) {
    domains_.Book(where_[k].node, -Shape(k).gpu_milli(), -1, !Steered(k));
    cluster_.Remove(Shape(k), where_[k]);
    std::vector<size_t>& on = on_node_[where_[k].node];
    on.erase(std::find(on.begin(), on.end(), k));
    --running_;
  }
  // Records that pod k, placed at `now`, waited since its arrival and leaves after its duration.
  void Started(size_t k, double now) {
    double waited = now - arrive_[k];
    pending_all_.push_back(waited);
    pending_[ClassOf(Shape(k))].push_back(waited);
    departures_.push({now + static_cast<double>(pods_[k].duration_s), k});
  }
  bool TryPlace(size_t k, double now) {
    if (!Place(k)) return false;
    Started(k, now);
    return true;
  }

  // Pods left `freed`: what waits is tried again in arrival order, as kube-scheduler's queue
  // orders pods of one priority: each waiting pod that now fits one of those nodes, and each
  // waiting gang. A gang that came first is placed before pods that came after it.
  void RetryWaiting(const std::vector<size_t>& freed, double now) {
    std::vector<size_t> still, gangs_still;
    size_t g = 0;
    for (size_t k : waiting_) {
      for (; g < gangs_waiting_.size() && gangs_[gangs_waiting_[g]].arrive <= arrive_[k]; ++g) {
        if (!TryPlaceGang(gangs_waiting_[g], now)) gangs_still.push_back(gangs_waiting_[g]);
      }
      bool fits = std::any_of(freed.begin(), freed.end(), [&](size_t n) { return scoring::Fits(Shape(k), cluster_.node(n)); });
      if (!fits || !TryPlace(k, now)) still.push_back(k);
    }
    for (; g < gangs_waiting_.size(); ++g) {
      if (!TryPlaceGang(gangs_waiting_[g], now)) gangs_still.push_back(gangs_waiting_[g]);
    }
    waiting_ = std::move(still);
    gangs_waiting_ = std::move(gangs_still);
  }

  // Pod k (or, from pods_.size() on, a gang) leaves at `now`; what waits is tried again.
  void Depart(size_t k, double now) {
    std::vector<size_t> freed;
    if (k < pods_.size()) {
      Unplace(k);
      freed.push_back(where_[k].node);
    } else {
      --gangs_running_;
      for (const PlacedPod& m : gang_where_[k - pods_.size()]) {
        domains_.Book(m.node, -member_.gpu_milli(), -1);
        cluster_.Remove(member_, m);
        freed.push_back(m.node);
      }
    }
    RetryWaiting(freed, now);
  }
  bool TryPlaceGang(size_t g, double now);
  double WaitForOneDomain();
  // Whether some domain has nodes enough for every member, each when empty. Cached.
  bool SomeDomainCouldHold() {
    if (could_hold_ < 0) {
      std::vector<int> hosts(domains_.count(), 0);
      for (size_t i = 0; i < trace_.nodes.size(); ++i) hosts[domains_.of(i)] += scoring::FitsEmpty(member_, trace_.nodes[i]) ? 1 : 0;
      could_hold_ = std::any_of(hosts.begin(), hosts.end(), [&](int h) { return h >= options_.gangs.members; });
    }
    return could_hold_ == 1;
  }
  bool PlaceMembers(const std::vector<uint8_t>* allowed, std::vector<PlacedPod>* where);

  void Defrag(double now);
  // True if pod k fits some node when it is empty (else no move makes room for it). Cached.
  bool FitsSomewhere(size_t k) {
    if (fits_somewhere_.empty()) fits_somewhere_.assign(pods_.size(), -1);
    int8_t& known = fits_somewhere_[k];
    if (known < 0) {
      known = std::any_of(trace_.nodes.begin(), trace_.nodes.end(), [&](const scoring::NodeView& n) { return scoring::FitsEmpty(Shape(k), n); });
    }
    return known == 1;
  }
  bool MakeRoom(size_t k, double now);
  bool MoveAndPlace(size_t k, const std::vector<size_t>& victims, double now);

  void SampleUntil(double t) {
    double capacity = static_cast<double>(trace_.capacity_milli);
    for (; next_sample_ <= t && t != kNever; next_sample_ += kSampleEvery) {
      alloc_.push_back(100.0 * (capacity - static_cast<double>(cluster_.idle_total())) / capacity);
      frag_.push_back(100.0 * cluster_.frag_total() / capacity);
      if (domains_.enabled() && options_.gangs.members > 0) stranded_.push_back(domains_.Stranded(cluster_, member_, options_.gangs.members));
    }
  }

  const PreparedTrace& trace_;
  const std::vector<TimelinePod>& pods_;
  const TimelineOptions& options_;
  Rng rng_;
  ReplayCluster cluster_;
  std::vector<PlacedPod> where_;
  std::vector<std::vector<size_t>> on_node_;  // the running pods of each node
  size_t running_ = 0;
  std::vector<double> arrive_;  // compressed arrival time, by pod
  std::vector<size_t> order_;   // pods by arrival
  double horizon_ = 0;          // the last arrival
  std::priority_queue<std::pair<double, size_t>, std::vector<std::pair<double, size_t>>, std::greater<>> departures_;
  std::vector<size_t> waiting_;  // in arrival order
  std::vector<int8_t> fits_somewhere_;  // FitsSomewhere's answers by pod: -1 not asked yet
  double next_sample_ = 0;
  double next_defrag_ = kNever;
  double budget_ = 0;           // moves the defrag may still make
  double budget_at_ = 0;        // when the budget was last topped up
  int moves_ = 0;
  std::vector<double> alloc_, frag_;  // samples, every kSampleEvery from 0
  std::vector<double> pending_all_;
  std::vector<double> pending_[kClasses];
  double end_ = 0;                // the last event's time
  Domains domains_;
  scoring::PodShape member_;      // a gang member's shape
  std::vector<GangJob> gangs_;    // by arrival
  size_t next_gang_ = 0;
  std::vector<std::vector<PlacedPod>> gang_where_;  // by gang, while it runs
  std::vector<size_t> gangs_waiting_;               // in arrival order
  std::vector<double> gang_waits_;                  // of the gangs placed
  int gangs_one_domain_ = 0;
  int gangs_running_ = 0;
  int8_t could_hold_ = -1;  // SomeDomainCouldHold's answer: -1 not asked yet
  std::vector<double> stranded_;  // Domains::Stranded at each sample
};

// Topology-aware: the fullest domain that holds every member; else, once the gang has waited
// gang_fallback_after_s for one (or when no domain ever could), the fewest domains (the fullest
// first); otherwise member by member where the policy picks. All or nothing.
bool Timeline::TryPlaceGang(size_t g, double now) {
  std::vector<PlacedPod>& where = gang_where_[g];
  bool placed = false;
  if (options_.topology_aware && domains_.enabled()) {
    std::vector<int> fullest = domains_.FullestFirst(cluster_);
    for (int d : fullest) {
      if ((placed = PlaceMembers(&domains_.nodes(d), &where))) break;
    }
    if (!placed && now - gangs_[g].arrive < WaitForOneDomain() && SomeDomainCouldHold()) return false;
    // No one domain holds it: the fewest domains, fullest first, rather than anywhere.
    std::vector<uint8_t> union_mask(trace_.nodes.size(), 0);
    for (size_t n = 0; !placed && n < fullest.size(); ++n) {
      const std::vector<uint8_t>& more = domains_.nodes(fullest[n]);
      for (size_t i = 0; i < more.size(); ++i) union_mask[i] |= more[i];
      placed = n > 0 && PlaceMembers(&union_mask, &where);
    }
  }
  if (!placed && !PlaceMembers(nullptr, &where)) return false;
  gang_waits_.push_back(now - gangs_[g].arrive);
  bool one_domain = domains_.enabled() && std::all_of(where.begin(), where.end(), [&](const PlacedPod& m) {
                      return domains_.of(m.node) == domains_.of(where.front().node);
                    });
  gangs_one_domain_ += one_domain ? 1 : 0;
  departures_.push({now + static_cast<double>(gangs_[g].duration_s), pods_.size() + g});
  ++gangs_running_;
  return true;
}

// As gpusched's DomainWaitOf: gang_drain_wait_s (when longer) while the domain kept for the
// waiting gangs runs no pod gpusched does not steer; else, and with gang_fallback_after_s 0,
// gang_fallback_after_s. Every waiting gang waits so, as in gpusched: the gangs behind the first
// are next for the domains that drain after its own.
double Timeline::WaitForOneDomain() {
  double wait = options_.gang_fallback_after_s;
  if (wait <= 0) return wait;
  int kept = KeptDomain();
  return kept >= 0 && domains_.unsteered(kept) == 0 ? std::max(wait, options_.gang_drain_wait_s) : wait;
}

bool Timeline::PlaceMembers(const std::vector<uint8_t>* allowed, std::vector<PlacedPod>* where) {
  int64_t room = 0;  // members the allowed nodes' idle GPUs could take at most
  for (size_t i = 0; i < trace_.nodes.size(); ++i) {
    if (allowed == nullptr || (*allowed)[i] != 0) room += cluster_.node(i).FullyFree() / member_.gpus;
  }
  where->clear();
  if (room < options_.gangs.members) return false;
  for (int m = 0; m < options_.gangs.members; ++m) {
    PlacedPod p;
    if (!cluster_.Place(member_, options_.selection, rng_, &p, allowed)) {
      for (const PlacedPod& back : *where) {
        domains_.Book(back.node, -member_.gpu_milli(), -1);
        cluster_.Remove(member_, back);
      }
      where->clear();
      return false;
    }
    domains_.Book(p.node, member_.gpu_milli(), 1);
    where->push_back(p);
  }
  return true;
}

void Timeline::Report(TimelineResult* r) const {
  r->never_placed = static_cast<int>(waiting_.size());
  r->moves = moves_;
  // Samples while pods arrive: the same window for every policy.
  size_t kept = std::min(alloc_.size(), static_cast<size_t>(horizon_ / kSampleEvery) + 1);
  std::vector<double> alloc(alloc_.begin(), alloc_.begin() + kept), frag(frag_.begin(), frag_.begin() + kept);
  double sum = 0;
  for (double a : alloc) sum += a;
  r->alloc_rate_mean = alloc.empty() ? 0 : sum / static_cast<double>(alloc.size());
  r->alloc_rate_p10 = Percentile(alloc, 0.10);
  double total_frag = 0;
  for (double f : frag) total_frag += f;
  r->frag_pct_mean = frag.empty() ? 0 : total_frag / static_cast<double>(frag.size());
  r->pending_p50_s = Percentile(pending_all_, 0.50);
  r->pending_p99_s = Percentile(pending_all_, 0.99);
  r->pending_max_s = pending_all_.empty() ? 0 : *std::max_element(pending_all_.begin(), pending_all_.end());
  r->pending_p99_s_sharing = Percentile(pending_[kSharing], 0.99);
  r->pending_p99_s_onegpu = Percentile(pending_[kOneGpu], 0.99);
  r->pending_p99_s_multigpu = Percentile(pending_[kMultiGpu], 0.99);
  r->alloc_rate = std::move(alloc);
  r->frag_rate = std::move(frag);
  ReportGangs(r, kept);
}

void Timeline::ReportGangs(TimelineResult* r, size_t samples) const {
  r->gangs = static_cast<int>(gangs_.size());
  r->gangs_placed = static_cast<int>(gang_waits_.size());
  std::vector<double> waits = gang_waits_;
  for (size_t g : gangs_waiting_) waits.push_back(end_ - gangs_[g].arrive);  // never placed: waited to the end
  r->gang_wait_p50_s = Percentile(waits, 0.50);
  r->gang_wait_p99_s = Percentile(waits, 0.99);
  r->gangs_one_domain_pct = gang_waits_.empty() ? 0 : 100.0 * gangs_one_domain_ / static_cast<double>(gang_waits_.size());
  size_t kept = std::min(stranded_.size(), samples);
  double sum = 0;
  for (size_t i = 0; i < kept; ++i) sum += stranded_[i];
  r->stranded_gpus_mean = kept == 0 ? 0 : sum / static_cast<double>(kept);
}

// Tops up the budget (defrag_budget_pct of the running pods per simulated hour, at most an hour's
// worth kept), then makes room for the waiting pods while it lasts: pods of several GPUs first
// (which fragmentation blocks most: a pod of one GPU or less mostly waits on capacity), each
// group oldest first.
void Timeline::Defrag(double now) {
  double per_hour = options_.defrag_budget_pct / 100.0 * static_cast<double>(running_);
  budget_ = std::min(per_hour, budget_ + per_hour * (now - budget_at_) / 3600.0);
  budget_at_ = now;
  std::vector<size_t> order;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t k : waiting_) {
      if ((Shape(k).gpus > 1) == (pass == 0) && FitsSomewhere(k)) order.push_back(k);
    }
  }
  size_t tried = 0;
  for (size_t i = 0; i < order.size() && budget_ >= 1 && tried < kDefragPods; ++i, ++tried) {
    if (MakeRoom(order[i], now)) waiting_.erase(std::find(waiting_.begin(), waiting_.end(), order[i]));
  }
}

// Finds the nodes where the fewest moves (within the budget) make room for pod k, and tries them
// in that order (then less GPU moved, then node) until the pod and every moved pod land.
bool Timeline::MakeRoom(size_t k, double now) {
  size_t most = std::min(kMaxMovesPerPod, static_cast<size_t>(budget_));
  std::vector<std::tuple<size_t, int64_t, size_t, std::vector<size_t>>> options;  // moves, milli, node, victims
  std::vector<RunningPod> on;
  for (size_t i = 0; i < on_node_.size(); ++i) {
    on.clear();
    for (size_t p : on_node_[i]) on.push_back(RunningPod{&Shape(p), &where_[p]});
    std::optional<std::vector<size_t>> room = RoomOnNode(Shape(k), cluster_.node(i), on);
    if (!room || room->empty() || room->size() > most) continue;
    std::vector<size_t> victims;
    int64_t milli = 0;
    for (size_t v : *room) {
      victims.push_back(on_node_[i][v]);
      milli += Shape(on_node_[i][v]).gpu_milli();
    }
    options.emplace_back(victims.size(), milli, i, std::move(victims));
  }
  std::sort(options.begin(), options.end());
  for (size_t t = 0; t < options.size() && t < kDefragNodes; ++t) {
    if (MoveAndPlace(k, std::get<3>(options[t]), now)) return true;
  }
  return false;
}

// Takes `victims` off their node, places pod k (it fits only there: nothing else changed), then
// each victim where the policy picks. Undoes everything if one does not land.
bool Timeline::MoveAndPlace(size_t k, const std::vector<size_t>& victims, double now) {
  std::vector<PlacedPod> was;
  for (size_t v : victims) {
    was.push_back(where_[v]);
    Unplace(v);
  }
  bool placed = Place(k);
  size_t landed = 0;
  while (placed && landed < victims.size() && Place(victims[landed])) ++landed;
  if (placed && landed == victims.size()) {
    Started(k, now);
    moves_ += static_cast<int>(victims.size());
    budget_ -= static_cast<double>(victims.size());
    return true;
  }
  for (size_t i = 0; i < landed; ++i) Unplace(victims[i]);
  if (placed) Unplace(k);
  for (size_t i = 0; i < victims.size(); ++i) {
    where_[victims[i]] = was[i];
    cluster_.Restore(Shape(victims[i]), was[i]);
    domains_.Book(was[i].node, Shape(victims[i]).gpu_milli(), 1, !Steered(victims[i]));
    on_node_[was[i].node].push_back(victims[i]);
    ++running_;
  }
  return false;
}

}  // namespace

StatusOr<std::vector<TimelinePod>> TimelinePods(std::vector<TracePod> pods) {
  std::sort(pods.begin(), pods.end(), [](const TracePod& a, const TracePod& b) { return a.name < b.name; });
  bool created = false, deleted = false;
  int64_t end = 0;
  for (const TracePod& p : pods) {
    created |= p.creation_time >= 0;
    deleted |= p.deletion_time >= 0;
    end = std::max({end, p.creation_time, p.deletion_time});
  }
  if (!pods.empty() && (!created || !deleted)) {
    return InvalidArgumentError(fmt::format("the trace has no {} column: timeline mode needs creation_time and deletion_time",
                                            created ? "deletion_time" : "creation_time"));
  }
  std::vector<TimelinePod> out;
  out.reserve(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) {
    int64_t from = std::max<int64_t>(0, pods[i].creation_time);
    int64_t to = pods[i].deletion_time >= from ? pods[i].deletion_time : end;  // still running: leaves at the end
    out.push_back(TimelinePod{.index = i, .created_s = from, .duration_s = std::max<int64_t>(1, to - from)});
  }
  return out;
}

double OfferedLoad(const PreparedTrace& trace, const std::vector<TimelinePod>& pods, double compress) {
  if (pods.empty() || trace.capacity_milli <= 0) return 0;
  auto [first, last] = std::minmax_element(pods.begin(), pods.end(),
                                           [](const TimelinePod& a, const TimelinePod& b) { return a.created_s < b.created_s; });
  double span = static_cast<double>(last->created_s - first->created_s);
  if (span <= 0) return 0;
  double asked = 0;  // GPU milli-seconds
  for (const TimelinePod& p : pods) asked += static_cast<double>(trace.pods[p.index].gpu_milli()) * static_cast<double>(p.duration_s);
  return asked * compress / (static_cast<double>(trace.capacity_milli) * span);
}

std::vector<TimelinePod> Inflate(const std::vector<TimelinePod>& pods, int copies, uint64_t seed) {
  std::vector<TimelinePod> out;
  if (pods.empty()) return out;
  auto [first, last] = std::minmax_element(pods.begin(), pods.end(),
                                           [](const TimelinePod& a, const TimelinePod& b) { return a.created_s < b.created_s; });
  double gap = static_cast<double>(last->created_s - first->created_s) / static_cast<double>(pods.size());
  Rng rng(seed ^ 0x9e3779b97f4a7c15ULL);
  out.reserve(pods.size() * static_cast<size_t>(copies));
  for (const TimelinePod& p : pods) {
    out.push_back(p);
    for (int c = 1; c < copies; ++c) {
      TimelinePod copy = p;
      copy.created_s += static_cast<int64_t>(rng.Unit() * gap);
      out.push_back(copy);
    }
  }
  return out;
}

double DefaultTimeCompress(const PreparedTrace& trace, const std::vector<TimelinePod>& pods) {
  double at_one = OfferedLoad(trace, pods, 1);  // the load grows linearly with the factor
  return at_one > 0 ? std::max(1.0, 1.0 / at_one) : 1.0;
}

TimelineResult RunTimeline(const PreparedTrace& trace, const std::vector<TimelinePod>& pods, const scoring::Scorer& scorer,
                           const TimelineOptions& options) {
  auto start = std::chrono::steady_clock::now();
  std::vector<TimelinePod> inflated = options.inflate > 1 ? Inflate(pods, options.inflate, options.seed) : std::vector<TimelinePod>{};
  const std::vector<TimelinePod>& replayed = options.inflate > 1 ? inflated : pods;
  double compress = options.time_compress > 0 ? options.time_compress : DefaultTimeCompress(trace, replayed);
  Timeline timeline(trace, replayed, scorer, options, compress);
  timeline.Run();
  TimelineResult r{.policy = std::string(scorer.Name()), .seed = options.seed, .pods = static_cast<int>(replayed.size()),
                   .time_compress = compress};
  timeline.Report(&r);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace gpusched::replay
