// File: hold_writer.cc
//
// A hold made in the inventory and written to its node, or ended in both.
#include "gpusched/extender/hold_writer.h"

#include <fmt/format.h>

#include "gpusched/common/log.h"

namespace gpusched::extender {
namespace {

// A node changed under a hold being written is checked again this many times.
constexpr int kHoldAttempts = 3;

}  // namespace

void HoldWriter::Unpublish(const std::string& node, const std::string& about_uid) const {
  if (publisher == nullptr) return;
  Status s = publisher->Withdraw(node, about_uid);
  if (!s.ok()) log::Warning("hold about pod {} on node {} left to run out: {}", about_uid, node, s.message());
}

Status HoldWriter::Hold(const std::string& holder, const Allocation& about, const std::string& node, const Placement& placement,
                        const std::set<std::string, std::less<>>& leaving) const {
  for (int attempt = 1;; ++attempt) {
    StatusOr<inventory::HoldMade> made = inventory->HoldFor(holder, about, node, placement, ttl, leaving);
    if (!made.ok() || publisher == nullptr) return made.status();
    Status written = publisher->Publish(made->hold, made->node_version);
    if (written.ok()) {
      if (!made->replaced_node.empty()) Unpublish(made->replaced_node, about.pod_uid);  // moved from there
      return written;
    }
    inventory->DropHold(about.pod_uid);
    if (written.code() != StatusCode::kAborted || attempt == kHoldAttempts) {
      if (written.code() == StatusCode::kUnavailable) Unpublish(node, about.pod_uid);  // it may have landed
      return FailedPreconditionError(fmt::format("hold on {} for {}/{} not written: {}", node, about.pod_namespace,
                                                 about.pod_name, written.message()));
    }
  }
}

void HoldWriter::Unhold(const std::string& node, const std::string& about_uid) const {
  inventory->DropHold(about_uid);
  Unpublish(node, about_uid);
}

}  // namespace gpusched::extender
