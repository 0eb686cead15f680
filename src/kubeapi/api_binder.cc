// File: api_binder.cc
//
// The live bind's writes: a booking merge-patched into gpusched.io/bookings at the checked
// resourceVersion (409: the fresh node stored, Aborted), the Binding with the result annotations
// under the UID precondition, and a booking taken back with retries.
#include "gpusched/kubeapi/api_binder.h"

#include <fmt/format.h>

#include "gpusched/common/log.h"
#include "gpusched/json/json.h"
#include "gpusched/kubejson/node_bookings.h"
#include "gpusched/kubejson/objects.h"
#include "gpusched/model/names.h"
#include "node_writes.h"

namespace gpusched::kubeapi {
namespace {

using node_writes::ApiError;
using node_writes::NodePath;

constexpr int kUnbookAttempts = 3;

void AppendAnnotations(std::string* out, const AnnotationMap& annotations) {
  *out += '{';
  bool first = true;
  for (const auto& [key, value] : annotations) {
    if (!first) *out += ',';
    first = false;
    json::AppendString(out, key);
    *out += ':';
    json::AppendString(out, value);
  }
  *out += '}';
}

std::string BookingsPatch(const std::string& resource_version, const std::vector<NodeBooking>& bookings) {
  return node_writes::AnnotationPatch(resource_version, names::kBookingsAnnotation, kubejson::EncodeNodeBookings(bookings));
}

}  // namespace

ApiBinder::ApiBinder(ApiClient* client, inventory::Inventory* inventory, ApiBinderOptions options)
    : client_(client), inventory_(inventory), options_(std::move(options)) {}

Status ApiBinder::Book(const extender::BindTarget& t) {
  const Node& node = t.node;
  if (node.resource_version.empty()) {
    return FailedPreconditionError(fmt::format("node {} has no resourceVersion to book against", node.name));
  }
  int64_t now = options_.clock->WallMs();
  std::vector<NodeBooking> bookings;
  for (const NodeBooking& b : node.bookings) {
    if (BookingFresh(b.booked_at_ms, now, options_.booking_ttl) && b.allocation.pod_uid != t.pod.uid) {
      bookings.push_back(b);
    }
  }
  NodeBooking mine{.allocation = t.allocation, .booked_at_ms = now};
  mine.allocation.origin = AllocationOrigin::kBooked;
  mine.allocation.node_name = node.name;
  bookings.push_back(std::move(mine));

  StatusOr<ApiResponse> r = client_->Send("PATCH", NodePath(node.name), BookingsPatch(node.resource_version, bookings),
                                          kMergePatch, options_.request_timeout);
  if (!r.ok() || r->status >= 500) {
    // The booking may or may not have been stored: take it out again (best effort; else it expires).
    Status undo = Unbook(node.name, t.pod.uid);
    if (!undo.ok()) log::Warning("booking of pod {} on node {} left to expire: {}", t.pod.uid, node.name, undo.message());
    return UnavailableError(r.ok() ? ApiError(fmt::format("booking on node {}", node.name), *r) : r.status().message());
  }
  if (r->status == 200) {
    // The node as it is now, our booking included: later binds on it check against this.
    StoreNode(r->body);
    return OkStatus();
  }
  if (r->status == 409) {
    // Someone changed the node since it was checked: take the fresh object in, then plan again.
    StatusOr<ApiResponse> fresh = client_->Send("GET", NodePath(node.name), {}, "application/json", options_.request_timeout);
    std::string seen = fresh.ok() && fresh->status == 200 ? StoreNode(fresh->body) : "unknown";
    return AbortedError(fmt::format("node {} changed since it was checked (resourceVersion {} is now {})", node.name,
                                    node.resource_version, seen));
  }
  if (r->status == 404) return NotFoundError(fmt::format("node {} is gone", node.name));
  return FailedPreconditionError(ApiError(fmt::format("booking on node {}", node.name), *r));
}

std::string ApiBinder::StoreNode(const std::string& body) { return node_writes::StoreNode(inventory_, body); }

Status ApiBinder::Unbook(const std::string& node, const std::string& pod_uid) {
  for (int attempt = 0; attempt < kUnbookAttempts; ++attempt) {
    StatusOr<Node> read = node_writes::GetNode(client_, node, options_.request_timeout);
    if (read.status().code() == StatusCode::kNotFound) return OkStatus();
    GPUSCHED_ASSIGN_OR_RETURN(Node current, std::move(read));
    std::vector<NodeBooking> kept;
    for (const NodeBooking& b : current.bookings) {
      if (b.allocation.pod_uid != pod_uid) kept.push_back(b);
    }
    if (kept.size() == current.bookings.size()) return OkStatus();
    GPUSCHED_ASSIGN_OR_RETURN(ApiResponse r, client_->Send("PATCH", NodePath(node), BookingsPatch(current.resource_version, kept),
                                                           kMergePatch, options_.request_timeout));
    if (r.status == 200) return OkStatus();
    if (r.status != 409) return UnavailableError(ApiError("unbooking on node " + node, r));
  }
  return AbortedError(fmt::format("node {} kept changing", node));
}

Status ApiBinder::Bind(const extender::BindTarget& t) {
  const Pod& pod = t.pod;
  bool booked = !t.allocation.placement.empty();
  if (booked) GPUSCHED_RETURN_IF_ERROR(Book(t));

  auto undo = [&](Status failure) {
    if (booked) {
      Status s = Unbook(t.node.name, pod.uid);
      if (!s.ok()) {
        log::Write(log::Level::kWarning, "booking left to expire",
                   {{"node", t.node.name}, {"pod_uid", pod.uid}, {"error", s.message()}});
      }
    }
    return failure;
  };

  // The Binding carries the result annotations: the API server's binding storage merges them
  // into the pod in the same write that sets spec.nodeName (setPodHostAndAnnotations), so no
  // separate pod PATCH, and no pod patch permission, is needed.
  std::string pod_path = fmt::format("/api/v1/namespaces/{}/pods/{}", pod.namespace_name, pod.name);
  std::string binding = R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":)";
  json::AppendString(&binding, pod.name);
  binding += R"(,"namespace":)";
  json::AppendString(&binding, pod.namespace_name);
  binding += R"(,"uid":)";
  json::AppendString(&binding, pod.uid);
  if (!t.annotations.empty()) {
    binding += R"(,"annotations":)";
    AppendAnnotations(&binding, t.annotations);
  }
  binding += R"(},"target":{"apiVersion":"v1","kind":"Node","name":)";
  json::AppendString(&binding, t.node.name);
  binding += "}}";
  StatusOr<ApiResponse> r = client_->Send("POST", pod_path + "/binding", binding, "application/json", options_.request_timeout);
  if (!r.ok() || r->status >= 500) {
    // The Binding may have been stored: keep the bookings until the watch shows the pod bound or
    // they expire.
    std::string why = r.ok() ? ApiError("binding", *r) : r.status().message();
    return DeadlineExceededError(fmt::format("outcome unknown ({}); the GPUs stay booked until the pod is seen", why));
  }
  if (r->status == 201 || r->status == 200) return OkStatus();
  std::string message = StatusMessage(*r);
  if (r->status == 409 && message.find(fmt::format("is already assigned to node \"{}\"", t.node.name)) != std::string::npos) {
    return OkStatus();  // a retry of a bind that went through
  }
  if (r->status == 404) return undo(NotFoundError(fmt::format("pod {}/{} is gone", pod.namespace_name, pod.name)));
  if (r->status == 409) return undo(FailedPreconditionError(ApiError("binding", *r)));
  return undo(UnavailableError(ApiError("binding", *r)));
}

}  // namespace gpusched::kubeapi
