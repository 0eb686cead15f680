// File: api_hold_publisher.h
//
// The live HoldPublisher (extender/hold_publisher.h): merge-PATCHes the node annotation
// gpusched.io/holds (kubejson/node_holds.h) with the node's resourceVersion as precondition, as
// the binder writes gpusched.io/bookings, so that two replicas' holds and bookings on one node
// serialize: a write against a node that changed meanwhile gets 409, the fresh node goes into the
// inventory and the caller checks its hold again. Holds past their time are pruned at every write.
// The node the API server answers with goes into the inventory at once.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "gpusched/common/clock.h"
#include "gpusched/extender/hold_publisher.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubeapi/api_client.h"

namespace gpusched::kubeapi {

struct ApiHoldPublisherOptions {
  // The wall time holds are pruned by. Not owned; must outlive the publisher. Default: RealClock().
  const Clock* clock = &RealClock();
  std::chrono::milliseconds request_timeout{3000};  // each request's time limit
};

class ApiHoldPublisher : public extender::HoldPublisher {
 public:
  // REQUIRES: `client` and `inventory` outlive the publisher.
  ApiHoldPublisher(ApiClient* client, inventory::Inventory* inventory, ApiHoldPublisherOptions options = {})
      : client_(client), inventory_(inventory), options_(options) {}

  Status Publish(const NodeHold& hold, const std::string& node_version) override;
  Status Withdraw(const std::string& node, const std::string& about_uid) override;

 private:
  // The holds of `node` that are still fresh and not about `about_uid`.
  std::vector<NodeHold> Kept(const Node& node, const std::string& about_uid) const;
  // PATCHes `holds` onto `node` at `version`: OK (the answer stored), Aborted on 409 (the fresh
  // node stored), NotFound, FailedPrecondition when refused (4xx), or Unavailable (unknown).
  Status Write(const std::string& node, const std::string& version, const std::vector<NodeHold>& holds);

  ApiClient* const client_;
  inventory::Inventory* const inventory_;
  const ApiHoldPublisherOptions options_;
};

}  // namespace gpusched::kubeapi
