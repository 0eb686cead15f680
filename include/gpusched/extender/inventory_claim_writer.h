// File: inventory_claim_writer.h
//
// Owner mode in snapshot mode: claim allocations are applied to the inventory's in-memory
// ResourceClaims (there is no API server to write to). A special claim gets the name the API
// server would complete from its generateName (five characters of its alphabet, derived from the
// pod's UID, the next ones on a clash) and a UID derived from that name.
#pragma once

#include "gpusched/extender/claim_writer.h"
#include "gpusched/inventory/inventory.h"

namespace gpusched::extender {

class InventoryClaimWriter : public ClaimWriter {
 public:
  // REQUIRES: `inventory` outlives the writer.
  explicit InventoryClaimWriter(inventory::Inventory* inventory) : inventory_(inventory) {}
  StatusOr<dra::ResourceClaim> Write(const dra::ResourceClaim& claim, const dra::AllocationResult* result,
                                     const Pod& pod) override;
  Status Unreserve(const dra::ResourceClaim& claim, const std::vector<std::string>& pods, bool deallocate) override;
  StatusOr<dra::ResourceClaim> CreateSpecial(const dra::SpecialClaim& special, const dra::AllocationResult& result,
                                             const Pod& pod) override;

 private:
  inventory::Inventory* const inventory_;
};

}  // namespace gpusched::extender
