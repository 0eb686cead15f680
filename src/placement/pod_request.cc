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

void AnalyzeMgpuContainer(const Container& c, int cards, PodRequest* out, Violations* v) {
  auto core = Effective(c, &GpuResources::mgpu_core_percent, names::kMgpuCore, v);
  auto mem = Effective(c, &GpuResources::mgpu_memory_mib, names::kMgpuMemory, v);
  if (!core && !mem) return;
  MgpuContainerRequest r{.container = c.name,
                         .core_percent = core.value_or(0),
                         .memory_mib = mem.value_or(0),
                         .cards = cards};
  if (!core) {
    v->Add("container {}: {} {} MiB without {}", c.name, names::kMgpuMemory, r.memory_mib, names::kMgpuCore);
    return;
  }
  if (cards > 1) {
    if (r.core_percent % cards != 0 || r.core_percent / cards > kCorePercentPerGpu) {
      v->Add("container {}: {} {} over {} GPUs must give an integer per-GPU core <= 100 (got {}/{})", c.name,
             names::kMgpuCore, r.core_percent, cards, r.core_percent, cards);
    }
    if (r.memory_mib % cards != 0 || r.memory_mib / cards < kMinPerCardMemoryMib ||
        r.memory_mib / cards > kMaxPerCardMemoryMib) {
      v->Add("container {}: {} {} MiB over {} GPUs must give an integer per-GPU memory in [{}, {}] MiB (got {}/{})",
             c.name, names::kMgpuMemory, r.memory_mib, cards, kMinPerCardMemoryMib, kMaxPerCardMemoryMib,
             r.memory_mib, cards);
    }
    r.milli_per_card = MilliFromCorePercent(r.core_percent / cards);
    r.mib_per_card = r.memory_mib / cards;
  } else if (r.core_percent % kCorePercentPerGpu == 0 && r.memory_mib == 0) {
    // Whole cards: k idle GPUs, exclusively.
    r.whole_card = true;
    r.cards = static_cast<int>(std::min<int64_t>(r.core_percent / kCorePercentPerGpu, 1 << 20));
    r.milli_per_card = kMilliPerGpu;
  } else if (r.core_percent > kCorePercentPerGpu) {
    if (r.core_percent % kCorePercentPerGpu != 0) {
      v->Add("container {}: {} {} above 100 must be a multiple of 100", c.name, names::kMgpuCore, r.core_percent);
    } else {
      v->Add("container {}: {} {} is a whole-card request and must not set {} ({} MiB)", c.name, names::kMgpuCore,
             r.core_percent, names::kMgpuMemory, r.memory_mib);
    }
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

int64_t EffectiveWholeGpus(const Pod& pod, Violations* v) {
  int64_t app = 0;
  int64_t init_max = 0;
  for (const Container& c : pod.containers) {
    app += Effective(c, &GpuResources::nvidia_gpus, names::kNvidiaGpu, v).value_or(0);
  }
  for (const Container& c : pod.init_containers) {
    int64_t n = Effective(c, &GpuResources::nvidia_gpus, names::kNvidiaGpu, v).value_or(0);
    if (c.sidecar) {
      app += n;
    } else {
      init_max = std::max(init_max, n);
    }
  }
  return std::max(app, init_max);
}

// Returns true if any container sets `field` to more than zero ("0" asks for nothing).
bool HasAny(const Pod& pod, std::optional<int64_t> GpuResources::*field) {
  auto positive = [](const std::optional<int64_t>& v) { return v.has_value() && *v != 0; };
  auto has = [&](const Container& c) { return positive(c.requests.*field) || positive(c.limits.*field); };
  return std::any_of(pod.containers.begin(), pod.containers.end(), has) ||
         std::any_of(pod.init_containers.begin(), pod.init_containers.end(), has);
}

}  // namespace

bool IsComputePolicy(std::string_view policy) {
  return policy == names::kPolicyFixedShare || policy == names::kPolicyGuaranteedBurstShare ||
         policy == names::kPolicyNativeBurstShare;
}

PodRequest AnalyzePod(const Pod& pod) {
  PodRequest out;
  Violations v;

  bool whole = HasAny(pod, &GpuResources::nvidia_gpus);
  bool mgpu = HasAny(pod, &GpuResources::mgpu_core_percent) || HasAny(pod, &GpuResources::mgpu_memory_mib);
  if (whole && mgpu) {
    out.kind = RequestKind::kWholeGpu;
    out.invalid_reason = fmt::format("pod mixes {} and vke.volcengine.com/mgpu-* requests; a pod uses one kind of GPU",
                                     names::kNvidiaGpu);
    return out;
  }

  if (auto it = pod.annotations.find(names::kNodePolicyAnnotation); it != pod.annotations.end()) {
    std::span<const std::string_view> known = scoring::ScorerNames();
    if (std::find(known.begin(), known.end(), it->second) != known.end()) {
      out.node_policy = it->second;
    } else {
      v.Add("annotation {}=\"{}\": want one of {}", names::kNodePolicyAnnotation, it->second, fmt::join(known, ", "));
    }
  }
  if (auto it = pod.annotations.find(names::kGpuPolicyAnnotation); it != pod.annotations.end()) {
    out.gpu_policy = ParsePolicy(it->second);
    if (!out.gpu_policy) v.Add("annotation {}=\"{}\": want binpack or spread", names::kGpuPolicyAnnotation, it->second);
  }

  if (whole) {
    out.kind = RequestKind::kWholeGpu;
    out.whole_gpus = EffectiveWholeGpus(pod, &v);
    if (out.whole_gpus == 0 && v.empty()) out.kind = RequestKind::kNone;
  } else if (mgpu) {
    out.kind = RequestKind::kMgpu;
    auto policy_it = pod.annotations.find(names::kComputePolicy);
    out.compute_policy =
        policy_it == pod.annotations.end() ? std::string(names::kPolicyFixedShare) : policy_it->second;
    if (!IsComputePolicy(out.compute_policy)) {
      v.Add("annotation {}=\"{}\": want {}, {} or {}", names::kComputePolicy, out.compute_policy,
            names::kPolicyFixedShare, names::kPolicyGuaranteedBurstShare, names::kPolicyNativeBurstShare);
    }
    std::vector<int> cards;
    auto multi_it = pod.annotations.find(names::kContainerMultipleGpu);
    bool multi_listed = multi_it != pod.annotations.end();
    if (multi_listed) {
      if (out.compute_policy != names::kPolicyNativeBurstShare) {
        v.Add("annotation {} needs compute policy {}, pod has {}", names::kContainerMultipleGpu,
              names::kPolicyNativeBurstShare, out.compute_policy);
      }
      if (ParseCardList(multi_it->second, &cards, &v)) {
        if (cards.size() != pod.containers.size()) {
          v.Add("annotation {}=\"{}\" has {} entries, pod has {} containers", names::kContainerMultipleGpu,
                multi_it->second, cards.size(), pod.containers.size());
        }
        for (int n : cards) {
          if (n < 1 || n > kMaxCardsPerContainer) {
            v.Add("annotation {}=\"{}\": {} GPUs per container is outside 1-{}", names::kContainerMultipleGpu,
                  multi_it->second, n, kMaxCardsPerContainer);
          }
        }
      }
    }
    // Init containers first: they start first, and their GPUs are booked for the pod's lifetime
    // (conservative: the node agent cannot hand an init container's slice back to the pod).
    for (const Container& c : pod.init_containers) {
      AnalyzeMgpuContainer(c, 1, &out, &v);
    }
    for (size_t i = 0; i < pod.containers.size(); ++i) {
      int n = i < cards.size() ? std::clamp(cards[i], 1, kMaxCardsPerContainer) : 1;
      AnalyzeMgpuContainer(pod.containers[i], n, &out, &v);
    }
    for (const MgpuContainerRequest& c : out.containers) {
      out.total_milli += c.milli_per_card * c.cards;
      out.total_mib += c.mib_per_card * c.cards;
    }
    if (out.containers.empty() && v.empty()) out.kind = RequestKind::kNone;
  }
  // Pods that only carry spec.resourceClaims are left to kube-scheduler's DynamicResources plugin,
  // which only places them where ResourceSlices can satisfy the claims. Telling GPU claims from
  // others (NICs, FPGAs) needs the claims and DeviceClasses resolved: that is the DRA mode's work.
  if (!v.empty()) out.invalid_reason = v.Join();
  return out;
}

}  // namespace gpusched::placement
