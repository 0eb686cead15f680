// File: reflector.h
//
// Keeps a handler in sync with one resource type of the API server, the way client-go's
// reflector does: LIST (paged with limit/continue; the first from the watch cache with
// resourceVersion=0), hand the complete set to the handler, then WATCH from the list's
// resourceVersion with bookmarks, handing over the events of every read in order. A watch that
// ends is resumed from the last resourceVersion seen (bookmarks included); 410 Gone (as the
// watch's status or an in-stream ERROR) means a consistent relist. Every other failure
// (transport, 429, 5xx, 403, a stream that goes silent) is retried after a capped exponential
// backoff with jitter, honouring Retry-After. A type the server does not serve (404 on LIST)
// counts as synced and empty, and is asked for again after the maximum backoff.
//
// Runs on a thread of its own between Start() and Stop().
#pragma once

#include <rapidjson/document.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/common/clock.h"
#include "gpusched/common/mutex.h"
#include "gpusched/common/random.h"
#include "gpusched/kubeapi/api_client.h"
#include "gpusched/kubeapi/watch_event.h"

namespace gpusched::kubeapi {

struct ResourceType {
  std::string name;            // "pods"; used in logs
  std::string path;            // "/api/v1/pods"
  std::string field_selector;  // e.g. "spec.nodeName!=" (not URL-encoded); "" = none
};

// Receives what a Reflector learns. Called from the reflector's thread only.
class ReflectorHandler {
 public:
  virtual ~ReflectorHandler() = default;
  // The complete current set of the type (every page of one LIST).
  virtual void Replace(const std::vector<const rapidjson::Value*>& items) = 0;
  // ADDED, MODIFIED and DELETED events of one read of the stream, in order.
  virtual void Apply(const std::vector<const WatchEvent*>& events) = 0;
};

struct ReflectorOptions {
  int64_t page_size = 500;
  // A LIST page that sends nothing for this long is given up (there is no limit on its total
  // time: a big unpaged list may take long). Default: 60 s.
  std::chrono::seconds list_idle_timeout{60};
  // Watches ask for timeoutSeconds drawn from [min_watch_timeout, 2 * min_watch_timeout), so that
  // reconnects spread out (client-go: 5 min).
  std::chrono::seconds min_watch_timeout{300};
  // A watch with no byte for its timeout plus this long is considered dead.
  std::chrono::seconds watch_idle_slack{60};
  std::chrono::milliseconds backoff_initial{800};
  std::chrono::milliseconds backoff_max{30'000};
  double backoff_jitter = 1.0;
  // Seeds the reflector's one random source (backoff jitter, watch timeouts). 0: from the clock.
  uint64_t seed = 0;
  // When failures started (stats().failing_since). Not owned; must outlive. Default: RealClock().
  const Clock* clock = &RealClock();
};

struct ReflectorStats {
  bool synced = false;   // a LIST completed (or the type is not served)
  bool served = true;    // false after a 404 on LIST
  uint64_t lists = 0;    // completed LISTs
  uint64_t relists = 0;  // of which after 410 Gone
  uint64_t watches = 0;  // watch requests made
  uint64_t events = 0;   // ADDED/MODIFIED/DELETED applied
  uint64_t errors = 0;   // failures that led to a backoff
  // Since when every attempt has failed (no list completed, no watch opened); nullopt while the
  // last attempt succeeded or its watch is open.
  std::optional<std::chrono::steady_clock::time_point> failing_since;
  std::string resource_version;  // where the next watch starts
  std::string last_error;
  // A LIST was refused (403 Forbidden: the ClusterRole does not allow it) since the last one
  // that succeeded: retrying will not help until someone grants it. A 401 is not counted: the
  // token is re-read and the next attempt may pass.
  bool refused = false;
};

class Reflector {
 public:
  // REQUIRES: `client` and `handler` outlive the reflector.
  Reflector(ApiClient* client, ResourceType type, ReflectorHandler* handler, ReflectorOptions options = {});
  ~Reflector();  // Stop()s.
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  void Start();
  // Cancels the stream in progress and joins the thread. Idempotent.
  void Stop();

  bool synced() const { return synced_.load(); }
  ReflectorStats stats() const;
  const ResourceType& type() const { return type_; }

 private:
  enum class Next { kWatch, kRelist };

  void Run();
  Status List(bool consistent);
  // Returns kWatch to resume from resource_version_, kRelist after 410; errors mean back off.
  StatusOr<Next> Watch();
  // Sleeps `d` unless Stop() comes first; returns false if stopping.
  bool Sleep(std::chrono::milliseconds d) GPUSCHED_EXCLUDES(sleep_mu_);
  void Fail(const Status& s) GPUSCHED_EXCLUDES(stats_mu_);
  void Succeeded() GPUSCHED_EXCLUDES(stats_mu_);

  ApiClient* const client_;
  const ResourceType type_;
  ReflectorHandler* const handler_;
  const ReflectorOptions options_;

  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> synced_{false};
  StreamCancel cancel_;
  Mutex sleep_mu_;  // pairs Stop() with Sleep(): stopping_ is atomic, the mutex orders the signal
  CondVar sleep_cv_{&sleep_mu_};
  std::chrono::seconds retry_after_{0};
  Rng rng_;  // reflector thread only

  mutable Mutex stats_mu_;
  ReflectorStats stats_ GPUSCHED_GUARDED_BY(stats_mu_);
  std::string resource_version_;  // reflector thread only; mirrored in stats_
};

}  // namespace gpusched::kubeapi
