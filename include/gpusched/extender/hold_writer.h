// File: hold_writer.h
//
// HoldWriter: making and ending holds in the inventory (Inventory::HoldFor) and on their node
// (the publisher's annotation gpusched.io/holds), as one step: a defrag plan's holds and a gang's
// slots are made by it. A hold written is checked again when its node changed meanwhile (up to
// three times); one the publisher refuses is dropped here too, so that this replica never keeps
// a hold the others do not see. Without a publisher (snapshot mode) holds live in this replica's
// memory only.
//
// Thread-safety: as the inventory and the publisher it calls; no state of its own.
#pragma once

#include <chrono>
#include <set>
#include <string>

#include "gpusched/common/status.h"
#include "gpusched/extender/hold_publisher.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/model/allocation.h"

namespace gpusched::extender {

struct HoldWriter {
  inventory::Inventory* inventory = nullptr;  // not owned
  HoldPublisher* publisher = nullptr;         // not owned; null: this replica's memory only
  std::chrono::seconds ttl{300};

  // Holds `placement` on `node` for `holder` about pod `about` (Inventory::HoldFor, with `leaving`
  // gone), and writes it to the node. Errors: as HoldFor; FailedPrecondition naming the node and
  // pod when the write failed (nothing is then held).
  Status Hold(const std::string& holder, const Allocation& about, const std::string& node, const Placement& placement,
              const std::set<std::string, std::less<>>& leaving = {}) const;
  // Ends the hold about pod `about_uid` here and in `node`'s annotation (best effort there: a
  // hold left behind runs out on its own).
  void Unhold(const std::string& node, const std::string& about_uid) const;
  // Takes the hold about `about_uid` out of `node`'s annotation only.
  void Unpublish(const std::string& node, const std::string& about_uid) const;
};

}  // namespace gpusched::extender
