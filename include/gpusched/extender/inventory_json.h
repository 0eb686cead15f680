// File: inventory_json.h
//
// The JSON of GET /debug/inventory: per node its mode, label, state and reason, GPUs with usage,
// whole-GPU counts, allocations and the pods blocking a mode switch.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/extender/domain_steering.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/inventory/snapshot.h"
#include "gpusched/placement/dra_planner.h"

namespace gpusched::extender {

// One recent DRA decision: a fitting node's upstream-compatible and ranked device choice.
struct DraDecisionView {
  std::string pod;
  std::string node;
  const placement::DraVerdict* verdict = nullptr;
};

// Returns the inventory document for `snapshot`; only node `node` when it is non-empty. `errors`
// are the objects that could not be read (Inventory::Errors()).
// `fragmented_pct`, when given, goes into "summary": {"fragmentedPct"} (FGD's measure for the
// running workload, placement/defrag_planner.h's FragmentedPct). `compact`: one member a line,
// not indented (a third of the bytes of the indented form, for /ui at thousands of nodes).
// `domain_key`: the label each node's domain is read from. `domains`, for the whole inventory:
// that label's domain index on `snapshot` (domain_steering.h; null: none), written as the nodes
// grouped by domain, each with its free GPUs, the GPUs stranded on nodes partly in use, and the
// domain with the most idle nodes (the largest gang of whole nodes that fits in one domain now),
// the gangs' demands, and the domain kept for a waiting gang ("keptFor"); no labelled node: none.
std::string EncodeInventory(const inventory::InventorySnapshot& snapshot, const inventory::InventoryStats& stats,
                            std::string_view node, const std::vector<DraDecisionView>& dra_decisions = {},
                            const std::vector<std::string>& errors = {},
                            std::optional<double> fragmented_pct = std::nullopt, bool compact = false,
                            const std::string& domain_key = "", const DomainIndex* domains = nullptr);

}  // namespace gpusched::extender
