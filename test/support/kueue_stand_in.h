// File: kueue_stand_in.h
//
// Kueue and the API server as gpusched's admission check sees them, in process: a KueueWriter
// whose writes land in the inventory's Kueue objects at once, at a new resourceVersion, as the
// watch would bring them. Leads unless told otherwise. Counts its writes.
#pragma once

#include <string>

#include "gpusched/extender/kueue_writer.h"
#include "gpusched/inventory/inventory.h"

namespace gpusched::testing {

class KueueStandIn : public extender::KueueWriter {
 public:
  explicit KueueStandIn(inventory::Inventory* inventory) : inventory_(inventory) {}
  bool Leading() override { return leading; }
  Status SetCheckState(const kueue::Workload& w, const std::string& check, const extender::CheckUpdate& update) override {
    ++attempts;
    if (!refuse.ok()) return refuse;
    kueue::Workload next = w;
    for (kueue::CheckStatus& c : next.checks) {
      if (c.name == check) c = kueue::CheckStatus{.name = check, .state = update.state, .message = update.message};
    }
    next.resource_version = std::to_string(++rv_);
    inventory_->kueue().Apply(inventory::KueueDelta{.upserts = {.workloads = {next}}});
    ++writes;
    last = update;
    return OkStatus();
  }
  Status Activate(const kueue::AdmissionCheck& check) override {
    kueue::AdmissionCheck active = check;
    active.active = true;
    inventory_->kueue().Apply(inventory::KueueDelta{.upserts = {.checks = {active}}});
    return OkStatus();
  }

  bool leading = true;
  Status refuse = OkStatus();  // when set, every state write is refused so
  int attempts = 0;            // state writes asked for
  int writes = 0;              // and made
  extender::CheckUpdate last;  // the last state written

 private:
  inventory::Inventory* inventory_;
  int rv_ = 1000;
};

}  // namespace gpusched::testing
