#include "gpusched/extender/inventory_claim_writer.h"

#include "gpusched/k8s/dra_allocation_json.h"
#include "gpusched/k8s/dra_objects.h"

namespace gpusched::extender {

Status InventoryClaimWriter::Write(const dra::ResourceClaim& claim, const dra::AllocationResult* result, const Pod& pod) {
  GPUSCHED_ASSIGN_OR_RETURN(std::string updated,
                            k8s::ClaimWithAllocation(claim.source_json, result,
                                                     dra::ConsumerRef{.resource = "pods", .name = pod.name, .uid = pod.uid}));
  return inventory_->ReplaceDraClaim(claim.source_json, std::move(updated));
}

}  // namespace gpusched::extender
