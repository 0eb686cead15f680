// File: event_recorder.h
//
// Posts Warning Events (core/v1, reason FailedGPUPlacement) on pods that fit no node, from a
// thread of its own so that filter never waits for the API server. Rate-limited twice: at most one
// Event per pod per per_pod_interval, and a token bucket over all pods; what exceeds either, or
// finds the queue full, is dropped and counted.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include "gpusched/common/clock.h"
#include "gpusched/common/mutex.h"
#include "gpusched/common/token_bucket.h"
#include "gpusched/extender/event_sink.h"
#include "gpusched/kubeapi/api_client.h"

namespace gpusched::kubeapi {

struct EventRecorderOptions {
  std::chrono::seconds per_pod_interval{60};
  double qps = 1;  // Events per second over all pods, with a burst
  double burst = 10;
  size_t max_queue = 1000;
  std::string component = "gpusched";
  std::string host;  // source.host; default: the hostname
  // The wall time of per-pod intervals and Event stamps. Not owned; must outlive the recorder.
  // Default: RealClock().
  const Clock* clock = &RealClock();
};

struct EventRecorderStats {
  uint64_t posted = 0;
  uint64_t dropped = 0;  // rate-limited, queue full, or the API refused
};

class EventRecorder : public extender::EventSink {
 public:
  // REQUIRES: `client` outlives the recorder.
  EventRecorder(ApiClient* client, EventRecorderOptions options = {});
  ~EventRecorder() override;  // Posts nothing more; joins.

  void Unschedulable(const Pod& pod, std::string message) override;
  bool WouldPost(const Pod& pod) const override;

  // Waits until the queue is empty and nothing is being posted, or `timeout`.
  bool WaitIdle(std::chrono::milliseconds timeout);
  EventRecorderStats stats() const;

 private:
  struct Pending {
    Pod pod;
    std::string message;
    int64_t at_ms;
  };

  void Run() GPUSCHED_EXCLUDES(mu_);
  // Waits for a queued event and takes it (busy_ set); nullopt once stopping.
  std::optional<Pending> NextPending() GPUSCHED_EXCLUDES(mu_);
  void Post(const Pending& p) GPUSCHED_EXCLUDES(mu_);

  ApiClient* const client_;
  const EventRecorderOptions options_;
  TokenBucket bucket_;
  mutable Mutex mu_;
  CondVar cv_{&mu_};
  std::deque<Pending> queue_ GPUSCHED_GUARDED_BY(mu_);
  // When each pod's last Event was queued.
  std::unordered_map<std::string, int64_t> last_by_uid_ GPUSCHED_GUARDED_BY(mu_);
  bool busy_ GPUSCHED_GUARDED_BY(mu_) = false;
  bool stopping_ GPUSCHED_GUARDED_BY(mu_) = false;
  EventRecorderStats stats_ GPUSCHED_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace gpusched::kubeapi
