#include "gpusched/placement/pod_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "gpusched/model/names.h"
#include "gpusched/model/units.h"
#include "gpusched/scoring/scorer.h"

namespace gpusched::placement {
namespace {

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

// Fills the mGPU request: the compute policy, the container-multiple-gpu entries and each
// container's rules. An unknown compute policy only matters for where the pod may go: it lands
// in *preferences.
void AnalyzeMgpuPod(const Pod& pod, PodRequest* out, Violations* v, Violations* preferences) {
  out->kind = RequestKind::kMgpu;
  auto policy_it = pod.annotations.find(names::kComputePolicy);
  out->compute_policy = policy_it == pod.annotations.end() ? std::string(names::kPolicyFixedShare) : policy_it->second;
  if (!IsComputePolicy(out->compute_policy)) {
    preferences->Add("annotation {}=\"{}\": want {}, {} or {}", names::kComputePolicy, out->compute_policy,
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
  for (const Container& c : pod.init_containers) AnalyzeMgpuContainer(c, std::nullopt, out, v);
  for (size_t i = 0; i < pod.containers.size(); ++i) {
    std::optional<int> entry;
    if (multi) entry = i < cards.size() ? std::clamp(cards[i], 0, kMaxCardsPerContainer) : 1;
    AnalyzeMgpuContainer(pod.containers[i], entry, out, v);
  }
  for (const MgpuContainerRequest& c : out->containers) {
    out->total_milli += c.milli_per_card * c.cards;
    out->total_mib += c.mib_per_card * c.cards;
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
  if (invalid_reason.empty()) return preference_reason;
  if (preference_reason.empty()) return invalid_reason;
  return invalid_reason + "; " + preference_reason;
}

bool IsComputePolicy(std::string_view policy) {
  return policy == names::kPolicyFixedShare || policy == names::kPolicyGuaranteedBurstShare ||
         policy == names::kPolicyNativeBurstShare;
}

PodRequest AnalyzePod(const Pod& pod) {
  PodRequest out;
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
  Violations preferences;
  ReadPlacementPreferences(pod, &out, &preferences);
  if (whole) {
    out.kind = RequestKind::kWholeGpu;
    out.whole_gpus = EffectiveWholeGpus(pod, &v);
    if (out.whole_gpus == 0 && v.empty()) out.kind = RequestKind::kNone;
  } else if (mgpu) {
    AnalyzeMgpuPod(pod, &out, &v, &preferences);
  }
  // Pods that only carry spec.resourceClaims are classified by the DRA planner, which resolves
  // their claims and DeviceClasses (a claim may be a NIC as well as a GPU).
  if (!v.empty()) out.invalid_reason = v.Join();
  if (!preferences.empty()) out.preference_reason = preferences.Join();
  out.quantity_note = QuantityNote(pod);
  return out;
}

}  // namespace gpusched::placement
