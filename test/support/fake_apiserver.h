// File: fake_apiserver.h
//
// An in-process Kubernetes API server for tests, speaking the real protocol on a real socket
// (HTTP or HTTPS on 127.0.0.1, port 0): LIST with limit/continue and the list's resourceVersion,
// WATCH as a chunked stream of JSON lines from a resourceVersion (with bookmarks, field selectors
// on spec.nodeName and status.phase, and 410 for compacted history), GET, JSON merge PATCH with
// resourceVersion and UID preconditions (409), pods/binding with the registry's rules (UID
// precondition, "already assigned", annotations merged), and events. Tests inject faults: status
// codes for the next matching requests, slow answers, watch streams ended, expired or dropped, and
// watch events cut into chunks at arbitrary byte boundaries. Every request is recorded.
//
// Resources: nodes, pods, events (core/v1); resourceslices, resourceclaims, deviceclasses
// (resource.k8s.io/v1); pod groups; Kueue's objects; leases.
//
// Thread-safe. Beast stays in fake_apiserver.cc.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched::testing {

struct RecordedRequest {
  std::string method;
  std::string target;
  std::string content_type;
  std::string authorization;
  std::string body;
};

struct FakeApiServerOptions {
  std::string cert_file;  // HTTPS when set (with key_file)
  std::string key_file;
  std::string token;  // when set, a request without "Authorization: Bearer <token>" gets 401
  // > 0: watch output is written in chunks of 1..watch_piece_max bytes, cut anywhere (seeded).
  size_t watch_piece_max = 0;
  uint32_t seed = 1;
  // As the real watch cache: a LIST with resourceVersion=0 ignores limit and answers everything.
  bool unpaged_rv0 = false;
  // The resource.k8s.io version served (GET /apis/resource.k8s.io lists it; objects are served
  // as stored, with this apiVersion): "v1" (1.34+), "v1beta2" (1.33), "v1beta1" (1.32), or ""
  // for a cluster that does not serve the group.
  std::string dra_version = "v1";
  // The resource.k8s.io version DeviceTaintRules are served at ("v1" from 1.37, "v1beta2",
  // "v1alpha3"), "" when not at all (the feature gate off). GET /apis/resource.k8s.io/<version>
  // lists each version's resources.
  std::string taint_rule_version = "v1";
  // Pod groups, "" where not served (the default: GenericWorkload is off by default, and
  // Coscheduling is a CRD installed with scheduler-plugins). scheduling.k8s.io itself is always
  // served (v1 PriorityClasses); its PodGroups at pod_group_version ("v1beta1" in 1.37,
  // "v1alpha2" in 1.36) and Workloads at workload_version ("v1alpha1", 1.35); Coscheduling's
  // PodGroups at scheduling.x-k8s.io/coscheduling_version ("v1alpha1"), stored as resource
  // "podgroups.scheduling.x-k8s.io".
  std::string pod_group_version;
  std::string workload_version;
  std::string coscheduling_version;
  // Kueue's CRDs (kueue.x-k8s.io: workloads with status, resourceflavors, admissionchecks with
  // status, clusterqueues) at this version, "" when not installed. Workloads are stored as
  // resource "workloads.kueue.x-k8s.io". Leases (coordination.k8s.io/v1) are always served.
  std::string kueue_version;
};

struct Fault {
  std::string method;
  std::string path_prefix;
  int status = 500;  // 0: close the connection without an answer
  int count = 1;
  std::chrono::milliseconds delay{0};
  bool apply_first = false;  // carry the request out, then fail (the outcome is lost)
  int skip = 0;              // the first `skip` matching requests are answered as usual
  std::string query_has;     // non-empty: only requests whose query string holds this text match
};

class FakeApiServer {
 public:
  explicit FakeApiServer(FakeApiServerOptions options = {});
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  uint16_t port() const;
  std::string url() const;

  // Creates or replaces an object (JSON without kind needed). Sets metadata.resourceVersion, and
  // metadata.uid when missing; records the watch event. Returns the stored object.
  std::string Put(std::string_view resource, std::string_view json);
  // Deletes an object; records the DELETED event. False if there was none.
  bool Remove(std::string_view resource, std::string_view ns, std::string_view name);
  std::optional<std::string> Get(std::string_view resource, std::string_view ns, std::string_view name) const;
  std::vector<std::string> Objects(std::string_view resource) const;
  std::string resource_version() const;

  // The next `count` requests whose method matches and whose path starts with `path_prefix`
  // are answered with `status` and a Status body (after `delay`, if any).
  void FailNext(std::string method, std::string path_prefix, int status, int count = 1,
                std::chrono::milliseconds delay = std::chrono::milliseconds(0));
  void Inject(Fault fault);
  void ClearFaults();
  // Closes every kept-alive connection that waits for its next request (watches stay).
  void CloseIdleConnections();
  // Requests whose path starts with `path_prefix` are answered `delay` late.
  void SetDelay(std::string path_prefix, std::chrono::milliseconds delay);
  // Forgets the watch history: a watch from an older resourceVersion gets 410 Gone.
  void CompactHistory();
  // Open watches: send an in-stream ERROR 410 and end / send a BOOKMARK / end cleanly / reset the
  // connection in the middle of the stream.
  void ExpireWatches();
  void Bookmark();
  void EndWatches();
  void DropWatches();
  // Continue tokens handed out so far answer 410 Gone.
  void ExpireContinueTokens();
  int open_watches() const;

  std::vector<RecordedRequest> Requests() const;
  void ClearRequests();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched::testing
