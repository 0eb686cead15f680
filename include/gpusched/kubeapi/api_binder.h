// File: api_binder.h
//
// The live bind, in two writes to the API server:
//
//   1. book: merge-PATCH the node's gpusched.io/bookings annotation, adding this pod's placement,
//      with the node's resourceVersion (the one the inventory checked the placement against) as
//      precondition. A 409 means the node changed, perhaps because another replica booked it:
//      the fresh node goes into the inventory and the bind is Aborted, to be planned again.
//      Every replica counts bookings, so two replicas can never both book the last GPU.
//   2. bind: POST pods/binding with the pod's UID as precondition, the result annotations and the
//      node. The API server's binding storage sets spec.nodeName and merges the Binding's
//      annotations into the pod in one write, and refuses a pod already assigned (409), so a pod
//      recreated or bound meanwhile by another replica is never annotated. A 409 "already
//      assigned" to this very node is success (a retried bind).
//
// If 1's outcome is unknown, or 2 is refused, the booking is taken out of the node's annotation
// again (best effort; if that fails too, it expires after the booking TTL). When the Binding's
// outcome is unknown (transport error, 5xx), both bookings stay until the watch shows the pod
// bound or they expire. Expired bookings are pruned at every booking.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <functional>

#include "gpusched/common/clock.h"
#include "gpusched/extender/pod_binder.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubeapi/api_client.h"

namespace gpusched::kubeapi {

struct ApiBinderOptions {
  // Bookings older than this are pruned; must equal the inventories' booking_ttl. Default: 5 min.
  std::chrono::seconds booking_ttl{300};
  // The wall time stamped on bookings. Not owned; must outlive the binder. Default: RealClock().
  const Clock* clock = &RealClock();
  // Each write's time limit; the whole bind stays within the service's bind_deadline plus one.
  std::chrono::milliseconds request_timeout{3000};
};

class ApiBinder : public extender::PodBinder {
 public:
  // REQUIRES: `client` and `inventory` outlive the binder.
  ApiBinder(ApiClient* client, inventory::Inventory* inventory, ApiBinderOptions options = {});

  Status Bind(const extender::BindTarget& target) override;

 private:
  Status Book(const extender::BindTarget& target);
  Status Unbook(const std::string& node, const std::string& pod_uid);
  // Puts the node in `body` (a Node object) into the inventory; returns its resourceVersion.
  std::string StoreNode(const std::string& body);

  ApiClient* const client_;
  inventory::Inventory* const inventory_;
  const ApiBinderOptions options_;
};

}  // namespace gpusched::kubeapi
