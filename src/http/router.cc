// File: router.cc
//
// The route table, one row per route, and the dispatch around it: path and method matched (404,
// 405), readiness checked (filter and bind answer 200 with Error, other decisions 503), Status
// mapped to HTTP, each request timed, counted and logged.
#include "gpusched/http/router.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>

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

// The answer to a person or a tool (explain, defrag): the verb's Status as an HTTP code (404 for
// NotFound, 409 for FailedPrecondition, 400 otherwise) with its message, or its typed result
// encoded as a table (?format=text) or as JSON.
template <typename T, typename TableFn, typename JsonFn>
Response Answer(const StatusOr<T>& answer, bool text, TableFn table, JsonFn json) {
  if (!answer.ok()) {
    int status = answer.status().code() == StatusCode::kNotFound ? 404
                 : answer.status().code() == StatusCode::kFailedPrecondition ? 409 : 400;
    return Text(status, answer.status().message() + "\n");
  }
  return text ? Text(200, table(*answer)) : Json(200, json(*answer));
}

Response Explained(const RouteContext& c, const StatusOr<extender::Explanation>& e, bool text) {
  return Answer(e, text, extender::ExplanationText,
                [&c](const extender::Explanation& x) { return extender::ExplanationJson(x, c.service->helper()); });
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

// The methods a route accepts; GET also admits HEAD.
enum Methods : uint8_t { kGet = 1, kPost = 2 };

// How a route answers while the inventory is not in sync with the cluster (a live cluster's first
// sync, or a sync that went stale): no decision is safe then, since GPUs of pods not yet seen
// would look free. kube-scheduler drops the body of any non-200 answer, so filter and bind answer
// 200 with their Error field; the other decisions answer 503.
enum class WhenNotReady { kServe, kFilterError, kBindError, kUnavailable };

constexpr std::string_view kNotReady = "gpusched's inventory is not in sync with the cluster yet; retry";

Response Filter(const RouteContext& c, Request&& r) { return Json(200, c.service->Filter(std::move(r.body))); }
Response Prioritize(const RouteContext& c, Request&& r) { return Json(200, c.service->Prioritize(std::move(r.body))); }
Response Bind(const RouteContext& c, Request&& r) { return Json(200, c.service->Bind(r.body)); }

// Any answer but 200 fails this preemption attempt in kube-scheduler, which logs it.
Response Preempt(const RouteContext& c, Request&& r) {
  StatusOr<std::string> answer = c.service->Preempt(std::move(r.body));
  return answer.ok() ? Json(200, std::move(answer).value()) : Text(400, answer.status().message() + "\n");
}

Response ValidateNode(const RouteContext& c, Request&& r) {
  StatusOr<std::string> review = extender::ReviewNodeUpdate(r.body, *c.inventory->Snapshot());
  return review.ok() ? Json(200, std::move(review).value()) : Text(400, review.status().message() + "\n");
}

Response Healthz(const RouteContext&, Request&&) { return Text(200, "ok\n"); }

Response Readyz(const RouteContext& c, Request&&) {
  return c.ready->load() ? Text(200, "ok\n") : Text(503, "inventory not synced\n");
}

Response Metrics(const RouteContext& c, Request&&) {
  Response r = Text(200, c.telemetry != nullptr ? c.telemetry->Render() : "");
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  return r;
}

Response DebugInventory(const RouteContext& c, Request&& r) {
  return Json(200, c.service->DebugInventory(QueryParam(r.target, "node"), QueryParam(r.target, "compact") == "true"));
}

Response Ui(const RouteContext&, Request&&) {
  return Response{.status = 200, .content_type = "text/html; charset=utf-8", .body = std::string(UiPage())};
}

Response Explain(const RouteContext& c, Request&& r) {
  bool text = QueryParam(r.target, "format") == "text";
  if (r.method == "POST") return Explained(c, c.service->Explain(r.body), text);
  if (std::string group = QueryParam(r.target, "podGroup"); !group.empty()) {
    return Answer(c.service->ExplainGroup(group, QueryParam(r.target, "replica")), text, extender::GroupExplanationText,
                  extender::GroupExplanationJson);
  }
  if (std::string workload = QueryParam(r.target, "workload"); !workload.empty()) {
    return Answer(c.service->ExplainWorkload(workload), text, extender::WorkloadExplanationText, extender::WorkloadExplanationJson);
  }
  std::string pod = QueryParam(r.target, "pod");
  if (pod.empty()) {
    return Text(400, "GET /explain needs ?pod=namespace/name, ?podGroup=namespace/name or ?workload=namespace/name (or POST a Pod)\n");
  }
  return Explained(c, c.service->ExplainKnown(pod), text);
}

// Query parameter `name` of `r`: true, false, or absent (false); anything else is an error naming it.
StatusOr<bool> BoolParam(const Request& r, std::string_view name) {
  std::string v = QueryParam(r.target, name);
  if (!v.empty() && v != "true" && v != "false") return InvalidArgumentError(fmt::format("{} \"{}\": want true or false", name, v));
  return v == "true";
}

// The query of /debug/defrag, checked; every bad parameter is named with its value.
struct DefragQuery {
  bool has_pod = false;
  std::optional<std::string> group;  // ?podGroup=
  double target_pct = 0;
  int max_moves = 8;
  extender::DefragRun run;
};

StatusOr<DefragQuery> ReadDefragQuery(const Request& r) {
  DefragQuery q;
  bool post = r.method == "POST";
  std::string target = QueryParam(r.target, "targetFrag");
  std::string moves = QueryParam(r.target, "maxMoves");
  std::string group = QueryParam(r.target, "podGroup");
  q.has_pod = post && r.body.find_first_not_of(" \t\r\n") != std::string::npos;
  if (static_cast<int>(q.has_pod) + static_cast<int>(!target.empty()) + static_cast<int>(!group.empty()) != 1) {
    return InvalidArgumentError("POST a Pod to make room for, or give ?podGroup=namespace/name or ?targetFrag=PCT (one of the three)");
  }
  if (!group.empty()) q.group = group;
  if (group.empty() && !QueryParam(r.target, "replica").empty()) return InvalidArgumentError("replica: only with podGroup");
  if (!target.empty() && !ParseNumber(target, &q.target_pct)) {
    return InvalidArgumentError(fmt::format("targetFrag \"{}\": want a percentage, such as 5 or 2.5", target));
  }
  double max_moves = q.max_moves;
  if (!moves.empty() && (!ParseNumber(moves, &max_moves) || max_moves != static_cast<int>(max_moves) || max_moves < 0 || max_moves > 1000)) {
    return InvalidArgumentError(fmt::format("maxMoves \"{}\": want a whole number from 0 to 1000", moves));
  }
  q.max_moves = static_cast<int>(max_moves);
  GPUSCHED_ASSIGN_OR_RETURN(q.run.apply, BoolParam(r, "apply"));
  GPUSCHED_ASSIGN_OR_RETURN(bool accept, BoolParam(r, "acceptUnjudged"));
  if (accept && !q.run.apply) return InvalidArgumentError("acceptUnjudged=true: only with apply=true");
  q.run.unjudged = accept ? extender::UnjudgedPolicy::kAccept : extender::UnjudgedPolicy::kRefuse;
  return q;
}

Response Defrag(const RouteContext& c, Request&& r) {
  bool text = QueryParam(r.target, "format") == "text";
  StatusOr<DefragQuery> q = ReadDefragQuery(r);
  if (!q.ok()) return Text(400, q.status().message() + "\n");
  if (q->run.apply && r.method != "POST") return Text(405, "apply=true changes the cluster: use POST\n");
  if (q->group) {
    return Answer(c.service->DefragGroup(*q->group, QueryParam(r.target, "replica"), q->max_moves, q->run), text,
                  extender::GroupDefragText, extender::GroupDefragJson);
  }
  return Answer(c.service->Defrag(q->has_pod ? r.body : "", q->target_pct, q->max_moves, q->run), text, extender::DefragText,
                extender::DefragJson);
}

// One row per route. `name` labels metrics and logs; `prefixed` paths follow the router's prefix
// (kube-scheduler's urlPrefix); `admission` routes are served on the admission listener too;
// `blocks` routes wait on the API server when the service binds through it.
struct Route {
  std::string_view name;
  std::string_view path;
  bool prefixed;
  uint8_t methods;
  bool admission;
  WhenNotReady not_ready;
  bool blocks;
  Response (*handle)(const RouteContext&, Request&&);
};

constexpr Route kRoutes[] = {
    {"filter", "/filter", true, kPost, false, WhenNotReady::kFilterError, false, &Filter},
    {"prioritize", "/prioritize", true, kPost, false, WhenNotReady::kUnavailable, false, &Prioritize},
    {"bind", "/bind", true, kPost, false, WhenNotReady::kBindError, true, &Bind},
    {"preempt", "/preempt", true, kPost, false, WhenNotReady::kUnavailable, false, &Preempt},
    {"validate_node", "/validate/node", false, kPost, true, WhenNotReady::kUnavailable, false, &ValidateNode},
    {"healthz", "/healthz", false, kGet, true, WhenNotReady::kServe, false, &Healthz},
    {"readyz", "/readyz", false, kGet, true, WhenNotReady::kServe, false, &Readyz},
    {"metrics", "/metrics", false, kGet, true, WhenNotReady::kServe, false, &Metrics},
    {"debug_inventory", "/debug/inventory", false, kGet, false, WhenNotReady::kServe, false, &DebugInventory},
    {"explain", "/explain", false, kGet | kPost, false, WhenNotReady::kUnavailable, false, &Explain},
    {"defrag", "/debug/defrag", false, kGet | kPost, false, WhenNotReady::kUnavailable, false, &Defrag},
    {"ui", "/ui", false, kGet, false, WhenNotReady::kServe, false, &Ui},
    {"ui", "/ui/", false, kGet, false, WhenNotReady::kServe, false, &Ui},
};

// Returns the route serving `path`, or null.
const Route* FindRoute(std::string_view path, std::string_view prefix) {
  for (const Route& route : kRoutes) {
    if (route.prefixed ? path.size() == prefix.size() + route.path.size() && path.starts_with(prefix) && path.ends_with(route.path)
                       : path == route.path) {
      return &route;
    }
  }
  return nullptr;
}

// Returns the 405 for a method `route` does not take, or nullopt.
std::optional<Response> WrongMethod(const Route& route, std::string_view method) {
  bool get = method == "GET" || method == "HEAD";
  if ((route.methods & kPost) != 0 && method == "POST") return std::nullopt;
  if ((route.methods & kGet) != 0 && get) return std::nullopt;
  if (route.methods == kPost) return Response{.status = 405, .body = extender::EncodeBindingResult("use POST"), .allow = "POST"};
  if (route.methods == kGet) {
    return Response{.status = 405, .content_type = "text/plain; charset=utf-8", .body = "use GET\n", .allow = "GET, HEAD"};
  }
  return Response{.status = 405, .content_type = "text/plain; charset=utf-8", .body = "use GET or POST\n", .allow = "GET, HEAD, POST"};
}

std::optional<Response> NotReady(WhenNotReady when) {
  switch (when) {
    case WhenNotReady::kServe:
      return std::nullopt;
    case WhenNotReady::kFilterError:
      return Json(200, extender::EncodeFilterError(kNotReady));
    case WhenNotReady::kBindError:
      return Json(200, extender::EncodeBindingResult(kNotReady));
    case WhenNotReady::kUnavailable:
      return Text(503, std::string(kNotReady) + "\n");
  }
  return std::nullopt;
}

// Answers `request` by `route` (null: no route), checking the method and readiness first.
Response Serve(const RouteContext& context, const Route* route, Request&& request) {
  if (route == nullptr) {
    std::string_view target = request.target;
    return Text(404, fmt::format("no route for {} {}\n", request.method, target.substr(0, target.find('?'))));
  }
  if (std::optional<Response> wrong = WrongMethod(*route, request.method)) return std::move(*wrong);
  if (!context.ready->load()) {
    if (std::optional<Response> wait = NotReady(route->not_ready)) return std::move(*wait);
  }
  return route->handle(context, std::move(request));
}

}  // namespace

bool Router::Blocks(const Request& request) const {
  std::string_view target = request.target;
  const Route* route = FindRoute(target.substr(0, target.find('?')), prefix_);
  return request.method == "POST" && route != nullptr && route->blocks && context_.service->BindWaits();
}

Response Router::Handle(Request request) const {
  auto start = std::chrono::steady_clock::now();
  std::string_view target = request.target;
  std::string path(target.substr(0, target.find('?')));
  const Route* route = FindRoute(path, prefix_);
  if (route != nullptr && scope_ == RouterScope::kAdmissionOnly && !route->admission) route = nullptr;
  // A caller's id is kept if it is short and printable (it goes into logs and a response header).
  bool usable = !request.request_id.empty() && request.request_id.size() <= kMaxRequestIdBytes &&
                std::all_of(request.request_id.begin(), request.request_id.end(),
                            [](unsigned char c) { return c > 0x20 && c < 0x7f; });
  if (!usable) request.request_id = fmt::format("{:x}", next_id_.fetch_add(1));
  std::string id = request.request_id;
  std::string method = request.method;
  Response r = Serve(context_, route, std::move(request));
  r.request_id = id;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string name(route == nullptr ? "unknown" : route->name);
  if (context_.telemetry != nullptr) {
    context_.telemetry->http_requests.With({name, std::to_string(r.status)}).Inc();
    if (route != nullptr) context_.telemetry->http_duration.With({name}).Observe(seconds);
  }
  log::Level level = r.status >= 400                                   ? log::Level::kWarning
                     : name == "bind" || name == "validate_node" ? log::Level::kInfo
                                                                       : log::Level::kDebug;
  if (log::Enabled(level)) {
    log::Write(level, "request", {{"request_id", id}, {"method", method}, {"path", path}, {"status", std::to_string(r.status)},
                                  {"duration_us", std::to_string(static_cast<int64_t>(seconds * 1e6))}});
  }
  return r;
}

}  // namespace gpusched::http
