// File: requests.cc
//
// Claims checked and expanded before the search: each request or firstAvailable subrequest held to
// the feature gates and admin-access namespaces, its selectors compiled (a compile error kept for
// the search), All expanded, the device limit applied.
#include "gpusched/dra/allocator/requests.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpusched/dra/allocator/device_checks.h"

namespace gpusched::dra {
namespace {

// The program of `expr` from the caller's memo (by the string's address), or nullptr.
const cel::Program* Memoized(const AllocatorInput& in, const std::string& expr) {
  if (in.compiled == nullptr) return nullptr;
  auto it = in.compiled->find(&expr);
  return it == in.compiled->end() ? nullptr : it->second;
}

// Compiles `selectors`, one CompiledSelector each. An empty selector (a selector type
// gpusched does not know) stops the claim; one that does not compile is kept as its error, which
// the search reports when it first tests a device with it, as upstream (never, if no device gets
// that far). `empty_prefix()` and `compile_prefix()` say whose selectors these are (called only
// for an error: this runs for every request on every node).
template <typename Prefix1, typename Prefix2>
Status CompileSelectors(const AllocatorInput& in, const std::vector<std::string>& selectors, const Prefix1& empty_prefix,
                        const Prefix2& compile_prefix, std::vector<CompiledSelector>* out) {
  out->reserve(selectors.size());
  for (size_t i = 0; i < selectors.size(); ++i) {
    const std::string& expr = selectors[i];
    if (expr.empty()) {
      return InvalidArgumentError(fmt::format("{}: selector #{}: CEL expression empty (unsupported selector type?)", empty_prefix(), i));
    }
    if (const cel::Program* known = Memoized(in, expr)) {
      out->push_back(CompiledSelector{.program = known});
      continue;
    }
    StatusOr<cel::ProgramPtr> p = in.programs->Get(expr);
    if (p.ok()) {
      out->push_back(CompiledSelector{.program = p->get()});
    } else {
      out->push_back(CompiledSelector{.error = fmt::format("{}: selector #{}: CEL compile error: {}", compile_prefix(), i, p.status().message())});
    }
  }
  return OkStatus();
}

// The feature and admission rules of one request.
template <typename Where>
Status CheckAllowed(const AllocatorInput& in, const ResourceClaim& claim, const ExactRequest& r, const Where& where) {
  if (!r.capacity_requests_milli.empty() && !in.features.consumable_capacity) {
    return InvalidArgumentError(where() + ": capacity requests need the DRAConsumableCapacity feature");
  }
  if (r.admin_access && !in.features.admin_access) return InvalidArgumentError(where() + ": adminAccess needs the DRAAdminAccess feature");
  if (r.admin_access.value_or(false) && in.admin_namespaces != nullptr && !in.admin_namespaces->contains(claim.namespace_name)) {
    return InvalidArgumentError(fmt::format("{}: adminAccess requires namespace {} to be labelled "
                                            "resource.kubernetes.io/admin-access=true",
                                            where(), claim.namespace_name));
  }
  if (r.device_class.empty()) return InvalidArgumentError(where() + ": deviceClassName is empty");
  return OkStatus();
}

// Fills *rd for request (or subrequest) `r` of `claim`, named `name`.
Status CheckRequest(const AllocatorInput& in, const ResourceClaim& claim, const ExactRequest& r, const std::string& name, bool is_sub,
                    RequestData* rd) {
  auto where = [&] { return fmt::format("claim {}/{}, request {}", claim.namespace_name, claim.name, name); };
  GPUSCHED_RETURN_IF_ERROR(CheckAllowed(in, claim, r, where));
  auto cls = in.classes->find(r.device_class);
  if (cls == in.classes->end()) return NotFoundError(fmt::format("{}: could not retrieve device class {}", where(), r.device_class));
  rd->device_class = &cls->second;
  auto class_prefix = [&] { return "class " + r.device_class; };
  GPUSCHED_RETURN_IF_ERROR(
      CompileSelectors(in, cls->second.selectors, class_prefix, class_prefix, &rd->class_selectors));
  auto claim_prefix = [&] { return fmt::format("claim {}/{}", claim.namespace_name, claim.name); };
  GPUSCHED_RETURN_IF_ERROR(CompileSelectors(in, r.selectors, where, claim_prefix, &rd->request_selectors));
  rd->req = &r;
  rd->name = name;
  rd->is_sub = is_sub;
  rd->admin = r.admin_access.value_or(false);
  if (r.allocation_mode == "ExactCount") {
    if (r.count <= 0) return InvalidArgumentError(fmt::format("{}: count {} must be positive", where(), r.count));
    rd->num_devices = r.count;
  } else if (r.allocation_mode == "All") {
    rd->all_mode = true;
  } else {
    return InvalidArgumentError(fmt::format("{}: unsupported count mode {}", where(), r.allocation_mode));
  }
  return OkStatus();
}

// allocationMode All: every selectable device whose static capacity fits, from complete, valid
// pools only.
Status ExpandAll(const NodePools& pools, const DeviceChecks& checks, const ClaimData& cd, RequestData* rd) {
  const ResourceClaim& claim = *cd.claim;
  for (const PoolData& pool : pools.pools) {
    if (pool.incomplete || pool.invalid) {
      return InvalidArgumentError(fmt::format("claim {}/{}, request {}: asks for all devices, but resource pool {}/{} is currently {}",
                                              claim.namespace_name, claim.name, rd->name, pool.driver, pool.name,
                                              pool.incomplete ? "being updated" : "invalid"));
    }
  }
  for (size_t i = 0; i < checks.candidates().size(); ++i) {
    StatusOr<bool> ok = checks.Selectable(cd, *rd, i);
    if (!ok.ok()) return ok.status();
    if (*ok && DeviceChecks::StaticCapacityFits(*rd, checks.candidates()[i])) rd->all_devices.push_back(i);
  }
  rd->num_devices = static_cast<int64_t>(rd->all_devices.size());
  return OkStatus();
}

// The alternatives of one request: itself (exactly), or its subrequests (firstAvailable).
StatusOr<std::vector<RequestData>> Alternatives(const AllocatorInput& in, const ResourceClaim& claim, const DeviceRequest& req) {
  std::vector<RequestData> alternatives;
  if (req.exactly) {
    RequestData rd{.parent = &req};
    GPUSCHED_RETURN_IF_ERROR(CheckRequest(in, claim, *req.exactly, req.name, false, &rd));
    alternatives.push_back(std::move(rd));
    return alternatives;
  }
  if (req.first_available.empty()) {
    return InvalidArgumentError(fmt::format("claim {}/{}, request {}: neither exactly nor firstAvailable is set", claim.namespace_name,
                                            claim.name, req.name));
  }
  if (!in.features.prioritized_list) {
    return InvalidArgumentError(fmt::format("claim {}/{}, request {}: has subrequests, but the DRAPrioritizedList feature is disabled",
                                            claim.namespace_name, claim.name, req.name));
  }
  for (const ExactRequest& sub : req.first_available) {
    RequestData rd{.parent = &req};
    GPUSCHED_RETURN_IF_ERROR(CheckRequest(in, claim, sub, req.name + "/" + sub.name, true, &rd));
    alternatives.push_back(std::move(rd));
  }
  return alternatives;
}

StatusOr<ClaimData> PrepareClaim(const AllocatorInput& in, const NodePools& pools, const DeviceChecks& checks, const ResourceClaim& claim) {
  ClaimData cd{.claim = &claim};
  int64_t min_devices = 0;  // the fewest devices any choice of alternatives needs
  for (const DeviceRequest& req : claim.requests) {
    StatusOr<std::vector<RequestData>> alternatives = Alternatives(in, claim, req);
    if (!alternatives.ok()) return alternatives.status();
    int64_t least = -1;
    for (RequestData& rd : *alternatives) {
      if (rd.all_mode) GPUSCHED_RETURN_IF_ERROR(ExpandAll(pools, checks, cd, &rd));
      least = least < 0 ? rd.num_devices : std::min(least, rd.num_devices);
    }
    min_devices += std::max<int64_t>(least, 0);
    cd.requests.push_back(std::move(alternatives).value());
  }
  if (min_devices > kMaxResults) {
    return InvalidArgumentError(fmt::format("claim {}/{}: number of requested devices {} exceeds the claim limit of {}",
                                            claim.namespace_name, claim.name, min_devices, kMaxResults));
  }
  for (const DeviceConstraint& dc : claim.constraints) {
    if (dc.match_attribute.empty() && dc.distinct_attribute.empty()) {
      return InvalidArgumentError(fmt::format("claim {}/{}: empty constraint (unsupported constraint type?)", claim.namespace_name, claim.name));
    }
  }
  cd.chosen_sub.assign(cd.requests.size(), 0);
  return cd;
}

}  // namespace

StatusOr<std::vector<ClaimData>> PrepareClaims(const AllocatorInput& in, const NodePools& pools, const DeviceChecks& checks) {
  std::vector<ClaimData> claims;
  for (const ResourceClaim* claim : in.claims) {
    StatusOr<ClaimData> cd = PrepareClaim(in, pools, checks, *claim);
    if (!cd.ok()) return cd.status();
    claims.push_back(std::move(cd).value());
  }
  return claims;
}

}  // namespace gpusched::dra
