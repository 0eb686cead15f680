// File: pod_request.cc
//
// Reading what a pod asks for: its kind of GPU request, the VKE mGPU contract's rules (units,
// minima, whole cards, container-multiple-gpu, compute policy), totals aggregated across init and
// sidecar phases as Kubernetes does, every violation in one reason.
#include "gpusched/placement/pod_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "gpusched/model/names.h"
#include "gpusched/model/units.h"
#include "gpusched/scoring/scorer.h"

namespace gpusched::placement {
namespace {

// The longest name part of an annotation key (after the '/'), apimachinery IsQualifiedName.
constexpr size_t kMaxAnnotationNameLength = 63;

// Collects every violated rule; the reason lists them all.
class Violations {
 public:
  template <typename... Args>
  void Add(fmt::format_string<Args...> f, Args&&... args) {
    list_.push_back(fmt::format(f, std::forward<Args>(args)...));
  }
  bool empty() const { return list_.empty(); }
  std::string Join() const { return fmt::format("{}", fmt::join(list_, "; ")); }

 private:
  std::vector<std::string> list_;
};

// Returns the effective value of one resource: limits when set, else requests; records a
// violation when both are set and differ, or when the value is negative.
std::optional<int64_t> Effective(const Container& c, std::optional<int64_t> GpuResources::*field,
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

// Parses "2,1,3" into card counts. Returns false with a violation on malformed text.
bool ParseCardList(std::string_view text, std::vector<int>* out, Violations* v) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view item = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    int n = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size()) {
      v->Add("annotation {}=\"{}\": entry \"{}\" is not an integer", names::kContainerMultipleGpu, text, item);
      return false;
    }
    out->push_back(n);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return true;
}

// Returns true if the container sets `field` at all, "0" included.
bool Sets(const Container& c, std::optional<int64_t> GpuResources::*field) {
  return (c.limits.*field).has_value() || (c.requests.*field).has_value();
}

// Applies the VKE mGPU rules to one container. `entry` is its container-multiple-gpu entry, or
// nullopt without that annotation. Sources: ByteDance's VKE code in volcano-sh/volcano PR #3030,
// pkg/webhooks/admission/pods/validate/utils.go (validateNormalMGPUPod,
// validateContainerMultipleMGPUPod) and pkg/scheduler/api/devices/nvidia/mgpu/utils.go.
void AnalyzeMgpuContainer(const Container& c, std::optional<int> entry, PodRequest* out, Violations* v) {
  auto core = Effective(c, &GpuResources::mgpu_core_percent, names::kMgpuCore, v);
  auto mem = Effective(c, &GpuResources::mgpu_memory_mib, names::kMgpuMemory, v);
  if (entry == 0) {
    // validateContainerMultipleMGPUPod: an entry of 0 marks a container without GPUs.
    if (core || mem) {
      v->Add("container {}: annotation {} entry 0 marks a container without GPUs, but it sets {} {} and {} {} MiB",
             c.name, names::kContainerMultipleGpu, names::kMgpuCore, core.value_or(0), names::kMgpuMemory,
             mem.value_or(0));
    }
    return;
  }
  if (!core && !mem) {
    // validateContainerMultipleMGPUPod: a GPU count needs mgpu-core.
    if (entry) v->Add("container {}: annotation {} gives it {} GPUs but it sets no {}", c.name,
                      names::kContainerMultipleGpu, *entry, names::kMgpuCore);
    return;
  }
  MgpuContainerRequest r{.container = c.name, .core_percent = core.value_or(0), .memory_mib = mem.value_or(0)};
  if (!core) {
    v->Add("container {}: {} {} MiB without {}", c.name, names::kMgpuMemory, r.memory_mib, names::kMgpuCore);
    return;
  }
  r.cards = entry.value_or(1);
  // Whole cards: a multiple of 100 (with an entry, exactly 100 per listed GPU), no memory.
  bool whole = r.core_percent % kCorePercentPerGpu == 0 && (!entry || r.core_percent == kCorePercentPerGpu * *entry);
  if (whole) {
    if (Sets(c, &GpuResources::mgpu_memory_mib)) {
      v->Add("container {}: {} {} is a whole-card request and must not set {} ({} MiB)", c.name, names::kMgpuCore,
             r.core_percent, names::kMgpuMemory, r.memory_mib);
      return;
    }
    r.whole_card = true;
    r.cards = static_cast<int>(std::min<int64_t>(r.core_percent / kCorePercentPerGpu, 1 << 20));
    r.milli_per_card = kMilliPerGpu;
  } else if (entry) {
    // Spread over `cards` GPUs, an equal share on each; at least 1024 MiB per GPU, whatever the count.
    int cards = r.cards;
    if (r.core_percent % cards != 0 || r.core_percent / cards > kCorePercentPerGpu) {
      v->Add("container {}: {} {} over {} GPU{} must give an integer per-GPU core <= 100 (got {}/{})", c.name,
             names::kMgpuCore, r.core_percent, cards, cards == 1 ? "" : "s", r.core_percent, cards);
    }
    if (r.memory_mib % cards != 0 || r.memory_mib / cards < kMinPerCardMemoryMib ||
        r.memory_mib / cards > kMaxPerCardMemoryMib) {
      v->Add("container {}: {} {} MiB over {} GPU{} must give an integer per-GPU memory in [{}, {}] MiB (got {}/{})",
             c.name, names::kMgpuMemory, r.memory_mib, cards, cards == 1 ? "" : "s", kMinPerCardMemoryMib,
             kMaxPerCardMemoryMib, r.memory_mib, cards);
    }
    r.milli_per_card = MilliFromCorePercent(r.core_percent / cards);
    r.mib_per_card = r.memory_mib / cards;
  } else if (r.core_percent > kCorePercentPerGpu) {
    v->Add("container {}: {} {} above 100 must be a multiple of 100", c.name, names::kMgpuCore, r.core_percent);
    return;
  } else {
    // A partial GPU: one card, shared.
    if (r.memory_mib < kMinPartialMemoryMib) {
      v->Add("container {}: partial GPU ({} {}) needs {} >= {} MiB, got {}", c.name, names::kMgpuCore, r.core_percent,
             names::kMgpuMemory, kMinPartialMemoryMib, r.memory_mib);
    }
    r.milli_per_card = MilliFromCorePercent(r.core_percent);
    r.mib_per_card = r.memory_mib;
  }
  out->containers.push_back(std::move(r));
}

// Returns a pod's effective request of one resource as Kubernetes computes it
// (k8s.io/component-helpers/resource PodRequests): the app containers plus every sidecar run
// together; a regular init container runs with the sidecars declared before it; the pod needs
// the larger of the two phases. `value(c)` is one container's request.
template <typename Value>
int64_t AggregateLikeKubernetes(const Pod& pod, Value value) {
  int64_t running = 0;
  for (const Container& c : pod.containers) running += value(c);
  int64_t sidecars = 0;
  int64_t init_peak = 0;
  for (const Container& c : pod.init_containers) {
    int64_t n = value(c);
    if (c.sidecar) {
      running += n;
      sidecars += n;
      init_peak = std::max(init_peak, sidecars);
    } else {
      init_peak = std::max(init_peak, n + sidecars);
    }
  }
  return std::max(running, init_peak);
}

int64_t EffectiveWholeGpus(const Pod& pod, Violations* v) {
  return AggregateLikeKubernetes(pod, [v](const Container& c) {
    return Effective(c, &GpuResources::nvidia_gpus, names::kNvidiaGpu, v).value_or(0);
  });
}

// Returns true if any container sets `field` to more than zero ("0" asks for nothing).
bool HasAny(const Pod& pod, std::optional<int64_t> GpuResources::*field) {
  auto positive = [](const std::optional<int64_t>& v) { return v.has_value() && *v != 0; };
  auto has = [&](const Container& c) { return positive(c.requests.*field) || positive(c.limits.*field); };
  return std::any_of(pod.containers.begin(), pod.containers.end(), has) ||
         std::any_of(pod.init_containers.begin(), pod.init_containers.end(), has);
}

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

// Sets request->total_milli and total_mib as Kubernetes aggregates a pod's requests: app
// containers and sidecars together, or one regular init container with the sidecars before it,
// whichever is larger.
void SetMgpuTotals(PodRequest* request) {
  int64_t milli = 0, mib = 0, peak_milli = 0, peak_mib = 0;
  for (const MgpuContainerRequest& c : request->containers) {
    if (c.transient()) continue;
    milli += c.milli_per_card * c.cards;
    mib += c.mib_per_card * c.cards;
  }
  for (const MgpuContainerRequest& init : request->containers) {
    if (!init.transient()) continue;
    int64_t phase_milli = init.milli_per_card * init.cards, phase_mib = init.mib_per_card * init.cards;
    for (const MgpuContainerRequest& c : request->containers) {
      if (!c.sidecar || c.init_position >= init.init_position) continue;
      phase_milli += c.milli_per_card * c.cards;
      phase_mib += c.mib_per_card * c.cards;
    }
    peak_milli = std::max(peak_milli, phase_milli);
    peak_mib = std::max(peak_mib, phase_mib);
  }
  request->total_milli = std::max(milli, peak_milli);
  request->total_mib = std::max(mib, peak_mib);
}

// Fills the mGPU request: the compute policy, the container-multiple-gpu entries and each
// container's rules. An unknown compute policy only matters for where the pod may go: it lands
// in *unplaceable.
void AnalyzeMgpuPod(const Pod& pod, PodRequest* out, Violations* v, Violations* unplaceable) {
  out->kind = RequestKind::kMgpu;
  auto policy_it = pod.annotations.find(names::kComputePolicy);
  out->compute_policy = policy_it == pod.annotations.end() ? std::string(names::kPolicyFixedShare) : policy_it->second;
  if (!IsComputePolicy(out->compute_policy)) {
    unplaceable->Add("annotation {}=\"{}\": want {}, {} or {}", names::kComputePolicy, out->compute_policy,
                     names::kPolicyFixedShare, names::kPolicyGuaranteedBurstShare, names::kPolicyNativeBurstShare);
  }
  std::vector<int> cards;
  auto multi_it = pod.annotations.find(names::kContainerMultipleGpu);
  bool multi = multi_it != pod.annotations.end();
  if (multi) {
    // checkNodeMGPUSharingPredicate: a multi-card pod needs native-burst-share, before any other check.
    if (out->compute_policy != names::kPolicyNativeBurstShare) {
      v->Add("annotation {} needs compute policy {}, pod has {}", names::kContainerMultipleGpu,
             names::kPolicyNativeBurstShare, out->compute_policy);
    }
    if (ParseCardList(multi_it->second, &cards, v)) {
      if (cards.size() != pod.containers.size()) {
        v->Add("annotation {}=\"{}\" has {} entries, pod has {} containers", names::kContainerMultipleGpu,
               multi_it->second, cards.size(), pod.containers.size());
      }
      for (int n : cards) {
        if (n < 0 || n > kMaxCardsPerContainer) {
          v->Add("annotation {}=\"{}\": {} GPUs per container is outside 0-{} (0: a container without GPUs)",
                 names::kContainerMultipleGpu, multi_it->second, n, kMaxCardsPerContainer);
        }
      }
    }
  }
  // Init containers first: they start first. VKE itself reads only spec.containers.
  for (size_t i = 0; i < pod.init_containers.size(); ++i) {
    size_t before = out->containers.size();
    AnalyzeMgpuContainer(pod.init_containers[i], std::nullopt, out, v);
    if (out->containers.size() == before) continue;
    out->containers.back().init_position = static_cast<int>(i) + 1;
    out->containers.back().sidecar = pod.init_containers[i].sidecar;
  }
  for (size_t i = 0; i < pod.containers.size(); ++i) {
    std::optional<int> entry;
    if (multi) entry = i < cards.size() ? std::clamp(cards[i], 0, kMaxCardsPerContainer) : 1;
    AnalyzeMgpuContainer(pod.containers[i], entry, out, v);
  }
  SetMgpuTotals(out);
  for (const MgpuContainerRequest& c : out->containers) {
    // Bind writes vke.volcengine.com/gpu-index-container-<name>: the part after the '/' must stay
    // within the API server's 63 characters (apimachinery IsQualifiedName), or every bind fails.
    size_t key_name = names::kGpuIndexContainerPrefix.size() - names::kGpuIndexContainerPrefix.find('/') - 1;
    if (key_name + c.container.size() > kMaxAnnotationNameLength) {
      unplaceable->Add("container {}: its name has {} characters; the result annotation {}{} would exceed the API "
                       "server's {}-character limit (container names of at most {} characters can be placed)",
                       c.container, c.container.size(), names::kGpuIndexContainerPrefix, c.container,
                       kMaxAnnotationNameLength, kMaxAnnotationNameLength - key_name);
    }
  }
  // isFullCardGPUPod: whole cards only, without container-multiple-gpu, take idle GPUs on a node
  // of any compute policy.
  out->any_compute_policy = !multi && std::all_of(out->containers.begin(), out->containers.end(),
                                                  [](const MgpuContainerRequest& c) { return c.whole_card; });
  if (out->containers.empty() && v->empty()) out->kind = RequestKind::kNone;
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

std::string PodRequest::RefusalReason() const {
  if (invalid_reason.empty()) return unplaceable_reason;
  if (unplaceable_reason.empty()) return invalid_reason;
  return invalid_reason + "; " + unplaceable_reason;
}

PodRequest RequestHeldBy(const Allocation& a, std::string_view compute_policy) {
  PodRequest out;
  if (a.placement.kind == RequestKind::kWholeGpu) {
    out.kind = RequestKind::kWholeGpu;
    out.whole_gpus = a.placement.whole_gpus;
    return out;
  }
  if (a.placement.kind != RequestKind::kMgpu) return out;
  out.kind = RequestKind::kMgpu;
  out.compute_policy = std::string(compute_policy);
  for (const ContainerAssignment& c : a.placement.containers) {
    int cards = static_cast<int>(c.gpu_indices.size());
    MgpuContainerRequest r{.container = c.container, .cards = cards, .whole_card = c.exclusive,
                           .milli_per_card = c.milli_per_gpu, .mib_per_card = c.exclusive ? 0 : c.mib_per_gpu,
                           .init_position = c.init_position, .sidecar = c.sidecar};
    r.core_percent = c.milli_per_gpu * cards / (kMilliPerGpu / kCorePercentPerGpu);
    r.memory_mib = r.mib_per_card * cards;
    out.containers.push_back(std::move(r));
  }
  SetMgpuTotals(&out);
  out.any_compute_policy = !out.containers.empty() && std::all_of(out.containers.begin(), out.containers.end(),
                                                                  [](const MgpuContainerRequest& c) { return c.whole_card; });
  return out;
}

bool IsComputePolicy(std::string_view policy) {
  return policy == names::kPolicyFixedShare || policy == names::kPolicyGuaranteedBurstShare ||
         policy == names::kPolicyNativeBurstShare;
}

PodRequest AnalyzePod(const Pod& pod) {
  PodRequest out;
  out.claims = !pod.resource_claims.empty();
  Violations v;
  bool whole = HasAny(pod, &GpuResources::nvidia_gpus);
  bool mgpu = HasAny(pod, &GpuResources::mgpu_core_percent) || HasAny(pod, &GpuResources::mgpu_memory_mib);
  if (!pod.spec_error.empty()) {
    // What the pod asks for is not known: no node can be shown to fit it.
    out.kind = mgpu ? RequestKind::kMgpu : RequestKind::kWholeGpu;
    out.invalid_reason = fmt::format("pod cannot be read: {}", pod.spec_error);
    return out;
  }
  if (whole && mgpu) {
    out.kind = RequestKind::kWholeGpu;
    out.invalid_reason = fmt::format("pod mixes {} and vke.volcengine.com/mgpu-* requests; a pod uses one kind of GPU",
                                     names::kNvidiaGpu);
    return out;
  }
  Violations unplaceable;
  ReadPlacementPreferences(pod, &out, &unplaceable);
  if (whole) {
    out.kind = RequestKind::kWholeGpu;
    out.whole_gpus = EffectiveWholeGpus(pod, &v);
    if (out.whole_gpus == 0 && v.empty()) out.kind = RequestKind::kNone;
  } else if (mgpu) {
    AnalyzeMgpuPod(pod, &out, &v, &unplaceable);
  }
  // A pod that only carries spec.resourceClaims is of the DRA kind; whether its claims ask for a
  // GPU at all (a claim may be a NIC) is the DRA planner's to say, from their DeviceClasses.
  if (out.kind == RequestKind::kNone && out.claims) out.kind = RequestKind::kDra;
  if (!v.empty()) out.invalid_reason = v.Join();
  if (!unplaceable.empty()) out.unplaceable_reason = unplaceable.Join();
  out.quantity_note = QuantityNote(pod);
  return out;
}

}  // namespace gpusched::placement
