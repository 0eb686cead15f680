#include "gpusched/http/router.h"

#include <fmt/format.h>

namespace gpusched::http {
namespace {

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

Response Router::Handle(Request request) const {
  std::string_view target = request.target;
  std::string_view path = target.substr(0, target.find('?'));
  bool get = request.method == "GET" || request.method == "HEAD";
  bool post = request.method == "POST";

  if (path.starts_with(prefix_)) {
    std::string_view verb = path.substr(prefix_.size());
    if (verb == "/filter" || verb == "/prioritize" || verb == "/bind") {
      if (!post) return Response{.status = 405, .body = "{\"Error\":\"use POST\"}", .allow = "POST"};
      if (verb == "/filter") return Json(200, service_->Filter(std::move(request.body)));
      if (verb == "/prioritize") return Json(200, service_->Prioritize(std::move(request.body)));
      return Json(200, service_->Bind(request.body));
    }
  }
  if (path == "/healthz" || path == "/readyz" || path == "/debug/inventory") {
    if (!get) return Response{.status = 405, .content_type = "text/plain; charset=utf-8", .body = "use GET\n", .allow = "GET, HEAD"};
    if (path == "/healthz") return Text(200, "ok\n");
    if (path == "/readyz") return ready_->load() ? Text(200, "ok\n") : Text(503, "inventory not synced\n");
    return Json(200, service_->DebugInventory(QueryParam(target, "node")));
  }
  return Text(404, fmt::format("no route for {} {}\n", request.method, path));
}

}  // namespace gpusched::http
