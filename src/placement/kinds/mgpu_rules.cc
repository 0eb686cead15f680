// File: mgpu_rules.cc
//
// VKE's mGPU contract as a pod meets it: units, minima, whole cards, container-multiple-gpu, the
// compute policy, totals aggregated across init and sidecar phases as Kubernetes does, and the
// request a placed pod answers. Sources: ByteDance's VKE code in volcano-sh/volcano PR #3030.
#include "placement/kinds/mgpu_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "gpusched/model/names.h"
#include "gpusched/model/units.h"
#include "gpusched/placement/kinds/mgpu.h"

namespace gpusched::placement {
namespace {

// The longest name part of an annotation key (after the '/'), apimachinery IsQualifiedName.
constexpr size_t kMaxAnnotationNameLength = 63;

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
  auto core = EffectiveResource(c, &GpuResources::mgpu_core_percent, names::kMgpuCore, v);
  auto mem = EffectiveResource(c, &GpuResources::mgpu_memory_mib, names::kMgpuMemory, v);
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

}  // namespace

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

PodRequest MgpuRequestHeldBy(const Allocation& a, std::string_view compute_policy) {
  PodRequest out;
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

}  // namespace gpusched::placement
