// File: inventory.h
//
// Inventory: the one owner of gpusched's mutable state: the nodes, the pods it knows, and the
// reservation book (reservation_book.h: allocations, bookings, holds and claims in flight, each
// with its time). Every mutation is a named command that returns a Status and publishes a new
// immutable InventorySnapshot; readers never block writers for longer than a pointer copy.
//
// Rebuild rule: a bound, non-terminal GPU pod observed from the cluster books what its requests
// and result annotations say (AllocationOrigin::kObserved). A pod gpusched bound itself books at
// Commit (kCommitted) and keeps that booking until the cluster reports the pod bound (it then
// becomes observed), terminal or deleted, or still unbound after options.assume_ttl. A node's
// bookings annotation (Node::bookings, written by any gpusched replica before it binds) books
// each listed pod that holds nothing else here (kBooked) until the pod is seen bound, finished or
// deleted, the annotation drops it, or it is older than options.booking_ttl. A pod UID holds at
// most one allocation.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gpusched/common/clock.h"
#include "gpusched/common/mutex.h"
#include "gpusched/common/status.h"
#include "gpusched/inventory/annotated_nodes.h"
#include "gpusched/inventory/group_table.h"
#include "gpusched/inventory/kueue_table.h"
#include "gpusched/inventory/pod_table.h"
#include "gpusched/inventory/reservation_book.h"
#include "gpusched/inventory/snapshot.h"
#include "gpusched/inventory/snapshot_publisher.h"
#include "gpusched/model/names.h"
#include "gpusched/inventory/use_table.h"
#include "gpusched/dra/cel.h"
#include "gpusched/model/allocation.h"
#include "gpusched/inventory/cluster_objects.h"
#include "gpusched/model/node.h"
#include "gpusched/model/node_uses.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/nomination.h"

namespace gpusched::inventory {

struct InventoryStats {
  size_t ledger_size = 0;   // allocations booked
  size_t pods_known = 0;    // pods known, bound and pending (with a record or by their allocation alone)
  size_t pending_pods = 0;  // pods seen in filter and not bound
  size_t dra_objects = 0;   // ResourceSlices, ResourceClaims and DeviceClasses held for DRA
  size_t unreadable = 0;    // entries of Errors(): objects with a field that could not be read

  bool operator==(const InventoryStats&) const = default;
};

struct InventoryOptions {
  // Pods seen in filter and not bound are remembered so that bind (which carries only names and
  // the UID) can be served; the oldest are forgotten beyond this many. Default: 100000.
  size_t max_pending_pods = 100000;
  // A booking made by bind is kept while the cluster source does not show the pod bound yet; if
  // the source still reports the pod unbound this long after the bind, the bind did not happen
  // and the booking is released. Default: 10 minutes.
  std::chrono::seconds assume_ttl{600};
  // How long a node's booking counts without the pod being seen bound. It must exceed the time
  // from a booking to the pod's bind event reaching every replica. Default: 5 minutes.
  std::chrono::seconds booking_ttl{300};
  // How long GPUs stay held for a pod nominated to a node after preemption (nomination.h) if it
  // neither binds nor loses its nomination, counted from when the last pod of lower priority
  // terminating on the node (its victims, whatever their grace period) is gone: the pod's retry
  // must fit in it. It then still counts against the node's other resources (NodeState::nominated).
  // Default: 5 minutes.
  std::chrono::seconds nomination_ttl{300};
  // The time of assume_ttl (monotonic) and booking_ttl (wall: bookings carry the writer's wall
  // time). Not owned; must outlive the inventory. Default: RealClock().
  const Clock* clock = &RealClock();
  // DRA drivers whose devices are GPUs: a bound pod holding such devices through its claims is
  // a GPU pod of the nvidia-dra mode (in the ledger, and blocking a mode switch of its node).
  std::vector<std::string> dra_gpu_drivers = {"gpu.nvidia.com"};
  // The kube-scheduler profile gpusched serves (ServiceOptions::scheduler_name, set with it from
  // the config): bound pods that name another are marked PodUse::kOtherScheduler. "": none is.
  std::string scheduler_name = std::string(names::kDefaultScheduler);
};

// A hold HoldFor made: as the node annotation gpusched.io/holds carries it, and the
// resourceVersion of the node object it was checked against (the precondition of writing it).
// `replaced_node` names the node of the hold about the same pod that this one replaced, when it
// was another node (its annotation still has it): this replica's, or another replica's hold kept
// for the same pending pod.
struct HoldMade {
  NodeHold hold;
  std::string node_version;
  std::string replaced_node;
};

class Inventory {
 public:
  explicit Inventory(InventoryOptions options = {});
  Inventory(const Inventory&) = delete;
  Inventory& operator=(const Inventory&) = delete;

  // Replaces the held ResourceClaim of `claim`'s namespace and name with `claim`: owner mode's
  // claim writes in snapshot mode. The held claim must be at `expected_version` (its
  // resourceVersion when the writer read it). The new DRA state is built outside the lock.
  // Errors: Aborted if the claim is gone or changed meanwhile.
  Status ReplaceDraClaim(dra::ResourceClaim claim, std::string_view expected_version) GPUSCHED_EXCLUDES(mu_);
  // Adds `claim`, which must not exist yet, and records `pod` as updated, in one snapshot: owner
  // mode's special claim for extended resources (created, allocated, and named in the pod's
  // status) in snapshot mode. Errors: Aborted if a claim of that name is held or the DRA objects
  // changed meanwhile.
  Status CreateDraClaim(dra::ResourceClaim claim, Pod pod) GPUSCHED_EXCLUDES(mu_);

  // Returns the current snapshot. Never null.
  std::shared_ptr<const InventorySnapshot> Snapshot() const { return snapshot_.load(); }

  // Replaces the whole cluster view with `objects` (a snapshot file was (re)read). The ledger is
  // rebuilt from the pods; allocations gpusched committed for pods that `objects` does not show
  // bound elsewhere or finished are kept.
  void ReplaceCluster(ClusterObjects&& objects) GPUSCHED_EXCLUDES(mu_);

  // Applies the changes of a watching cluster source atomically; publishes one snapshot if
  // anything changed.
  void Apply(ClusterDelta&& delta) GPUSCHED_EXCLUDES(mu_);

  // Kueue's objects (kueue_table.h): ReplaceCluster replaces them; a live source's watches change
  // them. Apart from the snapshot: no placement reads them, only the admission check and explain.
  KueueTable& kueue() { return kueue_; }
  const KueueTable& kueue() const { return kueue_; }

  // Releases bookings past their TTL (kCommitted past assume_ttl with the pod not seen bound, the
  // node recorded for a pod bound without GPUs of its own likewise,
  // kBooked past booking_ttl) and forgets old deletions. Returns how many bookings it released.
  // A live cluster source calls it every few seconds.
  size_t Expire() GPUSCHED_EXCLUDES(mu_);

  // Inserts or updates nodes; publishes a new snapshot only if one of them changed.
  // Returns how many nodes changed.
  size_t UpsertNodes(std::vector<Node>&& nodes) GPUSCHED_EXCLUDES(mu_);
  void DeleteNode(std::string_view name) GPUSCHED_EXCLUDES(mu_);

  // Records a pod as the cluster reports it (bound or not, any phase).
  void UpsertPod(Pod&& pod) GPUSCHED_EXCLUDES(mu_);
  void DeletePod(std::string_view uid) GPUSCHED_EXCLUDES(mu_);

  // Remembers a pod seen in filter, unless a record of it already says more (bound).
  void RememberPod(Pod&& pod) GPUSCHED_EXCLUDES(mu_);

  // Returns counts of what the inventory holds now.
  InventoryStats Stats() const GPUSCHED_EXCLUDES(mu_);

  // Returns the objects that could not be read, each naming the object, the field and the value:
  // those a snapshot left out, nodes with a spec_error, pods with a spec_error. Sorted.
  std::vector<std::string> Errors() const GPUSCHED_EXCLUDES(mu_);

  // Returns the pod record for `uid`, or nullopt. A bound pod known by its allocation alone
  // (ObservePodLocked) gets a record with its uid, namespace, name, node, priority, whether it is
  // terminating, and phase Running.
  std::optional<Pod> FindPod(std::string_view uid) const GPUSCHED_EXCLUDES(mu_);
  // Returns the UID of the pod `ns`/`name` gpusched knows (a record or an allocation), or
  // nullopt. Scans every pod: for explain, not for the verbs.
  std::optional<std::string> FindUid(std::string_view ns, std::string_view name) const GPUSCHED_EXCLUDES(mu_);
  // Returns the allocation `uid` holds, or nullopt.
  std::optional<Allocation> AllocationOf(std::string_view uid) const GPUSCHED_EXCLUDES(mu_);

  // Books `placement` for `pod` on `node`, atomically, after checking that it still fits the
  // node as it is now; records the node name and result annotations on the pod record. If
  // `checked` is not null, it receives the node object the check was made against (its
  // resourceVersion and bookings are the precondition of a replica-safe bind).
  // Errors: NotFound (unknown node), FailedPrecondition (it no longer fits, or the pod already
  // holds an allocation).
  [[nodiscard]] Status Commit(const Pod& pod, const std::string& node, const Placement& placement,
                              Node* checked = nullptr) GPUSCHED_EXCLUDES(mu_);

  // Drops the booking Commit made for `uid` (a bind that failed after Commit), or for a pod
  // Commit bound without GPUs of its own (claims only, or nothing) the node it recorded. What the
  // cluster has reported since (the pod seen bound) stays. OK if there was none.
  void Release(std::string_view uid) GPUSCHED_EXCLUDES(mu_);

  // Holds `placement` on `node` for `holder`: ControllerHoldKey(c) for the next pod of controller
  // c, the replacement of `about`, a pod a defrag move evicts (extender/defrag.h), whatever its
  // name and UID; or a pending pod's UID, for the room a defrag plan made for `about`, that pod.
  // Every other pod sees the GPUs as used (placement/nomination.h). The hold ends when a pod it
  // is for is committed to the node, on DropHold(about.pod_uid), or after `ttl`. The placement
  // must fit the node once its terminating pods and the pods `leaving` (those the plan evicts)
  // are gone, beside the holds already there.
  // The hold returned is what the replica writes to the node's annotation (kubejson/node_holds.h)
  // for every replica: `present` lists the controller's pods bound on the node now.
  // Holds in nodes' annotations count like this replica's own (a hold about the same pod once):
  // each while it is fresh and its pod has not been seen bound (model/node.h NodeHold); once seen
  // used, a hold stays ended here.
  // Errors: NotFound (unknown node), FailedPrecondition (the placement does not fit so, or a
  // hold kept for the pod it is about while that pod holds GPUs already: bound or being bound).
  [[nodiscard]] StatusOr<HoldMade> HoldFor(const std::string& holder, const Allocation& about, const std::string& node,
                               const Placement& placement, std::chrono::seconds ttl,
                               const std::set<std::string, std::less<>>& leaving = {}) GPUSCHED_EXCLUDES(mu_);
  // Ends the hold kept about pod `about_uid` (a move that failed), and its copy in a node
  // annotation here. OK if none.
  void DropHold(std::string_view about_uid) GPUSCHED_EXCLUDES(mu_);

  // Returns f(reservations, latest) with the inventory's lock held: DRA owner mode's claim
  // reservations (inventory/claim_reservations.h) and the DRA state the inventory holds now, which
  // a reservation is checked against. `f` must not call the inventory.
  template <typename F>
  auto WithClaimReservations(F&& f) GPUSCHED_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return f(book_.claims(), static_cast<const dra::ClusterState&>(*dra_state_));
  }

 private:
  struct NodeEntry {
    Node spec;
    NodeStatePtr state;
  };

  void ApplyLocked(ClusterDelta&& delta) GPUSCHED_REQUIRES(mu_);
  // Applies `next` (built from `base` outside the lock) with `pods`, unless the DRA state moved
  // on from `base` meanwhile (Aborted).
  Status SwapDraStateLocked(const dra::ClusterStatePtr& base, dra::ClusterStatePtr next, std::vector<Pod> pods) GPUSCHED_REQUIRES(mu_);
  // The parts of ApplyLocked. Each adds the nodes whose state must be rebuilt to *touched and
  // returns whether anything changed.
  // *remode gets the nodes new or with another mode label or allocatable (ServedThroughDra's inputs).
  bool ApplyNodesLocked(ClusterDelta* delta, std::set<std::string>* touched, std::set<std::string>* respec,
                        std::set<std::string>* remode) GPUSCHED_REQUIRES(mu_);
  bool ApplyPodsLocked(ClusterDelta* delta, std::set<std::string>* touched) GPUSCHED_REQUIRES(mu_);
  // Records what the cluster reports of `pod`. A bound pod whose GPUs the ledger then holds as
  // observed, without claims or a spec error, keeps no pod record: its allocation names it
  // (uid, namespace, name, node), and at 300,000 bound pods a record each costs over 100 MB.
  void ObservePodLocked(Pod&& pod, std::set<std::string>* touched) GPUSCHED_REQUIRES(mu_);
  // Holds: a pending pod's nomination set, moved or ended (nomination.h).
  void ApplyPendingLocked(ClusterDelta* delta, std::set<std::string>* touched) GPUSCHED_REQUIRES(mu_);
  void NominateLocked(Pod&& pod, std::set<std::string>* touched) GPUSCHED_REQUIRES(mu_);
  // Defrag holds (HoldFor) of `node`, this replica's and those in the node's annotation that
  // count (LiveAnnotatedHoldsLocked), to book on its state; annotated_ records which.
  std::vector<Allocation> DefragHoldsLocked(const std::string& node) GPUSCHED_REQUIRES(mu_);
  // The annotated holds of `node` that count now: fresh, not about a pod this replica holds for
  // itself, and not used. Used: the pending pod bound (anywhere); for a controller, each pod of
  // it bound on the node that was neither present nor a moved pod uses one hold, the oldest first.
  // A pod committed or booked and not yet seen bound takes its GPUs from the hold, which counts
  // again if that bind fails; once the pod is seen bound, the hold is remembered as ended
  // (ReservationBook::EndAnnotated) until its time is up.
  std::vector<const NodeHold*> LiveAnnotatedHoldsLocked(const std::string& node) GPUSCHED_REQUIRES(mu_);
  // The pod that uses annotated hold `h` on `node` ("" if none yet): its pending pod once
  // committed, booked or bound anywhere; for a controller, its first pod on the node that is not a
  // moved pod, not present when the hold was made, and not yet `taken` (which it joins).
  std::string PodUsingLocked(const NodeHold& h, const std::string& node, const std::set<std::string, std::less<>>& moved,
                             std::set<std::string, std::less<>>* taken) const GPUSCHED_REQUIRES(mu_);
  // The node other than `except` whose annotation holds a hold about pod `about_uid` that counts
  // here (another replica's), or "".
  std::string AnnotatedHoldNodeLocked(std::string_view about_uid, std::string_view except) const GPUSCHED_REQUIRES(mu_);
  // True if the cluster has shown pod `uid` bound (not just booked or committed here).
  bool SeenBoundLocked(std::string_view uid) const GPUSCHED_REQUIRES(mu_);
  // The controller's pods bound on `node` now (committed here or seen), sorted ("": none).
  std::vector<std::string> PodsOfControllerLocked(std::string_view controller_uid, const std::string& node) const
      GPUSCHED_REQUIRES(mu_);
  // Forgets held nodes past their time; touches the nodes whose annotated holds that count
  // changed.
  void ExpireAnnotatedHoldsLocked(std::set<std::string>* touched) GPUSCHED_REQUIRES(mu_);
  // `touched` with the nodes whose annotated holds that count changed since their state was built
  // (one ran out, was used, or a bind that used one failed), or an empty set when there are none
  // beyond `touched` (cheap when no node holds annotated holds).
  std::set<std::string> WithChangedHoldNodesLocked(const std::set<std::string>& touched) GPUSCHED_REQUIRES(mu_);
  // `pod` was committed to, or newly seen bound on, `node`: ends this replica's hold kept for it
  // (wherever it was kept), or one kept on `node` for its controller's next pod unless `pod` is
  // the moved pod itself (its own hold first, else the oldest). Annotated holds it uses, anywhere,
  // are found by the rebuild (WithChangedHoldNodesLocked).
  void UseHoldLocked(const Pod& pod, const std::string& node, std::set<std::string>* touched) GPUSCHED_REQUIRES(mu_);
  // True if a pod bound to `node` of lower priority than `priority` is terminating (a
  // preemption's victims still leaving).
  bool VictimsLeavingLocked(std::string_view node, int32_t priority) const GPUSCHED_REQUIRES(mu_);
  // PodDisruptionBudgets: returns true if they changed.
  bool ApplyBudgetsLocked(ClusterDelta* delta) GPUSCHED_REQUIRES(mu_);
  // uses_.Track, adding the node to `touched` if its uses changed.
  void TrackUseLocked(const Pod& pod, std::set<std::string>* touched) GPUSCHED_REQUIRES(mu_);
  // `touched` may be null when the caller rebuilds the node anyway.
  void DropUseLocked(std::string_view uid, std::string_view node, std::set<std::string>* touched) GPUSCHED_REQUIRES(mu_);
  // The node a pod is known on (its allocation's, else its record's), "" if none.
  std::string NodeOfLocked(std::string_view uid) const GPUSCHED_REQUIRES(mu_);
  // ObservePodLocked's work, without keeping allocation_only_ (its caller does).
  void ObserveLocked(Pod&& pod, std::set<std::string>* touched) GPUSCHED_REQUIRES(mu_);
  // True if the pod's GPU resources come through a special claim (KEP 5004): a pending pod whose
  // status names one; a bound pod whose named claim is allocated, or whose named claim is not
  // (yet) allocated or whose bind by this gpusched the cluster does not show yet, on a node where
  // DRA serves them (dra/extended_resources.h). Then it holds what the claim holds, never
  // device-plugin GPUs. A pod the cluster shows bound without a named claim never does.
  bool ExtendedThroughDraLocked(const Pod& pod, const placement::PodRequest& request) const GPUSCHED_REQUIRES(mu_);
  // True if what a bound pod holds depends on objects other than itself (its claims, its special
  // claim and node, or this gpusched's bind): such a pod keeps its record, and is observed again
  // when those objects change, so that the order objects arrive in never changes the inventory.
  bool DependsOnOthersLocked(const Pod& pod) const GPUSCHED_REQUIRES(mu_);
  // Observes again the recorded pods that DependsOnOthersLocked, but those in `skip`: all of them
  // if the DRA objects changed, else those whose special claim is judged by their node and that
  // are bound to one of `nodes`.
  void ReobserveLocked(bool dra_changed, const std::set<std::string>& nodes, const std::set<std::string>& skip,
                       std::set<std::string>* touched) GPUSCHED_REQUIRES(mu_);
  // True if `uid` is known by its observed allocation alone (no pod record).
  bool AllocationOnlyLocked(std::string_view uid) const GPUSCHED_REQUIRES(mu_);
  // Erases a pod the cluster no longer has, with its allocation; remembers the deletion.
  void ForgetPodLocked(const std::string& uid, std::set<std::string>* touched) GPUSCHED_REQUIRES(mu_);
  // Takes back the node Commit recorded for `uid` (a bare commitment): the pod is pending again.
  void RevertBareLocked(const std::string& uid, std::set<std::string>* touched) GPUSCHED_REQUIRES(mu_);
  // Drops the allocation of `uid` with its timestamps; if it was our own booking (kCommitted), the
  // pod record loses the node and result annotations Commit gave it. Returns the node.
  std::string UnbookLocked(const std::string& uid) GPUSCHED_REQUIRES(mu_);
  // Makes the kBooked allocations on `node` match its bookings annotation.
  void SyncBookingsLocked(const std::string& node, std::set<std::string>* touched) GPUSCHED_REQUIRES(mu_);
  // Returns the nodes with bookings to keep in sync: a bookings annotation, or extra bookings.
  std::set<std::string> BookedNodesLocked() const GPUSCHED_REQUIRES(mu_);
  // Rebuilds the states of `touched` and stamps them for the next PublishLocked.
  void RebuildLocked(const std::set<std::string>& touched) GPUSCHED_REQUIRES(mu_);
  // Publishes a snapshot: the last table with the rebuilt states swapped in, or a new table (and
  // name index) when nodes were added or removed.
  void PublishLocked(bool node_set_changed) GPUSCHED_REQUIRES(mu_);

  const InventoryOptions options_;

  mutable Mutex mu_;
  std::map<std::string, NodeEntry, std::less<>> nodes_ GPUSCHED_GUARDED_BY(mu_);
  PodTable pods_ GPUSCHED_GUARDED_BY(mu_);
  // ClusterObjects::errors of the last ReplaceCluster.
  std::vector<std::string> load_errors_ GPUSCHED_GUARDED_BY(mu_);
  size_t allocation_only_ GPUSCHED_GUARDED_BY(mu_) = 0;  // pods known by their allocation alone
  // What each pod holds and until when: observed, committed and booked allocations, bare
  // commitments (pods Commit recorded on a node without GPUs of their own: Release takes the node
  // back), second bookings, pods gone, defrag holds (GPUs held for the replacements of pods a
  // defrag move evicted, and for the pods their moves made room for), annotated holds that ended
  // here (kept while any hold that was on the node when it ended could still claim that pod).
  ReservationBook book_ GPUSCHED_GUARDED_BY(mu_);
  // The nodes with bookings or holds annotations, and the annotated holds (EndedKey) each node's
  // state counts.
  AnnotatedNodes annotated_ GPUSCHED_GUARDED_BY(mu_);
  // Every bound pod's use of its node besides GPUs, the label sets, the budgets.
  UseTable uses_ GPUSCHED_GUARDED_BY(mu_);
  // The pod groups (gangs) the cluster declares.
  GroupTable groups_ GPUSCHED_GUARDED_BY(mu_);
  // Plans the holds of the pods nominated to a node, at each rebuild of it.
  placement::NominationHolds nomination_holds_ GPUSCHED_GUARDED_BY(mu_);
  dra::ClusterStatePtr dra_state_ GPUSCHED_GUARDED_BY(mu_);  // the DRA objects, as the source built them
  SnapshotPublisher publisher_ GPUSCHED_GUARDED_BY(mu_);

  std::atomic<std::shared_ptr<const InventorySnapshot>> snapshot_;
  KueueTable kueue_;  // its own lock
};

}  // namespace gpusched::inventory
