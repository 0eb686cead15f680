// File: kueue_check.h
//
// gpusched's Kueue admission check (issue 35, docs/kueue.md): a Workload whose quota Kueue has
// reserved is judged before any of its pods exists, as one group, by the gang planner
// (placement/gang_planner.h) on the cluster as it is now: every pod its admission makes (the
// admitted count of each pod set, partial admission's included), each from its pod set's template
// with the node labels and tolerations of the flavors assigned to it, with every kind of GPU
// request and the node fit a real pod gets. Kueue counts quota in aggregate; this check asks
// whether the pods can really be placed, all of them at once:
//   - Ready: they fit together; the plan gives each pod its node and GPUs.
//   - Retry: they do not fit now; the message says why, in explain's words.
//   - Rejected: some pod set's pod fits no node even with every node empty, Ready and without
//     cordons or taints, while every node's GPUs can be judged and none serves DRA (unless
//     kueue.rejectUnplaceable is off: Retry then); or a template cannot be read (Kueue then
//     deactivates the Workload until someone reactivates it).
//   - Pending: quota is not reserved, the Workload is finished or evicted, or a flavor it names
//     has not been read: nothing to write. A claim template not known is Retry (the check acts only
//     once its watches listed: it does not exist, or cannot be read).
//
// Where topology levels are configured (topology.levels) and Kueue's topology scheduling assigns
// no domain, the pods are planned inside one domain as a gang is (gang_domains.h), without the
// gang's wait: a Workload that no one domain holds is planned across domains at once.
//
// Pure: the verdict depends only on the arguments.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/extender/pod_evaluation.h"
#include "gpusched/inventory/kueue_table.h"
#include "gpusched/model/kueue.h"
#include "gpusched/placement/gang_planner.h"

namespace gpusched::extender {

using KueueFlavors = std::map<std::string, kueue::ResourceFlavor, std::less<>>;

// The UID gpusched gives pod `ordinal` of pod set `pod_set` of Workload `w` until the real pod
// exists: "kueue/<namespace>/<workload>/<pod set>/<ordinal>". Holds are kept under it.
std::string AdmittedPodUid(const kueue::Workload& w, std::string_view pod_set, int32_t ordinal);

// The pods the admission of `w` makes, pod set by pod set: AdmittedCount copies of the pod set's
// template, named "<workload>-<pod set>-<ordinal>" with AdmittedPodUid, the Workload's priority,
// label kueue.x-k8s.io/podset, and in their nodeSelector and tolerations what Kueue will give
// them: the node labels and tolerations of each flavor the pod set is assigned, those of the
// Ready checks' podSetUpdates, and the labels of the domain Kueue's topology scheduling assigned
// each (the domains taking their counts of pods in order). Errors: NotFound naming a flavor
// `flavors` lacks.
StatusOr<std::vector<Pod>> AdmittedPods(const kueue::Workload& w, const KueueFlavors& flavors);

struct WorkloadVerdict {
  kueue::CheckState state = kueue::CheckState::kPending;
  std::string message;
  std::vector<Pod> pods;    // AdmittedPods, when they could be made
  placement::GangPlan plan;  // of `pods`; when Ready, one slot per pod in their order
  // Where topology levels are configured and Kueue's topology scheduling assigns no domain: the
  // one domain the plan lies in (gang_domains.h: the fullest of the lowest level that holds it
  // all), as its label key and value; "" when planned across domains.
  std::string domain_key, domain_value;
  // False while Kueue's topology scheduling has yet to assign the domains (delayedTopologyRequest
  // Pending): the pods will go where Kueue sends them, so a Ready plan is a test of feasibility
  // and is not held.
  bool holdable = true;
};

// Judges `w` on inputs.snapshot under inputs.options, as above, its flavors and claim templates
// from `kueue`. Pods whose claims come from ResourceClaimTemplates are judged with the claims
// those templates would make. Pending (nothing to write) also while a flavor or claim template
// it names has not been read.
WorkloadVerdict JudgeWorkload(const kueue::Workload& w, const inventory::KueueState& kueue, const EvaluationInputs& inputs);

// The name of the check on `w` that gpusched decides: of the checks its ClusterQueue runs (or,
// before it has one, those in its status), the first whose AdmissionCheck names
// `controller_name`; "" when none does.
std::string GpuschedCheckOf(const kueue::Workload& w, const inventory::KueueState& kueue, std::string_view controller_name);

// GET /explain?workload=NAMESPACE/NAME (and `gpusched explain --workload`): the Workload, the
// state gpusched's check has in its status now ("" when it has none), and the verdict on it now.
struct WorkloadExplanation {
  kueue::Workload workload;
  std::string check;        // the name of gpusched's AdmissionCheck on its ClusterQueue, or ""
  std::string check_state;  // that check's state in the Workload's status, or ""
  WorkloadVerdict verdict;
};

// JSON: {"workload", "queue", "clusterQueue", "check", "checkState", "verdict", "message",
// "pods": [{"pod", "podSet", "node", "gpus"}] (where Ready), "nodes"}.
std::string WorkloadExplanationJson(const WorkloadExplanation& e);
std::string WorkloadExplanationText(const WorkloadExplanation& e);

}  // namespace gpusched::extender
