#include "gpusched/http/router.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include "gpusched/common/log.h"
#include "gpusched/extender/admission.h"
#include "gpusched/extender/wire.h"
#include "gpusched/http/ui_page.h"

namespace gpusched::http {
namespace {

constexpr size_t kMaxRequestIdBytes = 128;

Response Json(int status, std::string body) { return Response{.status = status, .body = std::move(body)}; }

Response Text(int status, std::string body) {
  return Response{.status = status, .content_type = "text/plain; charset=utf-8", .body = std::move(body)};
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 && HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Reads all of `text` as a number.
bool ParseNumber(const std::string& text, double* out) {
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() && std::isfinite(*out);
}

// The answer of explain or defrag: JSON or text on success; 404, 409 or 400 with the message.
Response Answer(StatusOr<std::string> answer, bool text) {
  if (!answer.ok()) {
    int status = answer.status().code() == StatusCode::kNotFound ? 404
                 : answer.status().code() == StatusCode::kFailedPrecondition ? 409 : 400;
    return Text(status, answer.status().message() + "\n");
  }
  return text ? Text(200, std::move(answer).value()) : Json(200, std::move(answer).value());
}

}  // namespace

std::string QueryParam(std::string_view target, std::string_view key) {
  size_t q = target.find('?');
  if (q == std::string_view::npos) return "";
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    size_t eq = pair.find('=');
    if (pair.substr(0, eq) == key) return eq == std::string_view::npos ? "" : PercentDecode(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return "";
}

namespace {

// Returns the route name used in metrics and logs, or "" for an unknown path.
std::string_view VerbOf(std::string_view path, std::string_view prefix) {
  if (path.starts_with(prefix)) {
    std::string_view verb = path.substr(prefix.size());
    if (verb == "/filter") return "filter";
    if (verb == "/prioritize") return "prioritize";
    if (verb == "/bind") return "bind";
    if (verb == "/preempt") return "preempt";
  }
  if (path == "/validate/node") return "validate_node";
  if (path == "/healthz") return "healthz";
  if (path == "/readyz") return "readyz";
  if (path == "/metrics") return "metrics";
  if (path == "/debug/inventory") return "debug_inventory";
  if (path == "/explain") return "explain";
  if (path == "/debug/defrag") return "defrag";
  if (path == "/ui" || path == "/ui/") return "ui";
  return "";
}

bool IsPostRoute(std::string_view verb) {
  return verb == "filter" || verb == "prioritize" || verb == "bind" || verb == "preempt" || verb == "validate_node";
}

}  // namespace

bool Router::Blocks(const Request& request) const {
  std::string_view target = request.target;
  return request.method == "POST" && service_->BindWaits() && VerbOf(target.substr(0, target.find('?')), prefix_) == "bind";
}

Response Router::Handle(Request request) const {
  auto start = std::chrono::steady_clock::now();
  std::string_view target = request.target;
  std::string path(target.substr(0, target.find('?')));
  std::string verb(VerbOf(path, prefix_));
  // A caller's id is kept if it is short and printable (it goes into logs and a response header).
  bool usable = !request.request_id.empty() && request.request_id.size() <= kMaxRequestIdBytes &&
                std::all_of(request.request_id.begin(), request.request_id.end(),
                            [](unsigned char c) { return c > 0x20 && c < 0x7f; });
  if (!usable) request.request_id = fmt::format("{:x}", next_id_.fetch_add(1));
  std::string id = request.request_id;
  std::string method = request.method;
  Response r = Route(verb, std::move(request));
  r.request_id = id;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string route = verb.empty() ? "unknown" : verb;
  if (telemetry_ != nullptr) {
    telemetry_->http_requests.With({route, std::to_string(r.status)}).Inc();
    if (!verb.empty()) telemetry_->http_duration.With({route}).Observe(seconds);
  }
  log::Level level = r.status >= 400 ? log::Level::kWarning : verb == "bind" || verb == "validate_node" ? log::Level::kInfo
                                                                                                         : log::Level::kDebug;
  if (log::Enabled(level)) {
    log::Write(level, "request", {{"request_id", id}, {"method", method}, {"path", path}, {"status", std::to_string(r.status)},
                                  {"duration_us", std::to_string(static_cast<int64_t>(seconds * 1e6))}});
  }
  return r;
}

Response Router::Route(std::string_view verb, Request&& request) const {
  bool get = request.method == "GET" || request.method == "HEAD";
  bool post = request.method == "POST";
  bool in_scope = scope_ == RouterScope::kAll || verb == "validate_node" || verb == "healthz" || verb == "readyz" ||
                  verb == "metrics";
  if (verb.empty() || !in_scope) {
    std::string_view target = request.target;
    return Text(404, fmt::format("no route for {} {}\n", request.method, target.substr(0, target.find('?'))));
  }
  if (IsPostRoute(verb) && !post) return Response{.status = 405, .body = "{\"Error\":\"use POST\"}", .allow = "POST"};
  if (!IsPostRoute(verb) && !get && verb != "explain" && verb != "defrag") {
    return Response{.status = 405, .content_type = "text/plain; charset=utf-8", .body = "use GET\n", .allow = "GET, HEAD"};
  }
  if (!ready_->load()) {
    // Until the inventory is complete (a live cluster's first sync, or a sync that went stale), no
    // decision is safe: GPUs of pods not yet seen would look free.
    constexpr std::string_view kNotReady = "gpusched's inventory is not in sync with the cluster yet; retry";
    if (verb == "filter") return Json(200, extender::EncodeFilterError(kNotReady));
    if (verb == "bind") return Json(200, extender::EncodeBindingResult(kNotReady));
    if (verb == "prioritize" || verb == "preempt" || verb == "validate_node" || verb == "explain" || verb == "defrag") {
      return Text(503, std::string(kNotReady) + "\n");
    }
  }
  if (verb == "explain") return RouteExplain(std::move(request));
  if (verb == "defrag") return RouteDefrag(std::move(request));
  if (verb == "filter") return Json(200, service_->Filter(std::move(request.body)));
  if (verb == "prioritize") return Json(200, service_->Prioritize(std::move(request.body)));
  if (verb == "bind") return Json(200, service_->Bind(request.body));
  if (verb == "preempt") {
    // Any answer but 200 fails this preemption attempt in kube-scheduler, which logs it.
    StatusOr<std::string> answer = service_->Preempt(std::move(request.body));
    return answer.ok() ? Json(200, std::move(answer).value()) : Text(400, answer.status().message() + "\n");
  }
  if (verb == "validate_node") {
    StatusOr<std::string> review = extender::ReviewNodeUpdate(request.body, *inventory_->Snapshot());
    if (!review.ok()) return Text(400, review.status().message() + "\n");
    return Json(200, std::move(review).value());
  }
  if (verb == "healthz") return Text(200, "ok\n");
  if (verb == "ui") return Response{.status = 200, .content_type = "text/html; charset=utf-8", .body = std::string(UiPage())};
  if (verb == "readyz") return ready_->load() ? Text(200, "ok\n") : Text(503, "inventory not synced\n");
  if (verb == "metrics") {
    Response r = Text(200, telemetry_ != nullptr ? telemetry_->Render() : "");
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return r;
  }
  return Json(200, service_->DebugInventory(QueryParam(request.target, "node"), QueryParam(request.target, "compact") == "true"));
}

Response Router::RouteExplain(Request&& request) const {
  bool text = QueryParam(request.target, "format") == "text";
  StatusOr<std::string> answer = InvalidArgumentError("");
  if (request.method == "POST") {
    answer = service_->Explain(request.body, text);
  } else if (request.method == "GET" || request.method == "HEAD") {
    std::string pod = QueryParam(request.target, "pod");
    answer = pod.empty() ? InvalidArgumentError("GET /explain needs ?pod=namespace/name (or POST a Pod)")
                         : service_->ExplainKnown(pod, text);
  } else {
    return Response{.status = 405, .content_type = "text/plain; charset=utf-8", .body = "use GET or POST\n", .allow = "GET, HEAD, POST"};
  }
  return Answer(std::move(answer), text);
}

Response Router::RouteDefrag(Request&& request) const {
  bool text = QueryParam(request.target, "format") == "text";
  bool post = request.method == "POST";
  if (!post && request.method != "GET" && request.method != "HEAD") {
    return Response{.status = 405, .content_type = "text/plain; charset=utf-8", .body = "use GET or POST\n", .allow = "GET, HEAD, POST"};
  }
  std::string target = QueryParam(request.target, "targetFrag");
  std::string moves = QueryParam(request.target, "maxMoves");
  bool has_pod = post && request.body.find_first_not_of(" \t\r\n") != std::string::npos;
  if (has_pod == !target.empty()) {
    return Text(400, "POST a Pod to make room for, or give ?targetFrag=PCT (one of the two)\n");
  }
  double target_pct = 0;
  if (!target.empty() && !ParseNumber(target, &target_pct)) {
    return Text(400, fmt::format("targetFrag \"{}\": want a percentage, such as 5 or 2.5\n", target));
  }
  double max_moves = 8;
  if (!moves.empty() && (!ParseNumber(moves, &max_moves) || max_moves != static_cast<int>(max_moves) || max_moves < 0 || max_moves > 1000)) {
    return Text(400, fmt::format("maxMoves \"{}\": want a whole number from 0 to 1000\n", moves));
  }
  std::string apply = QueryParam(request.target, "apply");
  if (!apply.empty() && apply != "true" && apply != "false") {
    return Text(400, fmt::format("apply \"{}\": want true or false\n", apply));
  }
  if (apply == "true" && !post) return Text(405, "apply=true changes the cluster: use POST\n");
  return Answer(service_->Defrag(has_pod ? request.body : "", target_pct, static_cast<int>(max_moves), text, apply == "true"),
                text);
}

}  // namespace gpusched::http
