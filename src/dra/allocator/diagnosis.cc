// File: diagnosis.cc
//
// Why no device set fits: per request alternative, the devices that match, are free and are usable,
// naming the first request short on its own; when none is, the rules no combination meets
// (constraints, shared counters, distinct devices across requests).
#include "gpusched/dra/allocator/diagnosis.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "gpusched/dra/node_selection.h"

namespace gpusched::dra {
namespace {

// One alternative of a request, counted: devices that match it, those free, those usable.
struct Count {
  int64_t matching = 0, free = 0, usable = 0;
};

Count CountDevices(const ClaimData& cd, const RequestData& rd, const DeviceChecks& checks, const Features& features) {
  Count n;
  for (size_t i = 0; i < checks.candidates().size(); ++i) {
    StatusOr<bool> ok = checks.Selectable(cd, rd, i);
    if (!ok.ok() || !*ok) continue;
    ++n.matching;
    if (checks.HeldAgainst(rd, i)) continue;
    ++n.free;
    const Candidate& c = checks.candidates()[i];
    bool blocked = features.device_taints && !TaintsTolerated(*c.device, rd.req->tolerations);
    if (!blocked && DeviceChecks::StaticCapacityFits(rd, c)) ++n.usable;
  }
  return n;
}

std::string Describe(const RequestData& rd, const Count& n, size_t candidates) {
  std::string selectors =
      rd.req->selectors.empty() ? "" : fmt::format(" and {} selector{}", rd.req->selectors.size(), rd.req->selectors.size() == 1 ? "" : "s");
  if (rd.all_mode) {
    return fmt::format("request {}: wants all {} devices of class {}{}, {} of them are free", rd.name, n.matching, rd.device_class->name,
                       selectors, n.free);
  }
  return fmt::format("request {}: {} of {} device{} available ({} of {} devices match class {}{}, {} of those free{})", rd.name, n.usable,
                     rd.num_devices, rd.num_devices == 1 ? "" : "s", n.matching, candidates, rd.device_class->name, selectors, n.free,
                     n.usable < n.free ? ", the others tainted or short of capacity" : "");
}

// Why request `r` of `cd` cannot be met whatever the other requests take, or nullopt if some
// alternative of it has enough devices on its own.
std::optional<std::string> ShortAlone(const ClaimData& cd, size_t r, const DeviceChecks& checks, const Features& features) {
  std::vector<std::string> why;
  bool short_alone = true;
  for (const RequestData& rd : cd.requests[r]) {
    Count n = CountDevices(cd, rd, checks, features);
    bool enough = rd.all_mode ? rd.num_devices > 0 && n.free == n.matching : n.usable >= rd.num_devices;
    if (enough) short_alone = false;
    why.push_back(Describe(rd, n, checks.candidates().size()));
  }
  if (!short_alone) return std::nullopt;
  return fmt::format("claim {}/{}: {}", cd.claim->namespace_name, cd.claim->name, fmt::join(why, "; or "));
}

std::string CombinationRules(const std::vector<ClaimData>& claims, const DeviceChecks& checks) {
  std::vector<std::string> rules;
  for (const ClaimData& cd : claims) {
    for (const DeviceConstraint& k : cd.claim->constraints) {
      rules.push_back(k.match_attribute.empty() ? "distinctAttribute " + k.distinct_attribute : "matchAttribute " + k.match_attribute);
    }
  }
  const std::vector<Candidate>& all = checks.candidates();
  if (std::any_of(all.begin(), all.end(), [](const Candidate& c) { return !c.device->consumes_counters.empty(); })) {
    rules.push_back("shared counters");
  }
  if (claims.size() > 1 || std::any_of(claims.begin(), claims.end(), [](const ClaimData& cd) { return cd.requests.size() > 1; })) {
    rules.push_back("distinct devices across requests");
  }
  return fmt::format("every request has enough devices on its own, but no combination satisfies {}",
                     rules.empty() ? "the claims together" : fmt::format("{}", fmt::join(rules, ", ")));
}

}  // namespace

std::string Diagnose(const std::vector<ClaimData>& claims, const DeviceChecks& checks, const Features& features) {
  if (checks.candidates().empty() && !claims.empty()) {
    return fmt::format("claim {}/{}: no ResourceSlice offers devices on this node", claims[0].claim->namespace_name, claims[0].claim->name);
  }
  for (const ClaimData& cd : claims) {
    for (size_t r = 0; r < cd.requests.size(); ++r) {
      if (std::optional<std::string> why = ShortAlone(cd, r, checks, features)) return std::move(*why);
    }
  }
  return CombinationRules(claims, checks);
}

}  // namespace gpusched::dra
