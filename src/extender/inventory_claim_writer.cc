#include "gpusched/extender/inventory_claim_writer.h"

#include <algorithm>
#include <charconv>
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

}  // namespace

Status InventoryClaimWriter::Write(const dra::ResourceClaim& claim, const dra::AllocationResult* result, const Pod& pod) {
  dra::ResourceClaim updated = claim;
  if (std::find(updated.finalizers.begin(), updated.finalizers.end(), kDeleteProtection) == updated.finalizers.end()) {
    updated.finalizers.emplace_back(kDeleteProtection);
  }
  if (result != nullptr) updated.allocation = *result;
  updated.reserved_for.push_back(dra::ConsumerRef{.resource = "pods", .name = pod.name, .uid = pod.uid});
  updated.resource_version = NextVersion(claim.resource_version);
  return inventory_->ReplaceDraClaim(std::move(updated), claim.resource_version);
}

}  // namespace gpusched::extender
