#include "fake_apiserver.h"

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <condition_variable>
#include <map>
#include <optional>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "canonical_quantities.h"

namespace gpusched::testing {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using rapidjson::Document;
using rapidjson::Value;

struct ResourceInfo {
  std::string kind;
  std::string api_version;
  bool namespaced;
};

const std::map<std::string, ResourceInfo, std::less<>>& Resources() {
  static const auto* m = new std::map<std::string, ResourceInfo, std::less<>>{
      {"nodes", {"Node", "v1", false}},
      {"namespaces", {"Namespace", "v1", false}},
      {"pods", {"Pod", "v1", true}},
      {"events", {"Event", "v1", true}},
      {"resourceslices", {"ResourceSlice", "resource.k8s.io/v1", false}},
      {"resourceclaims", {"ResourceClaim", "resource.k8s.io/v1", true}},
      {"deviceclasses", {"DeviceClass", "resource.k8s.io/v1", false}},
      {"resourceclaimtemplates", {"ResourceClaimTemplate", "resource.k8s.io/v1", true}},
      {"devicetaintrules", {"DeviceTaintRule", "resource.k8s.io/v1", false}},
      {"poddisruptionbudgets", {"PodDisruptionBudget", "policy/v1", true}},
      {"podgroups", {"PodGroup", "scheduling.k8s.io", true}},
      {"workloads", {"Workload", "scheduling.k8s.io", true}},
      {"podgroups.scheduling.x-k8s.io", {"PodGroup", "scheduling.x-k8s.io", true}},
      {"workloads.kueue.x-k8s.io", {"Workload", "kueue.x-k8s.io", true}},
      {"resourceflavors", {"ResourceFlavor", "kueue.x-k8s.io", false}},
      {"admissionchecks", {"AdmissionCheck", "kueue.x-k8s.io", false}},
      {"clusterqueues", {"ClusterQueue", "kueue.x-k8s.io", false}},
      {"leases", {"Lease", "coordination.k8s.io/v1", true}},
  };
  return *m;
}

std::string Dump(const Value& v) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  v.Accept(w);
  return std::string(sb.GetString(), sb.GetSize());
}

std::string StatusJson(int code, std::string_view reason, std::string_view message) {
  Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("kind", "Status", a);
  d.AddMember("apiVersion", "v1", a);
  d.AddMember("metadata", Value(rapidjson::kObjectType), a);
  d.AddMember("status", code < 300 ? "Success" : "Failure", a);
  d.AddMember("message", Value(std::string(message).c_str(), a), a);
  d.AddMember("reason", Value(std::string(reason).c_str(), a), a);
  d.AddMember("code", code, a);
  return Dump(d);
}

std::string_view ReasonOf(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 404:
      return "NotFound";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    default:
      return "";
  }
}

std::string Str(const Value& obj, const char* a, const char* b = nullptr) {
  if (!obj.IsObject()) return "";
  auto it = obj.FindMember(a);
  if (it == obj.MemberEnd()) return "";
  const Value* v = &it->value;
  if (b != nullptr) {
    if (!v->IsObject()) return "";
    auto jt = v->FindMember(b);
    if (jt == v->MemberEnd()) return "";
    v = &jt->value;
  }
  return v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : "";
}

Value& Meta(Document& d) {
  if (!d.HasMember("metadata") || !d["metadata"].IsObject()) {
    d.RemoveMember("metadata");
    d.AddMember("metadata", Value(rapidjson::kObjectType), d.GetAllocator());
  }
  return d["metadata"];
}

void SetString(Value& obj, const char* key, const std::string& value, Document::AllocatorType& a) {
  obj.RemoveMember(key);
  obj.AddMember(Value(key, a), Value(value.c_str(), a), a);
}

// RFC 7386 JSON merge patch of `patch` onto `target`.
void MergePatch(Value& target, const Value& patch, Document::AllocatorType& a) {
  if (!patch.IsObject()) {
    target.CopyFrom(patch, a);
    return;
  }
  if (!target.IsObject()) target.SetObject();
  for (auto it = patch.MemberBegin(); it != patch.MemberEnd(); ++it) {
    if (it->value.IsNull()) {
      target.RemoveMember(it->name);
      continue;
    }
    auto t = target.FindMember(it->name);
    if (t == target.MemberEnd()) {
      Value v;
      v.SetObject();
      MergePatch(v, it->value, a);
      target.AddMember(Value(it->name, a), v, a);
    } else {
      MergePatch(t->value, it->value, a);
    }
  }
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i] == '+' ? ' ' : s[i]);
    }
  }
  return out;
}

struct Target {
  std::vector<std::string> segments;
  std::map<std::string, std::string> query;
};

Target ParseTarget(std::string_view target) {
  Target t;
  size_t q = target.find('?');
  std::string_view path = target.substr(0, q);
  size_t start = 1;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) t.segments.emplace_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  if (q != std::string_view::npos) {
    std::string_view rest = target.substr(q + 1);
    while (!rest.empty()) {
      size_t amp = rest.find('&');
      std::string_view kv = rest.substr(0, amp);
      size_t eq = kv.find('=');
      t.query[PercentDecode(kv.substr(0, eq))] = eq == std::string_view::npos ? "" : PercentDecode(kv.substr(eq + 1));
      if (amp == std::string_view::npos) break;
      rest.remove_prefix(amp + 1);
    }
  }
  return t;
}

// fieldSelector terms: path=value, path==value, path!=value; paths spec.nodeName, status.phase,
// metadata.name, metadata.namespace.
struct Selector {
  struct Term {
    std::string a, b;
    bool equal;
    std::string value;
  };
  std::vector<Term> terms;

  static Selector Parse(const std::string& text) {
    Selector s;
    size_t start = 0;
    while (start < text.size()) {
      size_t comma = text.find(',', start);
      if (comma == std::string::npos) comma = text.size();
      std::string term = text.substr(start, comma - start);
      start = comma + 1;
      size_t ne = term.find("!=");
      size_t eq = term.find('=');
      Term t;
      std::string path;
      if (ne != std::string::npos) {
        path = term.substr(0, ne);
        t.equal = false;
        t.value = term.substr(ne + 2);
      } else {
        path = term.substr(0, eq);
        t.equal = true;
        size_t value = term.find_first_not_of('=', eq);
        if (value != std::string::npos) t.value = term.substr(value);  // "spec.nodeName=": empty
      }
      size_t dot = path.find('.');
      t.a = path.substr(0, dot);
      t.b = path.substr(dot + 1);
      s.terms.push_back(std::move(t));
    }
    return s;
  }

  bool Matches(const std::string& json) const {
    if (terms.empty()) return true;
    Document d;
    d.Parse(json.c_str());
    for (const Term& t : terms) {
      std::string v = Str(d, t.a.c_str(), t.b.c_str());
      if ((v == t.value) != t.equal) return false;
    }
    return true;
  }
};

struct HistoryEvent {
  uint64_t rv;
  std::string resource;
  std::string type;  // ADDED, MODIFIED, DELETED
  std::string object;
  std::string old_object;  // MODIFIED: the state before
};

struct ContinueState {
  std::string resource_version;
  std::vector<std::string> rest;  // items not yet served
};

}  // namespace

class FakeApiServer::Impl {
 public:
  explicit Impl(FakeApiServerOptions options) : options_(std::move(options)), acceptor_(ioc_), rng_(options_.seed) {
    if (!options_.cert_file.empty()) {
      tls_.emplace(ssl::context::tls_server);
      tls_->use_certificate_chain_file(options_.cert_file);
      tls_->use_private_key_file(options_.key_file, ssl::context::pem);
    }
    tcp::endpoint ep(net::ip::make_address("127.0.0.1"), 0);
    acceptor_.open(ep.protocol());
    acceptor_.set_option(net::socket_base::reuse_address(true));
    acceptor_.bind(ep);
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    }
    cv_.notify_all();
    beast::error_code ec;
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
    acceptor_.close(ec);
    accept_thread_.join();
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> lock(mu_);
      threads.swap(threads_);
    }
    for (std::thread& t : threads) t.join();
  }

  uint16_t port() const { return port_; }
  std::string url() const { return fmt::format("{}://127.0.0.1:{}", tls_ ? "https" : "http", port_); }

  std::string Put(std::string_view resource, std::string_view json) {
    std::lock_guard<std::mutex> lock(mu_);
    Document d;
    d.Parse(json.data(), json.size());
    if (d.HasParseError() || !d.IsObject()) throw std::runtime_error("FakeApiServer::Put: not a JSON object");
    std::string stored = StoreLocked(std::string(resource), d);
    return stored;
  }

  bool Remove(std::string_view resource, std::string_view ns, std::string_view name) {
    std::lock_guard<std::mutex> lock(mu_);
    auto& objects = objects_[std::string(resource)];
    auto it = objects.find(Key(resource, ns, name));
    if (it == objects.end()) return false;
    Document d;
    d.Parse(it->second.c_str());
    SetString(Meta(d), "resourceVersion", std::to_string(++rv_), d.GetAllocator());
    history_.push_back({rv_, std::string(resource), "DELETED", Dump(d), ""});
    objects.erase(it);
    cv_.notify_all();
    return true;
  }

  std::optional<std::string> Get(std::string_view resource, std::string_view ns, std::string_view name) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto r = objects_.find(std::string(resource));
    if (r == objects_.end()) return std::nullopt;
    auto it = r->second.find(Key(resource, ns, name));
    if (it == r->second.end()) return std::nullopt;
    return it->second;
  }

  std::vector<std::string> Objects(std::string_view resource) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    auto r = objects_.find(std::string(resource));
    if (r != objects_.end()) {
      for (const auto& [key, json] : r->second) out.push_back(json);
    }
    return out;
  }

  std::string resource_version() const {
    std::lock_guard<std::mutex> lock(mu_);
    return std::to_string(rv_);
  }

  void Inject(Fault fault) {
    std::lock_guard<std::mutex> lock(mu_);
    faults_.push_back(std::move(fault));
  }
  void ClearFaults() {
    std::lock_guard<std::mutex> lock(mu_);
    faults_.clear();
  }
  void CloseIdleConnections() {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : idle_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  void SetDelay(std::string prefix, std::chrono::milliseconds delay) {
    std::lock_guard<std::mutex> lock(mu_);
    delays_[std::move(prefix)] = delay;
  }
  void CompactHistory() {
    std::lock_guard<std::mutex> lock(mu_);
    compacted_ = rv_;
    history_.clear();
  }
  void Signal(uint64_t* generation) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++*generation;
    }
    cv_.notify_all();
  }
  void ExpireWatches() { Signal(&expire_gen_); }
  void Bookmark() { Signal(&bookmark_gen_); }
  void EndWatches() { Signal(&end_gen_); }
  void DropWatches() { Signal(&drop_gen_); }
  void ExpireContinueTokens() {
    std::lock_guard<std::mutex> lock(mu_);
    continues_.clear();
  }
  int open_watches() const {
    std::lock_guard<std::mutex> lock(mu_);
    return open_watches_;
  }
  std::vector<RecordedRequest> Requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  void ClearRequests() {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.clear();
  }

 private:
  struct Reply {
    int status = 200;
    std::string body;
  };

  static std::string Key(std::string_view resource, std::string_view ns, std::string_view name) {
    auto info = Resources().find(resource);
    bool namespaced = info != Resources().end() && info->second.namespaced;
    return namespaced ? fmt::format("{}/{}", ns, name) : std::string(name);
  }

  // Stores `d` (uid and resourceVersion set here) and records the event. Returns the JSON.
  std::string StoreLocked(const std::string& resource, Document& d) {
    auto& a = d.GetAllocator();
    d.RemoveMember("kind");
    d.RemoveMember("apiVersion");
    // As the real API server: quantities are stored, and served, in canonical form ("8000": "8k").
    CanonicalizeObject(Resources().at(resource).kind, &d, a);
    Value& meta = Meta(d);
    std::string name = Str(d, "metadata", "name");
    std::string ns = Str(d, "metadata", "namespace");
    if (Str(d, "metadata", "uid").empty()) SetString(meta, "uid", fmt::format("uid-{}-{}", resource, ++uids_), a);
    SetString(meta, "resourceVersion", std::to_string(++rv_), a);
    std::string json = Dump(d);
    auto& objects = objects_[resource];
    std::string key = Key(resource, ns, name);
    auto it = objects.find(key);
    if (it == objects.end()) {
      history_.push_back({rv_, resource, "ADDED", json, ""});
      objects.emplace(key, json);
    } else {
      history_.push_back({rv_, resource, "MODIFIED", json, it->second});
      it->second = json;
    }
    cv_.notify_all();
    return json;
  }

  void AcceptLoop() {
    for (;;) {
      beast::error_code ec;
      tcp::socket socket(ioc_);
      acceptor_.accept(socket, ec);
      if (ec) return;
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      int fd = socket.native_handle();
      open_fds_.insert(fd);
      socket.set_option(tcp::no_delay(true), ec);  // tiny watch chunks must not wait for ACKs
      threads_.emplace_back([this, s = std::move(socket), fd]() mutable {
        if (tls_) {
          ssl::stream<tcp::socket> stream(std::move(s), *tls_);
          beast::error_code hec;
          stream.handshake(ssl::stream_base::server, hec);
          if (!hec) Serve(stream, fd);
        } else {
          Serve(s, fd);
        }
        std::lock_guard<std::mutex> l(mu_);
        open_fds_.erase(fd);
      });
    }
  }

  template <typename Stream>
  void Serve(Stream& stream, int fd) {
    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(64u << 20);
      beast::error_code ec;
      {
        std::lock_guard<std::mutex> lock(mu_);
        idle_fds_.insert(fd);
      }
      http::read(stream, buffer, parser, ec);
      {
        std::lock_guard<std::mutex> lock(mu_);
        idle_fds_.erase(fd);
      }
      if (ec) return;
      http::request<http::string_body> req = parser.release();
      std::string method(req.method_string());
      std::string target(req.target());
      std::optional<Fault> fault;
      std::chrono::milliseconds delay(0);
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back({method, target, std::string(req[http::field::content_type]),
                             std::string(req[http::field::authorization]), req.body()});
        std::string path = target.substr(0, target.find('?'));
        std::string_view query = target.size() > path.size() ? std::string_view(target).substr(path.size() + 1) : "";
        for (Fault& f : faults_) {
          if (f.count > 0 && f.method == method && path.starts_with(f.path_prefix) &&
              (f.query_has.empty() || query.find(f.query_has) != std::string_view::npos)) {
            if (f.skip > 0) {
              --f.skip;
              break;
            }
            --f.count;
            fault = f;
            break;
          }
        }
        for (const auto& [prefix, d] : delays_) {
          if (path.starts_with(prefix)) delay = std::max(delay, d);
        }
      }
      if (fault) delay = std::max(delay, fault->delay);
      if (delay.count() > 0) std::this_thread::sleep_for(delay);
      Reply reply;
      Target t = ParseTarget(target);
      bool watch = t.query.contains("watch") && (t.query["watch"] == "1" || t.query["watch"] == "true");
      if (fault && fault->apply_first) (void)Handle(method, t, req.body());
      if (fault && fault->status == 0) {
        ::shutdown(fd, SHUT_RDWR);
        return;
      }
      if (fault) {
        reply = {fault->status, StatusJson(fault->status, ReasonOf(fault->status), "injected fault")};
      } else if (!options_.token.empty() && req[http::field::authorization] != "Bearer " + options_.token) {
        reply = {401, StatusJson(401, "Unauthorized", "Unauthorized")};
      } else if (watch && method == "GET") {
        ServeWatch(stream, fd, req, t);
        return;
      } else {
        reply = Handle(method, t, req.body());
      }
      http::response<http::string_body> res(static_cast<http::status>(reply.status), 11);
      res.set(http::field::content_type, "application/json");
      if (reply.status == 429) res.set(http::field::retry_after, "1");
      res.keep_alive(req.keep_alive());
      res.body() = std::move(reply.body);
      res.prepare_payload();
      http::write(stream, res, ec);
      if (ec || !req.keep_alive()) return;
    }
  }

  // Resolves the resource and object of a path; returns the resource name ("" if unknown).
  std::string Route(const Target& t, std::string* ns, std::string* name, std::string* sub) const {
    const auto& s = t.segments;
    size_t i = 0;
    if (s.size() >= 2 && s[0] == "api" && s[1] == "v1") {
      i = 2;
    } else if (s.size() >= 4 && s[0] == "apis" && s[1] == "resource.k8s.io" && s[3] == "devicetaintrules") {
      if (s[2] != options_.taint_rule_version) return "";
      i = 3;
    } else if (s.size() >= 3 && s[0] == "apis" && s[1] == "resource.k8s.io" && s[2] == options_.dra_version) {
      i = 3;
    } else if (s.size() >= 3 && s[0] == "apis" && s[1] == "policy" && s[2] == "v1") {
      i = 3;
    } else if (s.size() >= 4 && s[0] == "apis" && (s[1] == "scheduling.k8s.io" || s[1] == "scheduling.x-k8s.io")) {
      return RouteGroups(t, ns, name, sub);
    } else if (s.size() >= 4 && s[0] == "apis" && s[1] == "kueue.x-k8s.io" && s[2] == options_.kueue_version) {
      i = 3;
    } else if (s.size() >= 4 && s[0] == "apis" && s[1] == "coordination.k8s.io" && s[2] == "v1") {
      i = 3;
    } else {
      return "";
    }
    if (i + 1 < s.size() && s[i] == "namespaces") {
      *ns = s[i + 1];
      i += 2;
    }
    if (i >= s.size()) return "";
    std::string resource = s[i];
    if (s[1] == "kueue.x-k8s.io" && resource == "workloads") resource = "workloads.kueue.x-k8s.io";
    if (!Resources().contains(resource) || (Resources().at(resource).api_version == "kueue.x-k8s.io") != (s[1] == "kueue.x-k8s.io")) return "";
    if (i + 1 < s.size()) *name = s[i + 1];
    if (i + 2 < s.size()) *sub = s[i + 2];
    if (i + 3 < s.size()) return "";
    return resource;
  }

  // The version pod-group resource `resource` is served at, "" where it is not.
  const std::string& GroupVersion(std::string_view resource) const {
    if (resource == "podgroups") return options_.pod_group_version;
    if (resource == "workloads") return options_.workload_version;
    return options_.coscheduling_version;
  }

  // /apis/scheduling.k8s.io/<v>/[namespaces/<ns>/]podgroups|workloads[/<name>] and
  // /apis/scheduling.x-k8s.io/<v>/...podgroups: the pod-group resources at their versions.
  std::string RouteGroups(const Target& t, std::string* ns, std::string* name, std::string* sub) const {
    const auto& s = t.segments;
    size_t i = 3;
    if (i + 1 < s.size() && s[i] == "namespaces") {
      *ns = s[i + 1];
      i += 2;
    }
    if (i >= s.size() || i + 2 < s.size()) return "";
    std::string resource = s[1] == "scheduling.x-k8s.io" ? (s[i] == "podgroups" ? "podgroups.scheduling.x-k8s.io" : "") : s[i];
    if (resource != "podgroups" && resource != "workloads" && resource != "podgroups.scheduling.x-k8s.io") return "";
    if (GroupVersion(resource).empty() || s[2] != GroupVersion(resource)) return "";
    if (i + 1 < s.size()) *name = s[i + 1];
    return resource;
  }

  // GET /apis/<group> (an APIGroup) and /apis/<group>/<version> (an APIResourceList) for the
  // pod-group APIs; scheduling.k8s.io/v1 always (PriorityClasses).
  std::optional<Reply> GroupDiscovery(const std::vector<std::string>& s) const {
    if (s.size() < 2 || s.size() > 3 || s[0] != "apis" || (s[1] != "scheduling.k8s.io" && s[1] != "scheduling.x-k8s.io")) {
      return std::nullopt;
    }
    std::map<std::string, std::vector<std::string>> served;  // version -> resources
    if (s[1] == "scheduling.k8s.io") {
      served["v1"].push_back("priorityclasses");
      if (!options_.pod_group_version.empty()) served[options_.pod_group_version].push_back("podgroups");
      if (!options_.workload_version.empty()) served[options_.workload_version].push_back("workloads");
    } else if (!options_.coscheduling_version.empty()) {
      served[options_.coscheduling_version].push_back("podgroups");
    }
    Reply not_found{404, StatusJson(404, "NotFound", "the server could not find the requested resource")};
    if (s.size() == 3) {
      auto it = served.find(s[2]);
      if (it == served.end()) return not_found;
      std::string resources;
      for (const std::string& n : it->second) {
        if (!resources.empty()) resources += ',';
        resources += fmt::format(R"({{"name":"{}","namespaced":{},"verbs":["get","list","watch"]}})", n,
                                 n == "priorityclasses" ? "false" : "true");
      }
      return Reply{200, fmt::format(R"({{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"{}/{}","resources":[{}]}})",
                                    s[1], s[2], resources)};
    }
    if (served.empty()) return not_found;
    std::string versions;
    for (const auto& [v, names] : served) {
      if (!versions.empty()) versions += ',';
      versions += fmt::format(R"({{"groupVersion":"{}/{}","version":"{}"}})", s[1], v, v);
    }
    return Reply{200, fmt::format(R"({{"kind":"APIGroup","apiVersion":"v1","name":"{}","versions":[{}]}})", s[1], versions)};
  }

  // GET /apis/kueue.x-k8s.io and /apis/kueue.x-k8s.io/<version>: Kueue's CRDs at
  // options_.kueue_version (404 when it is empty: Kueue not installed).
  std::optional<Reply> KueueDiscovery(const std::vector<std::string>& s) const {
    if (s.size() < 2 || s.size() > 3 || s[0] != "apis" || s[1] != "kueue.x-k8s.io") return std::nullopt;
    const std::string& v = options_.kueue_version;
    if (v.empty() || (s.size() == 3 && s[2] != v)) return Reply{404, StatusJson(404, "NotFound", "the server could not find the requested resource")};
    if (s.size() == 2) {
      return Reply{200, fmt::format(R"({{"kind":"APIGroup","apiVersion":"v1","name":"kueue.x-k8s.io","versions":[{{"groupVersion":)"
                                    R"("kueue.x-k8s.io/{}","version":"{}"}}]}})", v, v)};
    }
    std::string resources;
    for (const char* n : {"workloads", "workloads/status", "resourceflavors", "admissionchecks", "admissionchecks/status", "clusterqueues"}) {
      if (!resources.empty()) resources += ',';
      resources += fmt::format(R"({{"name":"{}","namespaced":{},"verbs":["get","list","watch","patch"]}})", n,
                               std::string_view(n).starts_with("workloads") ? "true" : "false");
    }
    return Reply{200, fmt::format(R"({{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"kueue.x-k8s.io/{}","resources":[{}]}})",
                                  v, resources)};
  }

  Reply Handle(const std::string& method, Target& t, const std::string& body) {
    if (method == "GET" && t.segments.size() == 2 && t.segments[0] == "apis" && t.segments[1] == "resource.k8s.io") {
      return DraDiscovery();
    }
    if (method == "GET") {
      if (std::optional<Reply> discovery = GroupDiscovery(t.segments)) return *discovery;
      if (std::optional<Reply> discovery = KueueDiscovery(t.segments)) return *discovery;
    }
    if (method == "GET" && t.segments.size() == 3 && t.segments[0] == "apis" && t.segments[1] == "resource.k8s.io") {
      return DraVersionDiscovery(t.segments[2]);
    }
    std::string ns, name, sub;
    std::string resource = Route(t, &ns, &name, &sub);
    if (resource.empty()) return {404, StatusJson(404, "NotFound", "the server could not find the requested resource")};
    std::lock_guard<std::mutex> lock(mu_);
    if (method == "GET" && name.empty()) return ListLocked(resource, ns, t);
    if (method == "GET" && sub.empty()) {
      auto& objects = objects_[resource];
      auto it = objects.find(Key(resource, ns, name));
      if (it == objects.end()) return NotFound(resource, name);
      return {200, WithKind(resource, it->second)};
    }
    if (method == "PATCH" && (sub.empty() || (sub == "status" && HasStatusSubresource(resource)))) {
      return PatchLocked(resource, ns, name, body, sub);
    }
    if (method == "POST" && resource == "resourceclaims" && name.empty()) return CreateLocked(resource, ns, body);
    if (method == "DELETE" && resource == "resourceclaims" && !name.empty() && sub.empty()) return DeleteLocked(resource, ns, name);
    if (method == "POST" && resource == "pods" && sub == "binding") return BindLocked(ns, name, body);
    if (method == "POST" && resource == "pods" && sub == "eviction") return EvictLocked(ns, name, body, t.query["dryRun"] == "All");
    if (method == "POST" && resource == "events" && name.empty()) {
      Document d;
      d.Parse(body.c_str());
      if (d.HasParseError() || !d.IsObject()) return {400, StatusJson(400, "BadRequest", "malformed Event")};
      if (Str(d, "metadata", "name").empty()) {
        SetString(Meta(d), "name", fmt::format("{}{}", Str(d, "metadata", "generateName"), ++uids_), d.GetAllocator());
      }
      return {201, WithKind(resource, StoreLocked(resource, d))};
    }
    return {405, StatusJson(405, "MethodNotAllowed", fmt::format("{} not allowed here", method))};
  }

  static Reply NotFound(const std::string& resource, const std::string& name) {
    return {404, StatusJson(404, "NotFound", fmt::format("{} \"{}\" not found", resource, name))};
  }

  // The apiVersion objects of `resource` are served at: DRA kinds at options_.dra_version.
  // GET /apis/resource.k8s.io: the APIGroup document, listing options_.dra_version (404 when
  // it is empty: a cluster without DRA).
  Reply DraDiscovery() const {
    if (options_.dra_version.empty()) {
      return {404, StatusJson(404, "NotFound", "the server could not find the requested resource")};
    }
    std::string gv = "resource.k8s.io/" + options_.dra_version;
    std::string versions = fmt::format(R"({{"groupVersion":"{}","version":"{}"}})", gv, options_.dra_version);
    const std::string& rules = options_.taint_rule_version;
    if (!rules.empty() && rules != options_.dra_version) {
      versions += fmt::format(R"(,{{"groupVersion":"resource.k8s.io/{}","version":"{}"}})", rules, rules);
    }
    return {200, fmt::format(R"({{"kind":"APIGroup","apiVersion":"v1","name":"resource.k8s.io","versions":[{}],)"
                             R"("preferredVersion":{{"groupVersion":"{}","version":"{}"}}}})",
                             versions, gv, options_.dra_version)};
  }

  // GET /apis/resource.k8s.io/<version>: the APIResourceList of that version (404 if not served).
  Reply DraVersionDiscovery(const std::string& version) const {
    std::vector<std::string> names;
    if (!version.empty() && version == options_.dra_version) names = {"resourceslices", "resourceclaims", "resourceclaims/status", "deviceclasses"};
    if (!version.empty() && version == options_.taint_rule_version) names.push_back("devicetaintrules");
    if (names.empty()) return {404, StatusJson(404, "NotFound", "the server could not find the requested resource")};
    std::string resources;
    for (const std::string& n : names) {
      if (!resources.empty()) resources += ',';
      resources += fmt::format(R"({{"name":"{}","namespaced":{},"kind":"{}","verbs":["get","list","watch"]}})", n,
                               n.starts_with("resourceclaims") ? "true" : "false", Resources().at(n.substr(0, n.find('/'))).kind);
    }
    return {200, fmt::format(R"({{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"resource.k8s.io/{}","resources":[{}]}})",
                             version, resources)};
  }

  std::string ApiVersion(const std::string& resource) const {
    const std::string& v = Resources().at(resource).api_version;
    if (v.starts_with("scheduling.")) return v + "/" + GroupVersion(resource);
    if (v == "kueue.x-k8s.io") return v + "/" + options_.kueue_version;
    if (resource == "devicetaintrules") return "resource.k8s.io/" + options_.taint_rule_version;
    return v.starts_with("resource.k8s.io/") ? "resource.k8s.io/" + options_.dra_version : v;
  }

  std::string WithKind(const std::string& resource, const std::string& json) const {
    Document d;
    d.Parse(json.c_str());
    const ResourceInfo& info = Resources().at(resource);
    auto& a = d.GetAllocator();
    d.RemoveMember("kind");
    d.RemoveMember("apiVersion");
    std::string version = ApiVersion(resource);
    d.AddMember("kind", Value(info.kind.c_str(), a), a);
    d.AddMember("apiVersion", Value(version.c_str(), a), a);
    return Dump(d);
  }

  Reply ListLocked(const std::string& resource, const std::string& ns, Target& t) {
    const ResourceInfo& info = Resources().at(resource);
    std::vector<std::string> items;
    std::string list_rv;
    if (!t.query["continue"].empty()) {
      auto it = continues_.find(t.query["continue"]);
      if (it == continues_.end()) {
        return {410, StatusJson(410, "Expired", "The provided continue parameter is too old to display a consistent list result.")};
      }
      items = std::move(it->second.rest);
      list_rv = it->second.resource_version;
      continues_.erase(it);
    } else {
      Selector sel = Selector::Parse(t.query["fieldSelector"]);
      for (const auto& [key, json] : objects_[resource]) {
        if (!ns.empty() && !key.starts_with(ns + "/")) continue;
        if (sel.Matches(json)) items.push_back(json);
      }
      list_rv = std::to_string(rv_);
    }
    size_t limit = t.query["limit"].empty() ? 0 : std::stoul(t.query["limit"]);
    if (options_.unpaged_rv0 && t.query["resourceVersion"] == "0") limit = 0;
    std::string token;
    if (limit > 0 && items.size() > limit) {
      token = fmt::format("c{}", ++uids_);
      continues_[token] = ContinueState{list_rv, std::vector<std::string>(items.begin() + limit, items.end())};
      items.resize(limit);
    }
    std::string out = fmt::format(R"({{"kind":"{}List","apiVersion":"{}","metadata":{{"resourceVersion":"{}")", info.kind,
                                  ApiVersion(resource), list_rv);
    if (!token.empty()) out += fmt::format(R"(,"continue":"{}")", token);
    out += R"(},"items":[)";
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out += ',';
      out += items[i];
    }
    out += "]}";
    return {200, out};
  }

  static bool HasStatusSubresource(const std::string& resource) {
    return resource == "resourceclaims" || resource == "pods" || resource == "workloads.kueue.x-k8s.io" || resource == "admissionchecks" ||
           resource == "clusterqueues";
  }

  // A create, as the API server does it: the name, or generateName completed with five
  // characters; 409 AlreadyExists for a name taken; the namespace of the URL; status dropped.
  Reply CreateLocked(const std::string& resource, const std::string& ns, const std::string& body) {
    Document d;
    d.Parse(body.c_str());
    if (d.HasParseError() || !d.IsObject() || !d.HasMember("metadata") || !d["metadata"].IsObject()) {
      return {400, StatusJson(400, "BadRequest", "malformed object")};
    }
    auto& a = d.GetAllocator();
    std::string name = Str(d, "metadata", "name");
    if (name.empty()) {
      std::string prefix = Str(d, "metadata", "generateName");
      if (prefix.empty()) return {422, StatusJson(422, "Invalid", "metadata.name: Required value: name or generateName is required")};
      name = fmt::format("{}{}", prefix, fmt::format("{:05d}", ++uids_ % 100000));
      SetString(Meta(d), "name", name, a);
    }
    if (!Str(d, "metadata", "namespace").empty() && Str(d, "metadata", "namespace") != ns) {
      return {400, StatusJson(400, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request")};
    }
    SetString(Meta(d), "namespace", ns, a);
    if (objects_[resource].contains(Key(resource, ns, name))) {
      return {409, StatusJson(409, "AlreadyExists", fmt::format("{} \"{}\" already exists", resource, name))};
    }
    d.RemoveMember("status");
    return {201, WithKind(resource, StoreLocked(resource, d))};
  }

  // A delete: an object with finalizers only gets its deletionTimestamp (the finalizers' owners
  // remove them); one without is gone.
  Reply DeleteLocked(const std::string& resource, const std::string& ns, const std::string& name) {
    auto& objects = objects_[resource];
    auto it = objects.find(Key(resource, ns, name));
    if (it == objects.end()) return NotFound(resource, name);
    Document d;
    d.Parse(it->second.c_str());
    const Value& meta = Meta(d);
    if (meta.HasMember("finalizers") && meta["finalizers"].IsArray() && !meta["finalizers"].Empty()) {
      if (Str(d, "metadata", "deletionTimestamp").empty()) SetString(Meta(d), "deletionTimestamp", "2026-12-02T10:00:00Z", d.GetAllocator());
      return {200, WithKind(resource, StoreLocked(resource, d))};
    }
    SetString(Meta(d), "resourceVersion", std::to_string(++rv_), d.GetAllocator());
    std::string json = Dump(d);
    history_.push_back({rv_, resource, "DELETED", json, ""});
    objects.erase(it);
    cv_.notify_all();
    return {200, WithKind(resource, json)};
  }

  // A merge patch. As the API server does for resources with a status subresource (here:
  // resourceclaims and pods), the main resource ignores status and /status changes only status.
  Reply PatchLocked(const std::string& resource, const std::string& ns, const std::string& name, const std::string& body,
                    const std::string& sub = "") {
    auto& objects = objects_[resource];
    auto it = objects.find(Key(resource, ns, name));
    if (it == objects.end()) return NotFound(resource, name);
    Document patch;
    patch.Parse(body.c_str());
    if (patch.HasParseError() || !patch.IsObject()) return {400, StatusJson(400, "BadRequest", "malformed patch")};
    Document current;
    current.Parse(it->second.c_str());
    std::string want_rv = Str(patch, "metadata", "resourceVersion");
    if (!want_rv.empty() && want_rv != Str(current, "metadata", "resourceVersion")) {
      return {409, StatusJson(409, "Conflict",
                              fmt::format("Operation cannot be fulfilled on {} \"{}\": the object has been modified; please "
                                          "apply your changes to the latest version and try again",
                                          resource, name))};
    }
    // A patch naming another UID would change an immutable field: validation refuses it (422), as
    // the API server's ValidateObjectMetaUpdate does after the patch is applied.
    std::string want_uid = Str(patch, "metadata", "uid");
    std::string uid = Str(current, "metadata", "uid");
    if (!want_uid.empty() && want_uid != uid) {
      return {422, StatusJson(422, "Invalid",
                              fmt::format("{} \"{}\" is invalid: metadata.uid: Invalid value: \"{}\": field is immutable", resource,
                                          name, want_uid))};
    }
    if (HasStatusSubresource(resource)) {
      if (sub == "status") {
        for (auto it = patch.MemberBegin(); it != patch.MemberEnd();) {
          std::string key = it->name.GetString();
          it = key == "status" || key == "metadata" ? it + 1 : patch.EraseMember(it);
        }
        if (patch.HasMember("metadata")) {
          Value& meta = patch["metadata"];
          for (auto it = meta.MemberBegin(); it != meta.MemberEnd();) {
            std::string key = it->name.GetString();
            it = key == "resourceVersion" || key == "uid" ? it + 1 : meta.EraseMember(it);
          }
        }
      } else {
        patch.RemoveMember("status");
      }
    }
    MergePatch(current, patch, current.GetAllocator());
    return {200, WithKind(resource, StoreLocked(resource, current))};
  }

  // policy/v1 Eviction, as the API server's eviction storage (pkg/registry/core/pod/storage/
  // eviction.go) does it: the UID precondition; a pod that is Pending, Succeeded, Failed or
  // already terminating is deleted without looking at budgets; otherwise the budgets of the
  // namespace whose selector selects the pod (policy/v1: an empty selector selects every pod, a
  // missing one none) are counted: more than one is a 500, one that allows no disruption a 429,
  // and one that allows it is taken down by one. With dryRun (the query or deleteOptions.dryRun
  // ["All"]) everything is checked and nothing changed.
  Reply EvictLocked(const std::string& ns, const std::string& name, const std::string& body, bool dry_run_query) {
    Document e;
    e.Parse(body.c_str());
    if (e.HasParseError() || !e.IsObject()) return {400, StatusJson(400, "BadRequest", "malformed Eviction")};
    auto& pods = objects_["pods"];
    auto it = pods.find(Key("pods", ns, name));
    if (it == pods.end()) return NotFound("pods", name);
    Document pod;
    pod.Parse(it->second.c_str());
    std::string want_uid;
    bool dry_run = dry_run_query;
    if (e.HasMember("deleteOptions") && e["deleteOptions"].IsObject()) {
      const Value& options = e["deleteOptions"];
      want_uid = Str(options, "preconditions", "uid");
      if (options.HasMember("dryRun") && options["dryRun"].IsArray()) {
        for (const Value& d : options["dryRun"].GetArray()) dry_run = dry_run || (d.IsString() && std::string_view(d.GetString()) == "All");
      }
    }
    if (!want_uid.empty() && want_uid != Str(pod, "metadata", "uid")) {
      return {409, StatusJson(409, "Conflict", fmt::format("Precondition failed: UID in precondition: {}, UID in object meta: {}",
                                                           want_uid, Str(pod, "metadata", "uid")))};
    }
    std::string phase = Str(pod, "status", "phase");
    bool ignore_budgets = phase == "Pending" || phase == "Succeeded" || phase == "Failed" || !Str(pod, "metadata", "deletionTimestamp").empty();
    std::vector<Document> budgets;
    for (const auto& [key, json] : objects_["poddisruptionbudgets"]) {
      if (ignore_budgets) break;
      Document b;
      b.Parse(json.c_str());
      if (Str(b, "metadata", "namespace") == ns && Selects(b, pod)) budgets.push_back(std::move(b));
    }
    if (budgets.size() > 1) {
      return {500, StatusJson(500, "InternalError",
                              "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.")};
    }
    for (Document& b : budgets) {
      const Value* allowed = b.HasMember("status") && b["status"].IsObject() && b["status"].HasMember("disruptionsAllowed")
                                 ? &b["status"]["disruptionsAllowed"]
                                 : nullptr;
      if (allowed == nullptr || !allowed->IsInt() || allowed->GetInt() < 1) {
        return {429, StatusJson(429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.")};
      }
      if (dry_run) continue;
      b["status"]["disruptionsAllowed"].SetInt(allowed->GetInt() - 1);
      StoreLocked("poddisruptionbudgets", b);
    }
    if (dry_run) return {201, StatusJson(201, "", "")};
    Reply deleted = DeleteLocked("pods", ns, name);
    if (deleted.status != 200) return deleted;
    return {201, StatusJson(201, "", "")};
  }

  // True if budget `b`'s spec.selector selects `pod` as policy/v1 reads it: a missing selector
  // none, an empty one every pod; matchLabels and matchExpressions (In, NotIn, Exists,
  // DoesNotExist) all hold.
  static bool Selects(const Document& b, const Document& pod) {
    if (!b.HasMember("spec") || !b["spec"].IsObject() || !b["spec"].HasMember("selector")) return false;
    const Value& sel = b["spec"]["selector"];
    if (!sel.IsObject()) return false;
    const Value& meta = pod["metadata"];
    auto label = [&](const Value& key) -> const Value* {
      if (!meta.HasMember("labels") || !meta["labels"].IsObject()) return nullptr;
      auto l = meta["labels"].FindMember(key);
      return l == meta["labels"].MemberEnd() ? nullptr : &l->value;
    };
    if (sel.HasMember("matchLabels") && sel["matchLabels"].IsObject()) {
      for (const auto& m : sel["matchLabels"].GetObject()) {
        const Value* l = label(m.name);
        if (l == nullptr || !l->IsString() || !m.value.IsString() || std::string_view(l->GetString()) != m.value.GetString()) return false;
      }
    }
    if (!sel.HasMember("matchExpressions") || !sel["matchExpressions"].IsArray()) return true;
    for (const Value& x : sel["matchExpressions"].GetArray()) {
      const Value* l = label(x["key"]);
      std::string op = x["operator"].GetString();
      bool in = false;
      if (l != nullptr && x.HasMember("values")) {
        for (const Value& v : x["values"].GetArray()) in = in || std::string_view(v.GetString()) == l->GetString();
      }
      if ((op == "In" && !in) || (op == "NotIn" && in) || (op == "Exists" && l == nullptr) || (op == "DoesNotExist" && l != nullptr)) {
        return false;
      }
    }
    return true;
  }

  Reply BindLocked(const std::string& ns, const std::string& name, const std::string& body) {
    Document b;
    b.Parse(body.c_str());
    if (b.HasParseError() || !b.IsObject()) return {400, StatusJson(400, "BadRequest", "malformed Binding")};
    if (Str(b, "metadata", "name") != name) {
      return {400, StatusJson(400, "BadRequest", "name in the Binding does not match the name in the URL")};
    }
    std::string node = Str(b, "target", "name");
    std::string kind = Str(b, "target", "kind");
    if (node.empty() || (!kind.empty() && kind != "Node")) {
      return {422, StatusJson(422, "Invalid", "Binding.target: a Node name is required")};
    }
    auto& pods = objects_["pods"];
    auto it = pods.find(Key("pods", ns, name));
    if (it == pods.end()) return NotFound("pods", name);
    Document pod;
    pod.Parse(it->second.c_str());
    std::string want_uid = Str(b, "metadata", "uid");
    std::string uid = Str(pod, "metadata", "uid");
    if (!want_uid.empty() && want_uid != uid) {
      return {409, StatusJson(409, "Conflict",
                              fmt::format("Operation cannot be fulfilled on pods/binding \"{}\": Precondition failed: UID "
                                          "in precondition: {}, UID in object meta: {}",
                                          name, want_uid, uid))};
    }
    std::string bound = Str(pod, "spec", "nodeName");
    if (!bound.empty()) {
      return {409, StatusJson(409, "Conflict",
                              fmt::format("Operation cannot be fulfilled on pods/binding \"{}\": pod {} is already "
                                          "assigned to node \"{}\"",
                                          name, name, bound))};
    }
    auto& a = pod.GetAllocator();
    if (!pod.HasMember("spec") || !pod["spec"].IsObject()) {
      pod.RemoveMember("spec");
      pod.AddMember("spec", Value(rapidjson::kObjectType), a);
    }
    SetString(pod["spec"], "nodeName", node, a);
    if (b["metadata"].HasMember("annotations") && b["metadata"]["annotations"].IsObject()) {
      Value& meta = Meta(pod);
      if (!meta.HasMember("annotations") || !meta["annotations"].IsObject()) {
        meta.RemoveMember("annotations");
        meta.AddMember("annotations", Value(rapidjson::kObjectType), a);
      }
      MergePatch(meta["annotations"], b["metadata"]["annotations"], a);
    }
    StoreLocked("pods", pod);
    return {201, StatusJson(201, "", "")};
  }

  // Returns the watch line of `e` for a watcher with `sel`, or "" if it does not see the event.
  std::string EventLine(const HistoryEvent& e, const Selector& sel) const {
    std::string type = e.type;
    bool now = sel.Matches(e.object);
    if (e.type == "MODIFIED") {
      bool before = sel.Matches(e.old_object);
      if (!before && !now) return "";
      if (before && !now) type = "DELETED";
      if (!before && now) type = "ADDED";
    } else if (!now) {
      return "";
    }
    return fmt::format(R"({{"type":"{}","object":{}}})", type, WithKind(e.resource, e.object)) + "\n";
  }

  template <typename Stream>
  void WritePieces(Stream& stream, const std::string& data, beast::error_code& ec) {
    size_t at = 0;
    while (at < data.size() && !ec) {
      size_t n = data.size() - at;
      if (options_.watch_piece_max > 0) {
        std::uniform_int_distribution<size_t> size(1, options_.watch_piece_max);
        std::lock_guard<std::mutex> lock(rng_mu_);
        n = std::min(n, size(rng_));
      }
      net::write(stream, http::make_chunk(net::buffer(data.data() + at, n)), ec);
      at += n;
    }
  }

  template <typename Stream>
  void ServeWatch(Stream& stream, int fd, const http::request<http::string_body>& req, Target& t) {
    std::string ns, name, sub;
    std::string resource = Route(t, &ns, &name, &sub);
    beast::error_code ec;
    auto plain = [&](int status, const std::string& body) {
      http::response<http::string_body> res(static_cast<http::status>(status), 11);
      res.set(http::field::content_type, "application/json");
      res.body() = body;
      res.prepare_payload();
      http::write(stream, res, ec);
    };
    if (resource.empty() || !name.empty()) return plain(404, StatusJson(404, "NotFound", "no such resource"));
    std::string rv_text = t.query["resourceVersion"];
    uint64_t from = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!rv_text.empty() && rv_text != "0") {
        from = std::stoull(rv_text);
        if (from < compacted_) {
          return plain(410, StatusJson(410, "Expired", fmt::format("too old resource version: {} ({})", from, compacted_)));
        }
      }
    }
    bool bookmarks = t.query["allowWatchBookmarks"] == "true" || t.query["allowWatchBookmarks"] == "1";
    int timeout = t.query["timeoutSeconds"].empty() ? 1800 : std::stoi(t.query["timeoutSeconds"]);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
    Selector sel = Selector::Parse(t.query["fieldSelector"]);
    const ResourceInfo& info = Resources().at(resource);

    http::response<http::empty_body> res(http::status::ok, 11);
    res.set(http::field::content_type, "application/json");
    res.chunked(true);
    http::response_serializer<http::empty_body> sr(res);
    http::write_header(stream, sr, ec);
    if (ec) return;

    std::unique_lock<std::mutex> lock(mu_);
    ++open_watches_;
    uint64_t expire = expire_gen_, bookmark = bookmark_gen_, end = end_gen_, drop = drop_gen_;
    std::string out;
    if (rv_text.empty() || rv_text == "0") {
      for (const auto& [key, json] : objects_[resource]) {
        if (sel.Matches(json)) out += fmt::format(R"({{"type":"ADDED","object":{}}})", WithKind(resource, json)) + "\n";
      }
      from = rv_;
    }
    bool finish = false;
    bool reset = false;
    for (;;) {
      for (const HistoryEvent& e : history_) {
        if (e.rv <= from || e.resource != resource) continue;
        out += EventLine(e, sel);
      }
      if (!history_.empty()) from = std::max(from, history_.back().rv);
      if (bookmark != bookmark_gen_) {
        bookmark = bookmark_gen_;
        if (bookmarks) {
          out += fmt::format(R"({{"type":"BOOKMARK","object":{{"kind":"{}","apiVersion":"{}","metadata":{{"resourceVersion":"{}"}}}}}})",
                             info.kind, ApiVersion(resource), rv_) + "\n";
        }
      }
      if (expire != expire_gen_) {
        out += fmt::format(R"({{"type":"ERROR","object":{}}})",
                           StatusJson(410, "Expired", fmt::format("too old resource version: {} ({})", from, rv_))) + "\n";
        finish = true;
      }
      if (end != end_gen_ || std::chrono::steady_clock::now() >= deadline) finish = true;
      if (drop != drop_gen_) reset = true;
      if (stopping_) reset = true;
      if (!out.empty()) {
        std::string data = std::move(out);
        out.clear();
        lock.unlock();
        WritePieces(stream, data, ec);
        lock.lock();
        if (ec) break;
      }
      if (reset) {
        ::shutdown(fd, SHUT_RDWR);
        break;
      }
      if (finish) {
        lock.unlock();
        net::write(stream, http::make_chunk_last(), ec);
        lock.lock();
        break;
      }
      cv_.wait_until(lock, deadline, [&] {
        return (!history_.empty() && history_.back().rv > from) || bookmark != bookmark_gen_ || expire != expire_gen_ ||
               end != end_gen_ || drop != drop_gen_ || stopping_;
      });
    }
    --open_watches_;
  }

  const FakeApiServerOptions options_;
  net::io_context ioc_;
  tcp::acceptor acceptor_;
  std::optional<ssl::context> tls_;
  uint16_t port_ = 0;
  std::thread accept_thread_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::set<int> open_fds_;
  std::set<int> idle_fds_;  // connections waiting for their next request
  std::vector<std::thread> threads_;
  uint64_t rv_ = 100;
  uint64_t compacted_ = 0;
  uint64_t uids_ = 0;
  std::map<std::string, std::map<std::string, std::string>> objects_;
  std::vector<HistoryEvent> history_;
  std::map<std::string, ContinueState> continues_;
  std::vector<Fault> faults_;
  std::map<std::string, std::chrono::milliseconds> delays_;
  std::vector<RecordedRequest> requests_;
  uint64_t expire_gen_ = 0, bookmark_gen_ = 0, end_gen_ = 0, drop_gen_ = 0;
  int open_watches_ = 0;
  std::mutex rng_mu_;
  std::mt19937 rng_;
};

FakeApiServer::FakeApiServer(FakeApiServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
FakeApiServer::~FakeApiServer() = default;
uint16_t FakeApiServer::port() const { return impl_->port(); }
std::string FakeApiServer::url() const { return impl_->url(); }
std::string FakeApiServer::Put(std::string_view resource, std::string_view json) { return impl_->Put(resource, json); }
bool FakeApiServer::Remove(std::string_view resource, std::string_view ns, std::string_view name) {
  return impl_->Remove(resource, ns, name);
}
std::optional<std::string> FakeApiServer::Get(std::string_view resource, std::string_view ns, std::string_view name) const {
  return impl_->Get(resource, ns, name);
}
std::vector<std::string> FakeApiServer::Objects(std::string_view resource) const { return impl_->Objects(resource); }
std::string FakeApiServer::resource_version() const { return impl_->resource_version(); }
void FakeApiServer::FailNext(std::string method, std::string path_prefix, int status, int count,
                             std::chrono::milliseconds delay) {
  impl_->Inject(Fault{.method = std::move(method), .path_prefix = std::move(path_prefix), .status = status, .count = count,
                      .delay = delay});
}
void FakeApiServer::Inject(Fault fault) { impl_->Inject(std::move(fault)); }
void FakeApiServer::ClearFaults() { impl_->ClearFaults(); }
void FakeApiServer::CloseIdleConnections() { impl_->CloseIdleConnections(); }
void FakeApiServer::SetDelay(std::string path_prefix, std::chrono::milliseconds delay) {
  impl_->SetDelay(std::move(path_prefix), delay);
}
void FakeApiServer::CompactHistory() { impl_->CompactHistory(); }
void FakeApiServer::ExpireWatches() { impl_->ExpireWatches(); }
void FakeApiServer::Bookmark() { impl_->Bookmark(); }
void FakeApiServer::EndWatches() { impl_->EndWatches(); }
void FakeApiServer::DropWatches() { impl_->DropWatches(); }
void FakeApiServer::ExpireContinueTokens() { impl_->ExpireContinueTokens(); }
int FakeApiServer::open_watches() const { return impl_->open_watches(); }
std::vector<RecordedRequest> FakeApiServer::Requests() const { return impl_->Requests(); }
void FakeApiServer::ClearRequests() { impl_->ClearRequests(); }

}  // namespace gpusched::testing
