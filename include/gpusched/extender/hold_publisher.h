// File: hold_publisher.h
//
// What makes an applied defrag plan's holds (defrag.h) known to every gpusched replica: the live
// one (kubeapi/api_hold_publisher.h) writes them to the node annotation gpusched.io/holds
// (kubejson/node_holds.h), which every replica's inventory counts. Without a publisher (snapshot
// mode) holds live in this replica's memory only.
#pragma once

#include <string>

#include "gpusched/common/status.h"
#include "gpusched/model/node.h"

namespace gpusched::extender {

class HoldPublisher {
 public:
  virtual ~HoldPublisher() = default;
  // Adds `hold` to its node's annotation (replacing one about the same pod, dropping holds past
  // their time), if the node is still at resourceVersion `node_version`, the one the hold was
  // checked against. Errors: Aborted when the node changed since (check the hold again on the
  // fresh node, which the publisher has given the inventory); NotFound when the node is gone;
  // FailedPrecondition when the API server refuses it; Unavailable when the outcome is unknown.
  virtual Status Publish(const NodeHold& hold, const std::string& node_version) = 0;
  // Takes the hold about pod `about_uid` out of `node`'s annotation (a move that failed). Best
  // effort: a hold left behind runs out on its own.
  virtual Status Withdraw(const std::string& node, const std::string& about_uid) = 0;
};

}  // namespace gpusched::extender
