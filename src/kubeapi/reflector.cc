// File: reflector.cc
//
// The reflector loop: paged LIST (from the watch cache first, consistent after a 410), WATCH with
// bookmarks from the last resourceVersion, events handed over per read, and failures retried after
// capped, jittered backoff honouring Retry-After.
#include "gpusched/kubeapi/reflector.h"

#include <fmt/format.h>


#include "gpusched/common/log.h"
#include "gpusched/json/json.h"
#include "gpusched/kubeapi/backoff.h"

namespace gpusched::kubeapi {
namespace {

// Percent-encodes everything but RFC 3986's unreserved characters.
std::string Escape(std::string_view v) {
  std::string out;
  for (unsigned char c : v) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string Query(std::initializer_list<std::pair<std::string_view, std::string>> params) {
  std::string out;
  for (const auto& [k, v] : params) {
    if (v.empty()) continue;
    out += out.empty() ? '?' : '&';
    out += fmt::format("{}={}", k, Escape(v));
  }
  return out;
}

}  // namespace

Reflector::Reflector(ApiClient* client, ResourceType type, ReflectorHandler* handler, ReflectorOptions options)
    : client_(client),
      type_(std::move(type)),
      handler_(handler),
      options_(options),
      rng_(options.seed != 0 ? options.seed : static_cast<uint64_t>(options.clock->Now().time_since_epoch().count())) {}

Reflector::~Reflector() { Stop(); }

void Reflector::Start() {
  stopping_.store(false);
  thread_ = std::thread([this] { Run(); });
}

void Reflector::Stop() {
  stopping_.store(true);
  cancel_.Cancel();
  {
    MutexLock lock(&sleep_mu_);  // a Sleep about to wait sees stopping_ or gets the signal
  }
  sleep_cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

ReflectorStats Reflector::stats() const {
  MutexLock lock(&stats_mu_);
  return stats_;
}

bool Reflector::Sleep(std::chrono::milliseconds d) {
  auto deadline = std::chrono::steady_clock::now() + d;
  MutexLock lock(&sleep_mu_);
  while (!stopping_.load()) {
    auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) break;
    sleep_cv_.WaitFor(left);
  }
  return !stopping_.load();
}

void Reflector::Fail(const Status& s) {
  log::Write(log::Level::kWarning, "watch failed", {{"resource", type_.name}, {"error", s.message()}});
  MutexLock lock(&stats_mu_);
  ++stats_.errors;
  stats_.last_error = s.message();
  if (!stats_.failing_since) stats_.failing_since = options_.clock->Now();
}

void Reflector::Succeeded() {
  MutexLock lock(&stats_mu_);
  stats_.failing_since.reset();
}

void Reflector::Run() {
  Backoff backoff(options_.backoff_initial, options_.backoff_max, options_.backoff_jitter, &rng_);
  bool listed = false;
  bool consistent = false;  // after a 410, list from etcd, not from the watch cache
  while (!stopping_.load()) {
    retry_after_ = std::chrono::seconds(0);
    Status s;
    if (!listed) {
      s = List(consistent);
      if (s.ok()) {
        listed = true;
        backoff.Reset();
        continue;
      }
      if (s.code() == StatusCode::kNotFound) {
        // Not served here (an older cluster without resource.k8s.io/v1): nothing to hold.
        handler_->Replace({});
        synced_.store(true);
        {
          MutexLock lock(&stats_mu_);
          stats_.synced = true;
          stats_.served = false;
          stats_.last_error = s.message();
        }
        if (!Sleep(options_.backoff_max)) return;
        continue;
      }
    } else {
      StatusOr<Next> next = Watch();
      if (next.ok()) {
        if (*next == Next::kRelist) {
          listed = false;
          consistent = true;
          MutexLock lock(&stats_mu_);
          ++stats_.relists;
        }
        continue;
      }
      s = next.status();
      if (s.code() == StatusCode::kCancelled) return;
      if (s.code() == StatusCode::kDeadlineExceeded) continue;  // silent stream: resume at once
    }
    if (stopping_.load()) return;
    Fail(s);
    std::chrono::milliseconds wait = backoff.Next();
    wait = std::max<std::chrono::milliseconds>(wait, retry_after_);
    if (!Sleep(wait)) return;
  }
}

Status Reflector::List(bool consistent) {
  std::vector<rapidjson::Document> pages;
  std::vector<const rapidjson::Value*> items;
  std::string token;
  std::string list_rv;
  bool unpaged = false;
  for (;;) {
    std::string target =
        type_.path + Query({{"limit", unpaged ? "" : std::to_string(options_.page_size)},
                            {"resourceVersion", consistent || !token.empty() ? "" : "0"},
                            {"continue", token},
                            {"fieldSelector", type_.field_selector}});
    // Streamed, so that a large list (an unpaged one from the watch cache can be 100 MB) is only
    // given up when it stalls, and Stop() can cancel it.
    if (stopping_.load()) return CancelledError("stopping");
    std::string body;
    cancel_.Reset();
    StatusOr<ApiResponse> r = client_->Stream(target, options_.list_idle_timeout,
                                              [&](std::string_view data) {
                                                body.append(data);
                                                return true;
                                              },
                                              &cancel_);
    if (!r.ok()) return r.status();
    if (r->status == 200) r->body = std::move(body);
    if (r->status == 410 && !token.empty()) {
      // The continue token expired mid-list: start over, consistently, and in one unpaged LIST
      // as client-go's pager does (FullListIfExpired): paged again, a list slower than the
      // tokens live would start over for ever, never failing, never synced.
      consistent = true;
      unpaged = true;
      token.clear();
      pages.clear();
      items.clear();
      continue;
    }
    if (r->status == 404) return NotFoundError(fmt::format("LIST {}: 404 {}", type_.path, StatusMessage(*r)));
    if (r->status != 200) {
      retry_after_ = r->retry_after;
      if (r->status == 403) {
        MutexLock lock(&stats_mu_);
        stats_.refused = true;
      }
      return UnavailableError(fmt::format("LIST {}: {} {}", type_.path, r->status, StatusMessage(*r)));
    }
    rapidjson::Document& doc = pages.emplace_back();
    GPUSCHED_RETURN_IF_ERROR(json::Parse(r->body, &doc).WithContext(fmt::format("LIST {}", type_.path)));
    if (!doc.IsObject()) return json::WrongType(fmt::format("LIST {}", type_.path), "object", doc);
    const rapidjson::Value* meta = nullptr;
    GPUSCHED_RETURN_IF_ERROR(json::FindObject(doc, "metadata", "list", &meta));
    std::string next;
    if (meta != nullptr) {
      GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "continue", "list.metadata", &next));
      // The first page's resourceVersion is the list's (later pages repeat it).
      if (list_rv.empty()) GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "resourceVersion", "list.metadata", &list_rv));
    }
    const rapidjson::Value* page_items = nullptr;
    GPUSCHED_RETURN_IF_ERROR(json::FindArray(doc, "items", "list", &page_items));
    if (page_items != nullptr) {
      for (rapidjson::SizeType i = 0; i < page_items->Size(); ++i) items.push_back(&(*page_items)[i]);
    }
    if (next.empty()) break;
    token = std::move(next);
  }
  if (list_rv.empty()) return InvalidArgumentError(fmt::format("LIST {}: no metadata.resourceVersion", type_.path));
  handler_->Replace(items);
  resource_version_ = list_rv;
  synced_.store(true);
  MutexLock lock(&stats_mu_);
  stats_.synced = true;
  stats_.served = true;
  stats_.refused = false;
  stats_.failing_since.reset();
  ++stats_.lists;
  stats_.resource_version = resource_version_;
  return OkStatus();
}

StatusOr<Reflector::Next> Reflector::Watch() {
  int64_t min = options_.min_watch_timeout.count();
  int64_t timeout = min + static_cast<int64_t>(rng_.Below(static_cast<uint64_t>(std::max<int64_t>(1, min))));
  std::string target = type_.path + Query({{"watch", "1"},
                                           {"resourceVersion", resource_version_},
                                           {"allowWatchBookmarks", "true"},
                                           {"timeoutSeconds", std::to_string(timeout)},
                                           {"fieldSelector", type_.field_selector}});
  {
    MutexLock lock(&stats_mu_);
    ++stats_.watches;
  }
  LineSplitter lines;
  std::vector<WatchEvent> batch;
  Status stream_error;
  bool relist = false;
  auto on_line = [&](std::string_view line) {
    if (!stream_error.ok() || relist) return;
    StatusOr<WatchEvent> e = ParseWatchEvent(line);
    if (!e.ok()) {
      stream_error = e.status();
      return;
    }
    if (e->type == WatchEventType::kError) {
      if (e->code == 410) {
        relist = true;
      } else {
        stream_error = UnavailableError(fmt::format("WATCH {}: ERROR {} {}", type_.path, e->code, e->message));
      }
      return;
    }
    batch.push_back(std::move(e).value());
  };
  auto flush = [&] {
    std::vector<const WatchEvent*> events;
    std::string rv;
    for (const WatchEvent& e : batch) {
      if (!e.resource_version.empty()) rv = e.resource_version;
      if (e.type != WatchEventType::kBookmark) events.push_back(&e);
    }
    if (!events.empty()) handler_->Apply(events);
    if (!rv.empty()) resource_version_ = rv;
    MutexLock lock(&stats_mu_);
    stats_.events += events.size();
    stats_.resource_version = resource_version_;
    batch.clear();
  };
  auto on_data = [&](std::string_view data) {
    Status s = lines.Feed(data, on_line);
    if (!s.ok() && stream_error.ok()) stream_error = s;
    flush();
    return stream_error.ok() && !relist;
  };
  cancel_.Reset();
  if (stopping_.load()) return CancelledError("stopping");
  // An open watch is a healthy one, even while it has nothing to say.
  StatusOr<ApiResponse> r = client_->Stream(target, std::chrono::seconds(timeout) + options_.watch_idle_slack, on_data,
                                            &cancel_, [this](int status) {
                                              if (status == 200) Succeeded();
                                            });
  if (!r.ok()) return r.status();
  if (r->status == 410) return Next::kRelist;
  if (r->status != 200) {
    retry_after_ = r->retry_after;
    return UnavailableError(fmt::format("WATCH {}: {} {}", type_.path, r->status, StatusMessage(*r)));
  }
  if (relist) return Next::kRelist;
  GPUSCHED_RETURN_IF_ERROR(stream_error);
  Succeeded();  // ended cleanly (its timeout)
  return Next::kWatch;
}

}  // namespace gpusched::kubeapi
