// File: pod_request.cc
//
// Reading what a pod asks for: the kind whose resources it sets (each kind reads its own rules,
// kinds/), the per-pod placement preferences, the quantities spelled unusually, every violation in
// one reason.
#include "gpusched/placement/pod_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "gpusched/model/names.h"
#include "gpusched/model/units.h"
#include "gpusched/placement/kinds.h"
#include "gpusched/scoring/scorer.h"

namespace gpusched::placement {
namespace {

// Reads the per-pod policy overrides (gpusched.io/node-policy, gpusched.io/gpu-policy).
void ReadPlacementPreferences(const Pod& pod, PodRequest* out, Violations* v) {
  if (auto it = pod.annotations.find(names::kNodePolicyAnnotation); it != pod.annotations.end()) {
    std::span<const std::string_view> known = scoring::ScorerNames();
    if (std::find(known.begin(), known.end(), it->second) != known.end()) {
      out->node_policy = it->second;
    } else {
      v->Add("annotation {}=\"{}\": want one of {}", names::kNodePolicyAnnotation, it->second, fmt::join(known, ", "));
    }
  }
  if (auto it = pod.annotations.find(names::kGpuPolicyAnnotation); it != pod.annotations.end()) {
    out->gpu_policy = ParsePolicy(it->second);
    if (!out->gpu_policy) v->Add("annotation {}=\"{}\": want binpack or spread", names::kGpuPolicyAnnotation, it->second);
  }
}

// Returns how the pod spelled its GPU quantities where that is not the plain number, with the
// number and its unit: "container main: vke.volcengine.com/mgpu-memory \"1Gi\" = 1073741824 MiB".
std::string QuantityNote(const Pod& pod) {
  std::vector<std::string> notes;
  auto add = [&](const Container& c) {
    const GpuResources& r = c.limits.empty() ? c.requests : c.limits;
    for (const auto& [resource, text] : r.spelling) {
      std::optional<int64_t> value = resource == names::kNvidiaGpu  ? r.nvidia_gpus
                                     : resource == names::kMgpuCore ? r.mgpu_core_percent
                                                                    : r.mgpu_memory_mib;
      std::string_view unit = resource == names::kNvidiaGpu  ? "GPUs"
                              : resource == names::kMgpuCore ? "percent of one GPU"
                                                             : "MiB";
      notes.push_back(fmt::format("container {}: {} \"{}\" = {} {}", c.name, resource, text, value.value_or(0), unit));
    }
  };
  for (const Container& c : pod.init_containers) add(c);
  for (const Container& c : pod.containers) add(c);
  return fmt::format("{}", fmt::join(notes, "; "));
}

}  // namespace

std::optional<int64_t> EffectiveResource(const Container& c, std::optional<int64_t> GpuResources::*field,
                                         std::string_view resource, Violations* v) {
  const auto& req = c.requests.*field;
  const auto& lim = c.limits.*field;
  if (req && lim && *req != *lim) {
    v->Add("container {}: {} requests {} != limits {} (requests must equal limits)", c.name, resource,
           *req, *lim);
  }
  std::optional<int64_t> value = lim ? lim : req;
  if (value && *value < 0) {
    v->Add("container {}: {} is negative ({})", c.name, resource, *value);
    return std::nullopt;
  }
  if (value && *value == 0) return std::nullopt;
  return value;
}

bool SetsPositive(const Pod& pod, std::optional<int64_t> GpuResources::*field) {
  auto positive = [](const std::optional<int64_t>& v) { return v.has_value() && *v != 0; };
  auto has = [&](const Container& c) { return positive(c.requests.*field) || positive(c.limits.*field); };
  return std::any_of(pod.containers.begin(), pod.containers.end(), has) ||
         std::any_of(pod.init_containers.begin(), pod.init_containers.end(), has);
}

std::string PodRequest::RefusalReason() const {
  if (invalid_reason.empty()) return unplaceable_reason;
  if (unplaceable_reason.empty()) return invalid_reason;
  return invalid_reason + "; " + unplaceable_reason;
}

PodRequest RequestHeldBy(const Allocation& a, std::string_view compute_policy) {
  const Kind* kind = KindFor(a.placement.kind);
  return kind != nullptr ? kind->RequestHeldBy(a, compute_policy) : PodRequest{};
}

PodRequest AnalyzePod(const Pod& pod) {
  PodRequest out;
  out.claims = !pod.resource_claims.empty();
  std::array<const Kind*, 2> asking{};  // the first two kinds whose resources the pod sets
  size_t asked = 0;
  for (const Kind* k : AllKinds()) {
    if (k->Asks(pod) && asked++ < asking.size()) asking[asked - 1] = k;
  }
  if (!pod.spec_error.empty()) {
    // What the pod asks for is not known: no node can be shown to fit it. It is judged as the
    // kind it names last, or as the kind of an unlabelled node.
    const Kind* as = asked > 0 ? asking[std::min(asked, asking.size()) - 1] : KindFor(ModeFromLabel(std::nullopt));
    out.kind = as->row().request;
    out.invalid_reason = fmt::format("pod cannot be read: {}", pod.spec_error);
    return out;
  }
  if (asked > 1) {
    out.kind = asking[0]->row().request;
    out.invalid_reason = fmt::format("pod mixes {} and {} requests; a pod uses one kind of GPU", asking[0]->Resources(),
                                     asking[1]->Resources());
    return out;
  }
  Violations v;
  Violations unplaceable;
  ReadPlacementPreferences(pod, &out, &unplaceable);
  if (asked == 1) {
    out.kind = asking[0]->row().request;
    asking[0]->Analyze(pod, &out, &v, &unplaceable);
  }
  // A pod that only carries spec.resourceClaims is of the kind served by claims; whether its
  // claims ask for a GPU at all (a claim may be a NIC) is the DRA planner's to say.
  if (!out.asks_gpu() && out.claims) out.kind = ClaimsKind();
  if (!v.empty()) out.invalid_reason = v.Join();
  if (!unplaceable.empty()) out.unplaceable_reason = unplaceable.Join();
  out.quantity_note = QuantityNote(pod);
  return out;
}

}  // namespace gpusched::placement
