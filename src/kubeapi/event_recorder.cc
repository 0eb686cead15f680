// File: event_recorder.cc
//
// Event posting off the filter path: a FailedGPUPlacement Event is queued if the per-pod interval
// and the token bucket allow, a thread of its own posts the queue, and whatever is dropped or fails
// is counted.
#include "gpusched/kubeapi/event_recorder.h"

#include <fmt/format.h>
#include <unistd.h>

#include "gpusched/common/log.h"
#include "gpusched/common/time_format.h"
#include "gpusched/json/json.h"

namespace gpusched::kubeapi {
namespace {

std::string Hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

}  // namespace

EventRecorder::EventRecorder(ApiClient* client, EventRecorderOptions options)
    : client_(client), options_(std::move(options)), bucket_(options_.qps, options_.burst) {
  thread_ = std::thread([this] { Run(); });
}

EventRecorder::~EventRecorder() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.SignalAll();
  thread_.join();
}

void EventRecorder::Unschedulable(const Pod& pod, std::string message) {
  int64_t now = options_.clock->WallMs();
  int64_t interval = std::chrono::duration_cast<std::chrono::milliseconds>(options_.per_pod_interval).count();
  {
    MutexLock lock(&mu_);
    auto it = last_by_uid_.find(pod.uid);
    if (it != last_by_uid_.end() && now - it->second < interval) return;  // said recently
    if (queue_.size() >= options_.max_queue || !bucket_.TryTake()) {
      ++stats_.dropped;
      return;
    }
    last_by_uid_[pod.uid] = now;
    if (last_by_uid_.size() > 4 * options_.max_queue) {
      std::erase_if(last_by_uid_, [&](const auto& kv) { return now - kv.second >= interval; });
    }
    queue_.push_back(Pending{pod, std::move(message), now});
  }
  cv_.SignalAll();
}

bool EventRecorder::WouldPost(const Pod& pod) const {
  int64_t interval = std::chrono::duration_cast<std::chrono::milliseconds>(options_.per_pod_interval).count();
  MutexLock lock(&mu_);
  auto it = last_by_uid_.find(pod.uid);
  return it == last_by_uid_.end() || options_.clock->WallMs() - it->second >= interval;
}

void EventRecorder::Run() {
  for (;;) {
    std::optional<Pending> p = NextPending();
    if (!p) return;
    Post(*p);
    MutexLock lock(&mu_);
    busy_ = false;
    cv_.SignalAll();
  }
}

std::optional<EventRecorder::Pending> EventRecorder::NextPending() {
  MutexLock lock(&mu_);
  while (!stopping_ && queue_.empty()) cv_.Wait();
  if (stopping_) return std::nullopt;
  Pending p = std::move(queue_.front());
  queue_.pop_front();
  busy_ = true;
  return p;
}

void EventRecorder::Post(const Pending& p) {
  std::string host = options_.host.empty() ? Hostname() : options_.host;
  std::string at = FormatRfc3339(p.at_ms);
  std::string body = R"({"apiVersion":"v1","kind":"Event","metadata":{"generateName":)";
  json::AppendString(&body, p.pod.name + ".");
  body += R"(,"namespace":)";
  json::AppendString(&body, p.pod.namespace_name);
  body += R"(},"involvedObject":{"apiVersion":"v1","kind":"Pod","namespace":)";
  json::AppendString(&body, p.pod.namespace_name);
  body += R"(,"name":)";
  json::AppendString(&body, p.pod.name);
  body += R"(,"uid":)";
  json::AppendString(&body, p.pod.uid);
  body += R"(},"reason":"FailedGPUPlacement","message":)";
  json::AppendString(&body, p.message);
  body += R"(,"type":"Warning","source":{"component":)";
  json::AppendString(&body, options_.component);
  body += R"(,"host":)";
  json::AppendString(&body, host);
  body += fmt::format(R"(}},"firstTimestamp":"{}","lastTimestamp":"{}","count":1,"reportingComponent":)", at, at);
  json::AppendString(&body, options_.component);
  body += R"(,"reportingInstance":)";
  json::AppendString(&body, host);
  body += "}";
  StatusOr<ApiResponse> r = client_->Send("POST", fmt::format("/api/v1/namespaces/{}/events", p.pod.namespace_name), body);
  bool ok = r.ok() && (r->status == 201 || r->status == 200);
  if (!ok) {
    log::Write(log::Level::kWarning, "event not posted",
               {{"pod", p.pod.namespace_name + "/" + p.pod.name},
                {"error", r.ok() ? fmt::format("HTTP {}", r->status) : r.status().message()}});
  }
  MutexLock lock(&mu_);
  if (ok) {
    ++stats_.posted;
  } else {
    ++stats_.dropped;
  }
}

bool EventRecorder::WaitIdle(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  while (!queue_.empty() || busy_) {
    auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return false;
    cv_.WaitFor(left);
  }
  return true;
}

EventRecorderStats EventRecorder::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

}  // namespace gpusched::kubeapi
