// File: config.cc
//
// The settings table (file key, flag, reader per setting) from which the file's known keys, the
// flags and their usage all come; YAML applied through it with unknown keys refused, flags applied
// over the file, and the checks across settings.
#include "gpusched/config/config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include "gpusched/scoring/scorer.h"

namespace gpusched::config {
namespace {

// Reads a whole decimal integer in [min, max].
Status Int(std::string_view text, int64_t min, int64_t max, int64_t* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return InvalidArgumentError(fmt::format("cannot read \"{}\" as a number", text));
  }
  if (*out < min || *out > max) return InvalidArgumentError(fmt::format("{} is outside {}-{}", *out, min, max));
  return OkStatus();
}

template <typename T>
Status IntInto(std::string_view text, int64_t min, int64_t max, T* out) {
  int64_t v = 0;
  GPUSCHED_RETURN_IF_ERROR(Int(text, min, max, &v));
  *out = static_cast<T>(v);
  return OkStatus();
}

Status Seconds(std::string_view text, int64_t min, std::chrono::seconds* out) {
  int64_t v = 0;
  GPUSCHED_RETURN_IF_ERROR(Int(text, min, int64_t{1} << 31, &v));
  *out = std::chrono::seconds(v);
  return OkStatus();
}

Status Bool(std::string_view text, bool* out) {
  if (text == "true") {
    *out = true;
  } else if (text == "false") {
    *out = false;
  } else {
    return InvalidArgumentError(fmt::format("cannot read \"{}\" as true or false", text));
  }
  return OkStatus();
}

Status Text(std::string_view text, std::string* out) {
  *out = std::string(text);
  return OkStatus();
}

Status Double(std::string_view text, double min, double* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return InvalidArgumentError(fmt::format("cannot read \"{}\" as a number", text));
  }
  if (*out < min) return InvalidArgumentError(fmt::format("{} is below {}", text, min));
  return OkStatus();
}

Status PathPrefix(std::string_view text, Config* c) {
  if (!text.empty() && text.front() != '/') return InvalidArgumentError(fmt::format("\"{}\" must start with /", text));
  c->path_prefix = std::string(text);
  while (c->path_prefix.ends_with('/')) c->path_prefix.pop_back();
  return OkStatus();
}

Status IdleTimeout(std::string_view text, Config* c) {
  int64_t v = 0;
  GPUSCHED_RETURN_IF_ERROR(Int(text, 0, int64_t{1} << 31, &v));
  if (v <= 90) return InvalidArgumentError(fmt::format("{} must exceed 90 (kube-scheduler's idle timeout)", v));
  c->server.idle_timeout = std::chrono::seconds(v);
  return OkStatus();
}

Status GpuPolicy(std::string_view text, Config* c) {
  std::optional<placement::Policy> p = placement::ParsePolicy(text);
  if (!p) return InvalidArgumentError(fmt::format("\"{}\" (want binpack or spread)", text));
  c->service.placement.gpu_policy = *p;
  return OkStatus();
}

Status ScoreMapping(std::string_view text, Config* c) {
  std::optional<placement::ScoreMapping> m = placement::ParseScoreMapping(text);
  if (!m) return InvalidArgumentError(fmt::format("\"{}\" (want rank or linear)", text));
  c->service.score_mapping = *m;
  return OkStatus();
}

Status DraMode(std::string_view text, Config* c) {
  if (text != "advisory" && text != "owner") return InvalidArgumentError(fmt::format("\"{}\" (want advisory or owner)", text));
  c->dra_owner = text == "owner";
  return OkStatus();
}

void ClearSnapshots(Config* c) { c->snapshots.clear(); }
void ClearGpuDrivers(Config* c) { c->service.dra.gpu_drivers.clear(); }
void ClearTopologyLevels(Config* c) { c->service.topology_levels.clear(); }

// A node label key: an optional DNS prefix and "/", then a name of at most 63 characters.
Status AddTopologyLevel(std::string_view text, Config* c) {
  std::string_view name = text.substr(text.find('/') == std::string_view::npos ? 0 : text.rfind('/') + 1);
  bool ok = !name.empty() && name.size() <= 63 && std::all_of(name.begin(), name.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.';
  });
  if (!ok || text.size() > 317) {
    return InvalidArgumentError(fmt::format("config topology.levels: \"{}\" is not a node label key", text));
  }
  c->service.topology_levels.emplace_back(text);
  return OkStatus();
}

Status AddSnapshot(std::string_view text, Config* c) {
  c->snapshots.emplace_back(text);
  return OkStatus();
}

Status AddGpuDriver(std::string_view text, Config* c) {
  c->service.dra.gpu_drivers.emplace_back(text);
  c->inventory.dra_gpu_drivers = c->service.dra.gpu_drivers;
  return OkStatus();
}

// kueue.leaderLease: "namespace/name" of a Lease.
Status KueueLease(std::string_view t, Config* c) {
  size_t slash = t.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == t.size() || t.find('/', slash + 1) != std::string_view::npos) {
    return InvalidArgumentError(fmt::format("\"{}\": want namespace/name of a Lease", t));
  }
  c->cluster.kueue_lease_namespace = std::string(t.substr(0, slash));
  c->cluster.kueue_lease_name = std::string(t.substr(slash + 1));
  return OkStatus();
}

constexpr int64_t kMaxInt = int64_t{1} << 40;

// Every setting, once: its key in the file, its flag (if any) and how its text is read. The file's
// known keys, the flags, their usage text and their validation all come from this table.

const Setting kSettings[] = {
    {"listen", "--listen", "HOST:PORT", "address to listen on (default 127.0.0.1:8888)", Kind::kScalar,
     [](std::string_view t, Config* c) { return ParseListen(t, &c->server); }},
    {"pathPrefix", "--path-prefix", "PATH", "path before the verbs, e.g. /gpu (default: none)", Kind::kScalar,
     &PathPrefix},
    {"threads", "--threads", "N", "worker threads (default 2)", Kind::kScalar,
     [](std::string_view t, Config* c) { return IntInto(t, 1, 256, &c->server.threads); }},
    {"blockingThreads", "--blocking-threads", "N", "threads for bind's API writes, off the I/O threads (default 4)", Kind::kScalar,
     [](std::string_view t, Config* c) { return IntInto(t, 1, 256, &c->server.blocking_threads); }},
    {"schedulerName", "", "", "", Kind::kScalar, [](std::string_view t, Config* c) {
       if (t.empty()) return InvalidArgumentError("config schedulerName: want the kube-scheduler profile gpusched serves");
       c->service.scheduler_name = std::string(t);
       c->inventory.scheduler_name = std::string(t);  // the use table marks pods that name another
       return OkStatus();
     }},
    {"bodyLimitBytes", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return IntInto(t, 4096, kMaxInt, &c->server.body_limit); }},
    {"idleTimeoutSeconds", "", "", "", Kind::kScalar, &IdleTimeout},
    {"placement.nodePolicy", "--node-policy", "P",
     "binpack (default), spread, fgd, softmix, bestfit, ... (gpusched replay --help)", Kind::kScalar,
     [](std::string_view t, Config* c) { return SetNodePolicy(t, &c->service); }},
    {"placement.gpuPolicy", "--gpu-policy", "P", "binpack (default) or spread", Kind::kScalar, &GpuPolicy},
    {"placement.searchBudget", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return IntInto(t, 1, kMaxInt, &c->service.placement.search_budget); }},
    {"scoring.mapping", "--score-mapping", "M", "rank (default) or linear", Kind::kScalar, &ScoreMapping},
    {"scoring.filterTopK", "--filter-top-k", "K", "filter keeps only the best K fitting nodes (default 0: all)",
     Kind::kScalar, [](std::string_view t, Config* c) { return IntInto(t, 0, kMaxInt, &c->service.filter_top_k); }},
    {"inventory.maxPendingPods", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return IntInto(t, 1, kMaxInt, &c->inventory.max_pending_pods); }},
    {"inventory.assumeTtlSeconds", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Seconds(t, 1, &c->inventory.assume_ttl); }},
    {"inventory.bookingTtlSeconds", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Seconds(t, 1, &c->inventory.booking_ttl); }},
    {"inventory.nominationTtlSeconds", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Seconds(t, 1, &c->inventory.nomination_ttl); }},
    {"snapshots", "--snapshot", "FILE",
     "Kubernetes List JSON (kubectl get ... -A -o json); repeatable (default: the demo)",
     Kind::kList, &AddSnapshot, &ClearSnapshots},
    {"snapshotReloadSeconds", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return IntInto(t, 0, kMaxInt, &c->snapshot_reload_seconds); }},
    {"cluster.kubeconfig", "--kubeconfig", "FILE", "a live cluster: watch it and bind through its API server",
     Kind::kScalar, [](std::string_view t, Config* c) { return Text(t, &c->cluster.kubeconfig); }},
    {"cluster.context", "--context", "NAME", "the kubeconfig context (default: current-context)", Kind::kScalar,
     [](std::string_view t, Config* c) { return Text(t, &c->cluster.context); }},
    {"cluster.inCluster", "--in-cluster", "", "a live cluster through the pod's service account", Kind::kSwitch,
     [](std::string_view t, Config* c) { return Bool(t, &c->cluster.in_cluster); }},
    {"cluster.qps", "", "", "", Kind::kScalar, [](std::string_view t, Config* c) { return Double(t, 0, &c->cluster.qps); }},
    {"cluster.burst", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return IntInto(t, 1, kMaxInt, &c->cluster.burst); }},
    {"cluster.events", "", "", "", Kind::kScalar, [](std::string_view t, Config* c) { return Bool(t, &c->cluster.events); }},
    {"cluster.watchDra", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Bool(t, &c->cluster.watch_dra); }},
    {"cluster.watchPodGroups", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Bool(t, &c->cluster.watch_pod_groups); }},
    {"tls.certFile", "--tls-cert", "FILE", "serve HTTPS with this certificate (PEM chain) ...", Kind::kScalar,
     [](std::string_view t, Config* c) { return Text(t, &c->server.tls_cert_file); }},
    {"tls.keyFile", "--tls-key", "FILE", "... and key; both are re-read when they change", Kind::kScalar,
     [](std::string_view t, Config* c) { return Text(t, &c->server.tls_key_file); }},
    {"tls.clientCaFile", "--client-ca", "FILE", "mTLS: refuse clients without a certificate signed by this CA",
     Kind::kScalar, [](std::string_view t, Config* c) { return Text(t, &c->server.client_ca_file); }},
    {"webhook.listen", "--webhook-listen", "H:P",
     "also serve the admission webhook (POST /validate/node), probes and metrics over HTTPS", Kind::kScalar,
     [](std::string_view t, Config* c) { return Text(t, &c->webhook.listen); }},
    {"webhook.certFile", "--webhook-cert", "FILE", "... with this certificate", Kind::kScalar,
     [](std::string_view t, Config* c) { return Text(t, &c->webhook.cert_file); }},
    {"webhook.keyFile", "--webhook-key", "FILE", "... and key", Kind::kScalar,
     [](std::string_view t, Config* c) { return Text(t, &c->webhook.key_file); }},
    {"limits.headerLimitBytes", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return IntInto(t, 1024, kMaxInt, &c->server.header_limit); }},
    {"limits.readTimeoutSeconds", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Seconds(t, 1, &c->server.read_timeout); }},
    {"limits.maxConnections", "--max-connections", "N",
     "concurrent connections before new ones get 503 (default 1024)", Kind::kScalar,
     [](std::string_view t, Config* c) { return IntInto(t, 1, kMaxInt, &c->server.max_connections); }},
    {"limits.shutdownGraceSeconds", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Seconds(t, 1, &c->server.shutdown_grace); }},
    {"log.format", "--log-format", "F", "text (default) or json", Kind::kScalar,
     [](std::string_view t, Config* c) { return ParseLogFormat(t, &c->log_format); }},
    {"log.level", "--log-level", "L", "debug, info (default), warning or error", Kind::kScalar,
     [](std::string_view t, Config* c) { return ParseLogLevel(t, &c->log_level); }},
    {"dra.mode", "", "", "", Kind::kScalar, &DraMode},
    {"dra.gpuDrivers", "", "", "", Kind::kList, &AddGpuDriver, &ClearGpuDrivers},
    {"dra.extendedResources", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Bool(t, &c->service.dra_extended_resources); }},
    {"dra.bindingTimeoutSeconds", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Seconds(t, 1, &c->service.dra_binding_timeout); }},
    {"dra.releaseAfterSeconds", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Seconds(t, 1, &c->service.dra_release_after); }},
    {"defrag.holdSeconds", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Seconds(t, 1, &c->service.defrag_hold_ttl); }},
    {"gang.enabled", "", "", "", Kind::kScalar, [](std::string_view t, Config* c) { return Bool(t, &c->service.gangs); }},
    {"gang.holdSeconds", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Seconds(t, 1, &c->service.gang_hold_ttl); }},
    {"gang.nominate", "", "", "", Kind::kScalar, [](std::string_view t, Config* c) { return Bool(t, &c->service.gang_nominate); }},
    {"topology.levels", "", "", "", Kind::kList, &AddTopologyLevel, &ClearTopologyLevels},
    {"topology.steer", "", "", "", Kind::kScalar, [](std::string_view t, Config* c) { return Bool(t, &c->service.topology_steer); }},
    {"topology.reserveForGangs", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Bool(t, &c->service.topology_reserve); }},
    {"topology.fallbackAfterSeconds", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Seconds(t, 0, &c->service.topology_fallback_after); }},
    {"topology.drainWaitSeconds", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Seconds(t, 0, &c->service.topology_drain_wait); }},
    {"kueue.controllerName", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Text(t, &c->service.kueue_controller_name); }},
    {"kueue.enabled", "", "", "", Kind::kScalar, [](std::string_view t, Config* c) { return Bool(t, &c->cluster.watch_kueue); }},
    {"kueue.leaderLease", "", "", "", Kind::kScalar, &KueueLease},
    {"kueue.holdSeconds", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Seconds(t, 1, &c->service.kueue_hold_ttl); }},
    {"kueue.rejectUnplaceable", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Bool(t, &c->service.kueue_reject_unplaceable); }},
    {"kueue.retryAfterSeconds", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return Seconds(t, 0, &c->service.kueue_retry_after); }},
    {"dra.searchSteps", "", "", "", Kind::kScalar,
     [](std::string_view t, Config* c) { return IntInto(t, 1, kMaxInt, &c->service.dra.max_steps); }},
};

Status Bad(std::string_view key, std::string_view why) {
  return InvalidArgumentError(fmt::format("config {}: {}", key, why));
}

// Returns the node at `key` ("a.b") in `root`, or an undefined node.
YAML::Node At(const YAML::Node& root, std::string_view key) {
  size_t dot = key.find('.');
  if (dot == std::string_view::npos) return root[std::string(key)];
  YAML::Node section = root[std::string(key.substr(0, dot))];
  return section && section.IsMap() ? section[std::string(key.substr(dot + 1))] : YAML::Node();
}

// Refuses keys no setting names, and sections that are not mappings.
Status CheckKeys(const YAML::Node& root) {
  if (!root.IsMap()) return Bad("document", "want a mapping");
  std::set<std::string, std::less<>> top, nested;
  for (const Setting& s : kSettings) {
    size_t dot = s.key.find('.');
    top.emplace(s.key.substr(0, dot));
    if (dot != std::string_view::npos) nested.emplace(s.key);
  }
  for (const auto& kv : root) {
    std::string key = kv.first.as<std::string>();
    if (!top.contains(key)) return Bad(key, "unknown key");
    bool section = nested.lower_bound(key + ".") != nested.lower_bound(key + "/");  // '/' follows '.'
    if (!section) continue;
    if (!kv.second.IsMap()) return Bad(key, "want a mapping");
    for (const auto& inner : kv.second) {
      std::string full = key + "." + inner.first.as<std::string>();
      if (!nested.contains(full)) return Bad(full, "unknown key");
    }
  }
  return OkStatus();
}

Status ApplyYaml(const YAML::Node& root, Config* c) {
  GPUSCHED_RETURN_IF_ERROR(CheckKeys(root));
  for (const Setting& s : kSettings) {
    YAML::Node v = At(root, s.key);
    if (!v || v.IsNull()) continue;
    if (s.kind == Kind::kList) {
      if (!v.IsSequence()) return Bad(s.key, "want a list");
      s.clear(c);
      for (const YAML::Node& item : v) {
        if (Status st = s.set(item.as<std::string>(), c); !st.ok()) return Bad(s.key, st.message());
      }
      continue;
    }
    if (!v.IsScalar()) return Bad(s.key, fmt::format("cannot read \"{}\" as a value", YAML::Dump(v)));
    if (Status st = s.set(v.Scalar(), c); !st.ok()) return Bad(s.key, st.message());
  }
  return OkStatus();
}

}  // namespace

std::span<const Setting> Settings() { return kSettings; }

const Setting* FindFlag(std::string_view flag) {
  for (const Setting& s : kSettings) {
    if (!s.flag.empty() && s.flag == flag) return &s;
  }
  return nullptr;
}

Status ApplyFlag(std::string_view flag, std::string_view value, Config* c) {
  const Setting* s = FindFlag(flag);
  if (s == nullptr) return InvalidArgumentError(fmt::format("unknown flag {}", flag));
  if (Status st = s->set(value, c); !st.ok()) return InvalidArgumentError(fmt::format("{}: {}", flag, st.message()));
  return OkStatus();
}

std::string FlagUsage() {
  std::string out;
  for (const Setting& s : kSettings) {
    if (s.flag.empty()) continue;
    std::string name = s.arg.empty() ? std::string(s.flag) : fmt::format("{} {}", s.flag, s.arg);
    out += fmt::format("  {:<22} {}\n", name, s.help);
  }
  return out;
}

Status Validate(const Config& c) {
  if (c.server.tls_cert_file.empty() != c.server.tls_key_file.empty()) {
    return InvalidArgumentError("TLS needs both a certificate and a key (tls.certFile, tls.keyFile; --tls-cert, --tls-key)");
  }
  if (!c.server.client_ca_file.empty() && c.server.tls_cert_file.empty()) {
    return InvalidArgumentError("mTLS (tls.clientCaFile, --client-ca) needs a certificate and key too");
  }
  if (!c.webhook.listen.empty() && (c.webhook.cert_file.empty() || c.webhook.key_file.empty())) {
    return InvalidArgumentError("the webhook listener needs a certificate and key (--webhook-cert, --webhook-key)");
  }
  if (c.cluster.in_cluster && !c.cluster.kubeconfig.empty()) {
    return InvalidArgumentError("--in-cluster and --kubeconfig exclude each other");
  }
  if (c.cluster.live() && !c.snapshots.empty()) {
    return InvalidArgumentError("a live cluster (--kubeconfig, --in-cluster) and --snapshot exclude each other");
  }
  return OkStatus();
}

Status ParseLogFormat(std::string_view text, log::Format* out) {
  if (text == "text") {
    *out = log::Format::kText;
  } else if (text == "json") {
    *out = log::Format::kJson;
  } else {
    return InvalidArgumentError(fmt::format("\"{}\" (want text or json)", text));
  }
  return OkStatus();
}

Status ParseLogLevel(std::string_view text, log::Level* out) {
  static constexpr std::pair<std::string_view, log::Level> kLevels[] = {
      {"debug", log::Level::kDebug}, {"info", log::Level::kInfo}, {"warning", log::Level::kWarning}, {"error", log::Level::kError}};
  for (auto [name, level] : kLevels) {
    if (text == name) {
      *out = level;
      return OkStatus();
    }
  }
  return InvalidArgumentError(fmt::format("\"{}\" (want debug, info, warning or error)", text));
}

Status SetNodePolicy(std::string_view name, extender::ServiceOptions* options) {
  std::span<const std::string_view> known = scoring::ScorerNames();
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    return InvalidArgumentError(fmt::format("\"{}\" (want one of {})", name, fmt::join(known, ", ")));
  }
  options->node_policy = std::string(name);
  return OkStatus();
}

Status ParseListen(std::string_view listen, http::ServerOptions* options) {
  size_t colon = listen.rfind(':');
  if (colon == std::string_view::npos) {
    return InvalidArgumentError(fmt::format("listen address \"{}\": want HOST:PORT", listen));
  }
  std::string_view host = listen.substr(0, colon);
  std::string_view port = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || value > 65535) {
    return InvalidArgumentError(fmt::format("listen address \"{}\": port \"{}\" is not 0-65535", listen, port));
  }
  if (host.empty()) return InvalidArgumentError(fmt::format("listen address \"{}\": empty host", listen));
  options->host = std::string(host);
  options->port = static_cast<uint16_t>(value);
  return OkStatus();
}

StatusOr<Config> ParseConfig(std::string_view text) {
  Config c;
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (root.IsNull()) return c;
    GPUSCHED_RETURN_IF_ERROR(ApplyYaml(root, &c));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(fmt::format("config: {}", e.what()));
  }
  return c;
}

StatusOr<Config> LoadConfigFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError(fmt::format("config file {}: cannot open", path));
  std::stringstream ss;
  ss << in.rdbuf();
  StatusOr<Config> c = ParseConfig(ss.str());
  if (!c.ok()) return c.status().WithContext(path);
  return c;
}

}  // namespace gpusched::config
