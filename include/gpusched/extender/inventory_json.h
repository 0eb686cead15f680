// File: inventory_json.h
//
// The JSON of GET /debug/inventory: per node its mode, label, state and reason, GPUs with usage,
// whole-GPU counts, allocations and the pods blocking a mode switch.
#pragma once

#include <string>
#include <string_view>

#include "gpusched/inventory/inventory.h"
#include "gpusched/inventory/snapshot.h"

namespace gpusched::extender {

// Returns the inventory document for `snapshot`; only node `node` when it is non-empty.
std::string EncodeInventory(const inventory::InventorySnapshot& snapshot, const inventory::InventoryStats& stats,
                            std::string_view node);

}  // namespace gpusched::extender
