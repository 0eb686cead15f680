// File: kind.h
//
// One kind of GPU as a plugin behind one judgement: what gpusched decides differently for whole
// GPUs, mGPU shares, DRA claims, or a kind registered at startup. The verbs reach a kind only
// through the registry (kinds.h), by a pod's request kind or a node's mode, so that no code
// outside model/ and placement/kinds/ branches on either.
//
// A kind decides; the data its placements hold is one of three payloads (model/node_mode.h:
// a count, per-container shares, named devices), and the code that books, packs, scores, encodes
// and describes a payload is shared by every kind that uses it. A new kind therefore writes only
// its decisions: what a pod asks for, what a node offers, whether a pod fits and where.
//
// Every hook is pure and const: a kind is one immutable object shared by every thread. Search
// buffers live in a KindScratch that each Planner owns.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/model/allocation.h"
#include "gpusched/model/gpu.h"
#include "gpusched/model/node_mode.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/gpu_links.h"
#include "gpusched/placement/policy.h"
#include "gpusched/placement/verdict.h"
#include "gpusched/placement/violations.h"

namespace gpusched::placement {

struct JudgeContext;
struct NodeState;
struct PodRequest;
class PodJudge;

// Buffers a kind keeps between the Evaluate calls of one Planner (one request's scan).
class KindScratch {
 public:
  virtual ~KindScratch() = default;
};

// How a Planner asks a kind for a verdict.
struct Judging {
  const PlacementOptions* options = nullptr;
  bool want_placement = true;  // fill NodeVerdict::placement when the pod fits
  bool explain = true;         // false: a refusal may leave reason and resolvable unset (Planner::Fits)
  // Non-null: where a fitting pod's GPU indices go (Planner::Witness); a kind without numbered
  // GPUs leaves it empty.
  std::vector<int>* witness = nullptr;
  KindScratch* scratch = nullptr;  // this kind's NewScratch(), made once per Planner
};

class Kind {
 public:
  explicit Kind(const DeviceKind& row) : row_(row) {}
  virtual ~Kind() = default;
  Kind(const Kind&) = delete;
  Kind& operator=(const Kind&) = delete;

  // The kind's row in the table of device kinds: label, mode, request kind, names, payload.
  const DeviceKind& row() const { return row_; }

  // --- The pod ---

  // Returns true if one of the pod's containers sets one of the kind's resources to more than
  // zero ("0" asks for nothing). AnalyzePod asks every kind; a pod that two kinds claim is refused. A kind served
  // by claims alone (DRA) returns false: AnalyzePod gives it the pods nothing else claims.
  virtual bool Asks(const Pod& pod) const = 0;
  // The kind's resources as a pod spells them, for reasons: "vke.volcengine.com/mgpu-*".
  virtual std::string_view Resources() const { return row_.asks; }
  // Fills the kind's fields of `out` (out->kind is already this kind) for a pod that Asks,
  // adding a violation to `invalid` for each rule the pod breaks (no node can host it) and to
  // `unplaceable` for what keeps gpusched from placing it. Sets out->kind to kNone if the pod
  // asks for nothing after all (every value zero) and breaks no rule.
  virtual void Analyze(const Pod& pod, PodRequest* out, Violations* invalid, Violations* unplaceable) const = 0;
  // Returns the request that placement `a` of this kind answers, for placing the same pod again
  // elsewhere (a defrag move); `compute_policy` is the policy of the node it was admitted on.
  // kNone when the kind's pods cannot be placed again from their placement alone (the default).
  virtual PodRequest RequestHeldBy(const Allocation& a, std::string_view compute_policy) const;
  // Fills what a bound pod of this kind holds (`placement->kind` is set) from its request and the
  // result annotations its bind wrote. The default records nothing: kube-scheduler allocates.
  virtual void Record(const Pod& pod, const PodRequest& request, Placement* placement) const {}
  // Returns the annotations bind writes on the pod for `placement` (none by default).
  virtual AnnotationMap ResultAnnotations(const Placement& placement) const { return {}; }

  // --- The node: nodes whose label selects this kind's mode ---

  // Returns why one GPU the node publishes (gpusched.io/gpu-devices) cannot be used by the kind
  // (an mGPU GPU without memory), or "". Asked of each published GPU in index order, after the
  // checks every kind shares; the first reason makes the node inconsistent.
  virtual std::string CheckDevice(const GpuDevice& device) const { return ""; }
  // Sets what the node offers (state->gpus, devices, whole_total) from state->node. On entry
  // gpus and devices hold the GPUs the node publishes, if it publishes them (else they are empty:
  // a kind may add GPUs from the node's aggregates, AddGpu), and whole_total is the node's
  // nvidia.com/gpu. Returns why the node's description cannot be trusted (the node is
  // inconsistent), or "".
  virtual std::string ReadLayout(NodeState* state) const { return ""; }
  // Returns why a node of this mode takes no GPU pods for a reason of the kind's own (an mGPU
  // compute policy label that names no policy), or "".
  virtual std::string NodeProblem(const NodeState& state) const { return ""; }

  // --- The judgement ---

  // Returns the kind's search buffers for one Planner, or nullptr if it needs none.
  virtual std::unique_ptr<KindScratch> NewScratch() const { return nullptr; }
  // Judges a valid request of this kind on a ready node of its mode (the planner has checked the
  // label, the mode and the condition). The default fits and places nothing: claims are
  // allocated by kube-scheduler's DynamicResources plugin.
  virtual void Evaluate(const PodRequest& request, const NodeState& node, const Judging& how, NodeVerdict* v) const;
  // Returns OK if `placement` of this kind can be booked on a ready node of its mode as the node
  // is now, else FailedPrecondition naming what is short. The default books nothing and accepts.
  virtual Status CheckFits(const NodeState& node, const Placement& placement) const { return OkStatus(); }
  // Returns the judge of one pending pod of this kind for victims and moves (pod_judge.h). The
  // default chooses by the GPUs the device plugin gives it (NewDevicePluginJudge). REQUIRES:
  // `pod`, `request` and what `context` points to outlive the judge.
  virtual std::unique_ptr<PodJudge> NewPodJudge(const Pod& pod, const PodRequest& request,
                                                const JudgeContext& context) const;
  // Of `fits`, the nodes where `request` fits, those filter refuses because others offered are
  // better in a way the kind cannot leave to scoring (kube-scheduler skips scores when one node is
  // left and adds other plugins' scores), by position into `fits`, with the reason. The default
  // refuses none; whole GPUs refuse nodes without an NVLink-connected set (whole_gpu_sets.h).
  virtual std::vector<std::pair<size_t, std::string>> RefuseAmongFits(const PodRequest& request,
                                                                      const std::vector<const NodeState*>& fits) const {
    return {};
  }
  // False when RefuseAmongFits refuses nothing for `request` whatever the nodes (the default): the
  // filter's hot path then skips it.
  virtual bool MayRefuseAmongFits(const PodRequest& request) const { return false; }
  // The free GPUs of a ready node of this mode (bit p: NodeState::gpus[p]) where the kind knows
  // them, for what is said about NVLink islands (node_links.h); nullopt (the default) otherwise.
  virtual std::optional<GpuSet> FreeGpuSet(const NodeState& node) const { return std::nullopt; }
  // How the GPUs of `request`, which fits `node` (a node with NVLink islands), stand on its links,
  // for explain (node_links.h); "" (the default) when the kind has nothing to say.
  virtual std::string LinksNote(const NodeState& node, const PodRequest& request, const PlacementOptions& options) const {
    return "";
  }

 private:
  DeviceKind row_;
};

}  // namespace gpusched::placement
