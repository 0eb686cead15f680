// File: service_options.h
//
// What the extender service is configured with (ServiceOptions: config::Config fills it from the
// file and the flags) and whom it acts through (ServiceCollaborators: wired by the command that
// runs it, or by a test).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "gpusched/common/clock.h"
#include "gpusched/extender/claim_writer.h"
#include "gpusched/extender/event_sink.h"
#include "gpusched/extender/hold_publisher.h"
#include "gpusched/extender/kueue_writer.h"
#include "gpusched/extender/pod_binder.h"
#include "gpusched/extender/pod_evictor.h"
#include "gpusched/extender/pod_nominator.h"
#include "gpusched/model/names.h"
#include "gpusched/placement/dra_planner.h"
#include "gpusched/placement/policy.h"
#include "gpusched/placement/score_mapping.h"

namespace gpusched::extender {

class Telemetry;

struct ServiceOptions {
  // Which node a pod goes to: any scoring policy (scoring/scorer.h). Default: binpack.
  std::string node_policy = "binpack";
  // The kube-scheduler profile gpusched serves (schedulerName): a gang whose pods name another
  // scheduler has no domain kept for it (gang_reservation.h). Default: the shipped profile's.
  std::string scheduler_name = std::string(names::kDefaultScheduler);
  placement::PlacementOptions placement;  // which GPUs inside the node
  placement::ScoreMapping score_mapping = placement::ScoreMapping::kRank;  // Default: rank.
  // When > 0, filter keeps only the best K fitting nodes (the rest go to FailedNodes with a
  // reason), so the policy's order decides even where 0-10 scores would tie. Default: 0 (off).
  size_t filter_top_k = 0;
  // Commit attempts for one bind when concurrent binds keep changing the node. Default: 16.
  int bind_attempts = 16;
  // No new attempt starts after this long (keep it below kube-scheduler's httpTimeout, 10 s in
  // scheduler-config/). Default: 6 s.
  std::chrono::seconds bind_deadline{6};
  // DRA placement (gpu drivers, search bound, topology attribute).
  placement::DraOptions dra;
  // Extended resources a DeviceClass maps (KEP 5004, dra/extended_resources.h) are served
  // through DRA on nvidia-dra nodes whose allocatable does not list them; needs kube-scheduler's
  // DRAExtendedResource feature gate. False: such pods are device-plugin pods on every node.
  // Default: true.
  bool dra_extended_resources = true;
  // DRA owner mode writes the device set kube-scheduler's allocator would pick (the compatible
  // choice: devices in published order) instead of gpusched's ranked one. Not a configuration
  // key: the replay's `upstream` baseline uses it to measure what gpusched's choice gains.
  bool dra_upstream_devices = false;
  // DRA owner mode: a claim allocated for pods none of which has bound after this long is
  // unreserved and deallocated (Service::SweepClaims): kube-scheduler would have undone it in
  // Unreserve or PostFilter. Default: 300 s.
  std::chrono::seconds dra_release_after{300};
  // DRA owner mode: how long bind waits, over kube-scheduler's retries, for the binding conditions
  // of allocated devices (dra/binding_conditions.h) before it deallocates them. Default: 600 s,
  // kube-scheduler's own.
  std::chrono::seconds dra_binding_timeout{600};
  // An applied defrag plan (defrag.h) holds the GPUs it gives each moved pod's replacement, and
  // the pending pod, this long at most. Default: 300 s.
  std::chrono::seconds defrag_hold_ttl{300};
  // Gangs (gang_holds.h, docs/gangs.md): whether the members of a pod group that is a gang are
  // planned together, held and steered into their slots (false: each member is judged alone, as
  // before gangs), and how long a plan's holds last unless renewed. Default: on, 300 s.
  bool gangs = true;
  std::chrono::seconds gang_hold_ttl{300};
  // Whether each member's slot is suggested to kube-scheduler as the member's
  // status.nominatedNodeName (pod_nominator.h, KEP-5278), through ServiceCollaborators::nominator.
  // Default: off.
  bool gang_nominate = false;
  // Topology levels, lowest first: node label keys whose values name domains (an NVLink clique,
  // a block or rack, a zone). A gang goes inside one domain of the lowest level where one can
  // hold it (gang_domains.h). Empty: gangs are planned across the cluster. Default: GPU Feature
  // Discovery's clique, topograph's block, the zone.
  std::vector<std::string> topology_levels = {"nvidia.com/gpu.clique", "network.topology.nvidia.com/block",
                                              "topology.kubernetes.io/zone"};
  // Whether filter keeps GPU pods outside groups in the fullest domain in use of the lowest level
  // (domain_steering.h), so that whole domains stay free for gangs. Default: on.
  bool topology_steer = true;
  // Whether, with topology_steer, a domain is kept for the first gang that waits for room
  // (gang_reservation.h): pods outside gangs of its priority or lower stay off the domain with the
  // most whole nodes until the gang is placed. Default: on.
  bool topology_reserve = true;
  // How long a gang that no one domain holds waits for one, counted from its oldest pending
  // member's creationTimestamp, before it is planned across domains (gang_domains.h), as Slurm's
  // --switches=N@max-time waits before relaxing (its max_switch_wait: 300 s). Only where some
  // domain is large enough to hold the gang when empty. 0: falls back at once. Default: 300 s.
  std::chrono::seconds topology_fallback_after{300};
  // How long instead, at the first level, when longer, while the domain kept for the first waiting
  // gang drains (DomainReservation::drains: no node of it runs a pod of another scheduler, and
  // gpusched keeps its own pods of the gang's priority or lower off it): the wait then mostly lets
  // running pods end. Where pods of other schedulers run in the domain, more of them may come, and
  // topology_fallback_after applies (also when it is 0). In the marin replay (docs/replay.md) 4
  // hours keeps 92% of gangs in one domain against 89% at 300 s, with a lower gang p99. 0 (or
  // below topology_fallback_after): never longer. Default: 4 hours.
  std::chrono::seconds topology_drain_wait{14400};
  // Kueue's admission check (kueue_check.h, docs/kueue.md): the spec.controllerName of the
  // AdmissionChecks gpusched decides (kueue.controllerName).
  std::string kueue_controller_name = "gpusched.io/gpu-placement";
  // How long a Ready Workload's plan stays held for its pods (kueue.holdSeconds), and when a
  // Workload set to Retry is asked to come back (kueue.retryAfterSeconds, the check's
  // requeueAfterSeconds).
  std::chrono::seconds kueue_hold_ttl{300};
  std::chrono::seconds kueue_retry_after{60};
  // Whether a Workload with a pod that no node of the cluster could hold even empty is Rejected
  // (kueue.rejectUnplaceable). Off where node pools scale to zero: a node that is missing now may
  // come, and such Workloads get Retry instead.
  bool kueue_reject_unplaceable = true;
};

// True if a domain is kept for the first waiting gang (gang_reservation.h): gangs, topology.steer
// and topology.reserveForGangs on, and some topology level configured.
inline bool ReservesForGangs(const ServiceOptions& o) {
  return o.gangs && o.topology_steer && o.topology_reserve && !o.topology_levels.empty();
}

// Not owned: each must outlive the service. Null means "not there".
struct ServiceCollaborators {
  // Makes a booked bind real in the cluster; null: bind books in memory only (snapshot mode).
  PodBinder* binder = nullptr;
  // Told about pods that fit no node.
  EventSink* events = nullptr;
  // Evicts the pods of an applied defrag plan (defrag.h); null: plans are dry runs only.
  PodEvictor* evictor = nullptr;
  // Makes an applied plan's holds known to every replica; null: they live in this one's memory.
  HoldPublisher* hold_publisher = nullptr;
  // Writes a gang member's slot as its status.nominatedNodeName (with gang_nominate); null: never.
  PodNominator* nominator = nullptr;
  // DRA owner mode (dra.md §5.3 C): bind allocates the pod's claims (the ranked choice) through
  // this writer before binding. Null: advisory mode, kube-scheduler's plugin allocates.
  ClaimWriter* claim_writer = nullptr;
  // Writes the state of gpusched's Kueue AdmissionChecks (kueue_admission.h); null: the check
  // decides nothing (snapshot mode), explain --workload still judges.
  KueueWriter* kueue_writer = nullptr;
  // Decision and bind counters.
  Telemetry* telemetry = nullptr;
  // The time of bind deadlines and of the workload's refresh.
  const Clock* clock = &RealClock();
  // Test seam: called by bind after it planned and before it commits, so that a test can make
  // concurrent binds all plan on the same inventory. Default: none.
  std::function<void()> before_commit;
};

}  // namespace gpusched::extender
