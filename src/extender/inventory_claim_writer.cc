// File: inventory_claim_writer.cc
//
// Owner mode's claim writes without an API server: finalizer, allocation, reservedFor and the next
// resourceVersion applied to the inventory's ResourceClaims, special claims named from the
// generateName alphabet with a derived UID, and unreserve.
#include "gpusched/extender/inventory_claim_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <string>

namespace gpusched::extender {
namespace {

constexpr std::string_view kDeleteProtection = "resource.kubernetes.io/delete-protection";

// The resourceVersion after a write, as an API server would give: the next integer (snapshot
// files carry etcd revisions); other text gets a suffix, so that it differs.
std::string NextVersion(const std::string& version) {
  uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(version.data(), version.data() + version.size(), n);
  if (ec == std::errc() && ptr == version.data() + version.size()) return std::to_string(n + 1);
  return version + "+1";
}

// The API server's alphabet for generated names (no vowels, no look-alikes).
constexpr std::string_view kNameAlphabet = "bcdfghjklmnpqrstvwxz2456789";
constexpr int kNameAttempts = 8;

std::string NameSuffix(uint64_t seed) {
  std::string out;
  for (int i = 0; i < 5; ++i) {
    out.push_back(kNameAlphabet[seed % kNameAlphabet.size()]);
    seed /= kNameAlphabet.size();
  }
  return out;
}

// A UUID-shaped ID derived from `text` (stable across runs, so replays are repeatable).
std::string DerivedUid(const std::string& text) {
  uint64_t a = std::hash<std::string>{}(text);
  uint64_t b = std::hash<std::string>{}(fmt::format("{}/uid", text));
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xffff, b >> 48,
                     b & 0xffffffffffffULL);
}

}  // namespace

Status InventoryClaimWriter::Unreserve(const dra::ResourceClaim& claim, const std::vector<std::string>& pods, bool deallocate) {
  dra::ResourceClaim updated = claim;
  std::erase_if(updated.reserved_for, [&](const dra::ConsumerRef& r) { return std::find(pods.begin(), pods.end(), r.uid) != pods.end(); });
  if (deallocate) {
    updated.allocation.reset();
    updated.device_statuses.clear();
    std::erase(updated.finalizers, std::string(kDeleteProtection));
  }
  updated.resource_version = NextVersion(claim.resource_version);
  return inventory_->ReplaceDraClaim(std::move(updated), claim.resource_version);
}

StatusOr<dra::ResourceClaim> InventoryClaimWriter::CreateSpecial(const dra::SpecialClaim& special,
                                                                 const dra::AllocationResult& result, const Pod& pod) {
  Status last;
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    dra::ResourceClaim claim = special.claim;
    claim.name = fmt::format("{}{}", special.claim.name, NameSuffix(std::hash<std::string>{}(pod.uid) + static_cast<uint64_t>(attempt)));
    claim.uid = DerivedUid(fmt::format("{}/{}", claim.namespace_name, claim.name));
    claim.resource_version = std::to_string(1);  // (a literal trips GCC 12's -Wrestrict false positive)
    claim.finalizers = {std::string(kDeleteProtection)};
    claim.allocation = result;
    claim.reserved_for = {dra::ConsumerRef{.resource = "pods", .name = pod.name, .uid = pod.uid}};
    Pod recorded = inventory_->FindPod(pod.uid).value_or(pod);
    recorded.extended_resource_claim = claim.name;
    last = inventory_->CreateDraClaim(claim, std::move(recorded));
    if (last.ok()) return claim;
  }
  return last;
}

StatusOr<dra::ResourceClaim> InventoryClaimWriter::Write(const dra::ResourceClaim& claim, const dra::AllocationResult* result,
                                                         const Pod& pod) {
  dra::ResourceClaim updated = claim;
  if (std::find(updated.finalizers.begin(), updated.finalizers.end(), kDeleteProtection) == updated.finalizers.end()) {
    updated.finalizers.emplace_back(kDeleteProtection);
  }
  if (result != nullptr) updated.allocation = *result;
  updated.reserved_for.push_back(dra::ConsumerRef{.resource = "pods", .name = pod.name, .uid = pod.uid});
  updated.resource_version = NextVersion(claim.resource_version);
  GPUSCHED_RETURN_IF_ERROR(inventory_->ReplaceDraClaim(updated, claim.resource_version));
  return updated;
}

}  // namespace gpusched::extender
