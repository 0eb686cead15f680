#include "gpusched/config/config.h"

#include "gpusched/scoring/scorer.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

namespace gpusched::config {
namespace {

Status Bad(std::string_view key, std::string_view why) {
  return InvalidArgumentError(fmt::format("config {}: {}", key, why));
}

Status CheckKeys(const YAML::Node& map, std::string_view where, const std::set<std::string>& allowed) {
  if (!map.IsMap()) return Bad(where, "want a mapping");
  for (const auto& kv : map) {
    std::string key = kv.first.as<std::string>();
    if (!allowed.contains(key)) {
      return Bad(where.empty() ? key : fmt::format("{}.{}", where, key), "unknown key");
    }
  }
  return OkStatus();
}

template <typename T>
Status Read(const YAML::Node& map, const char* key, std::string_view path, T* out) {
  YAML::Node v = map[key];
  if (!v) return OkStatus();
  try {
    *out = v.as<T>();
  } catch (const YAML::Exception&) {
    return Bad(path.empty() ? key : fmt::format("{}.{}", path, key),
               fmt::format("cannot read \"{}\" as {}", YAML::Dump(v),
                           std::is_same_v<T, std::string> ? "a string"
                           : std::is_same_v<T, bool>      ? "true or false"
                                                          : "a number"));
  }
  return OkStatus();
}

Status Apply(const YAML::Node& root, Config* c) {
  GPUSCHED_RETURN_IF_ERROR(CheckKeys(root, "",
                                     {"listen", "pathPrefix", "threads", "bodyLimitBytes", "idleTimeoutSeconds",
                                      "placement", "scoring", "inventory", "snapshots", "snapshotReloadSeconds", "tls",
                                      "limits", "log", "cluster", "webhook", "dra"}));
  std::string listen;
  GPUSCHED_RETURN_IF_ERROR(Read(root, "listen", "", &listen));
  if (!listen.empty()) GPUSCHED_RETURN_IF_ERROR(ParseListen(listen, &c->server));
  GPUSCHED_RETURN_IF_ERROR(Read(root, "pathPrefix", "", &c->path_prefix));
  if (!c->path_prefix.empty() && c->path_prefix.front() != '/') {
    return Bad("pathPrefix", fmt::format("\"{}\" must start with /", c->path_prefix));
  }
  while (c->path_prefix.ends_with('/')) c->path_prefix.pop_back();
  GPUSCHED_RETURN_IF_ERROR(Read(root, "threads", "", &c->server.threads));
  if (c->server.threads < 1 || c->server.threads > 256) return Bad("threads", fmt::format("{} is outside 1-256", c->server.threads));
  GPUSCHED_RETURN_IF_ERROR(Read(root, "bodyLimitBytes", "", &c->server.body_limit));
  if (c->server.body_limit < 4096) return Bad("bodyLimitBytes", fmt::format("{} is below 4096", c->server.body_limit));
  int64_t idle = c->server.idle_timeout.count();
  GPUSCHED_RETURN_IF_ERROR(Read(root, "idleTimeoutSeconds", "", &idle));
  if (idle <= 90) return Bad("idleTimeoutSeconds", fmt::format("{} must exceed 90 (kube-scheduler's idle timeout)", idle));
  c->server.idle_timeout = std::chrono::seconds(idle);

  if (YAML::Node p = root["placement"]) {
    GPUSCHED_RETURN_IF_ERROR(CheckKeys(p, "placement", {"nodePolicy", "gpuPolicy", "searchBudget"}));
    std::string node_policy;
    GPUSCHED_RETURN_IF_ERROR(Read(p, "nodePolicy", "placement", &node_policy));
    if (!node_policy.empty()) GPUSCHED_RETURN_IF_ERROR(SetNodePolicy(node_policy, "config placement.nodePolicy", &c->service));
    std::string gpu_policy;
    GPUSCHED_RETURN_IF_ERROR(Read(p, "gpuPolicy", "placement", &gpu_policy));
    if (!gpu_policy.empty()) {
      auto policy = placement::ParsePolicy(gpu_policy);
      if (!policy) return Bad("placement.gpuPolicy", fmt::format("\"{}\" (want binpack or spread)", gpu_policy));
      c->service.placement.gpu_policy = *policy;
    }
    GPUSCHED_RETURN_IF_ERROR(Read(p, "searchBudget", "placement", &c->service.placement.search_budget));
    if (c->service.placement.search_budget < 1) return Bad("placement.searchBudget", "must be positive");
  }
  if (YAML::Node s = root["scoring"]) {
    GPUSCHED_RETURN_IF_ERROR(CheckKeys(s, "scoring", {"mapping", "filterTopK"}));
    std::string mapping;
    GPUSCHED_RETURN_IF_ERROR(Read(s, "mapping", "scoring", &mapping));
    if (!mapping.empty()) {
      auto m = placement::ParseScoreMapping(mapping);
      if (!m) return Bad("scoring.mapping", fmt::format("\"{}\" (want rank or linear)", mapping));
      c->service.score_mapping = *m;
    }
    int64_t k = static_cast<int64_t>(c->service.filter_top_k);
    GPUSCHED_RETURN_IF_ERROR(Read(s, "filterTopK", "scoring", &k));
    if (k < 0) return Bad("scoring.filterTopK", fmt::format("{} is negative", k));
    c->service.filter_top_k = static_cast<size_t>(k);
  }
  if (YAML::Node inv = root["inventory"]) {
    GPUSCHED_RETURN_IF_ERROR(CheckKeys(inv, "inventory", {"maxPendingPods", "assumeTtlSeconds", "bookingTtlSeconds"}));
    GPUSCHED_RETURN_IF_ERROR(Read(inv, "maxPendingPods", "inventory", &c->inventory.max_pending_pods));
    for (auto [key, dst] : {std::pair{"assumeTtlSeconds", &c->inventory.assume_ttl},
                            std::pair{"bookingTtlSeconds", &c->inventory.booking_ttl}}) {
      int64_t seconds = dst->count();
      GPUSCHED_RETURN_IF_ERROR(Read(inv, key, "inventory", &seconds));
      if (seconds < 1) return Bad(fmt::format("inventory.{}", key), fmt::format("{} must be positive", seconds));
      *dst = std::chrono::seconds(seconds);
    }
  }
  if (YAML::Node d = root["dra"]) {
    GPUSCHED_RETURN_IF_ERROR(CheckKeys(d, "dra", {"mode", "gpuDrivers", "searchSteps"}));
    std::string mode;
    GPUSCHED_RETURN_IF_ERROR(Read(d, "mode", "dra", &mode));
    if (!mode.empty() && mode != "advisory" && mode != "owner") {
      return Bad("dra.mode", fmt::format("\"{}\" (want advisory or owner)", mode));
    }
    if (!mode.empty()) c->dra_owner = mode == "owner";
    if (YAML::Node drivers = d["gpuDrivers"]) {
      if (!drivers.IsSequence()) return Bad("dra.gpuDrivers", "want a list of driver names");
      c->service.dra.gpu_drivers.clear();
      for (const YAML::Node& n : drivers) c->service.dra.gpu_drivers.push_back(n.as<std::string>());
      c->inventory.dra_gpu_drivers = c->service.dra.gpu_drivers;
    }
    GPUSCHED_RETURN_IF_ERROR(Read(d, "searchSteps", "dra", &c->service.dra.max_steps));
    if (c->service.dra.max_steps < 1) return Bad("dra.searchSteps", "must be positive");
  }
  if (YAML::Node w = root["webhook"]) {
    GPUSCHED_RETURN_IF_ERROR(CheckKeys(w, "webhook", {"listen", "certFile", "keyFile"}));
    GPUSCHED_RETURN_IF_ERROR(Read(w, "listen", "webhook", &c->webhook.listen));
    GPUSCHED_RETURN_IF_ERROR(Read(w, "certFile", "webhook", &c->webhook.cert_file));
    GPUSCHED_RETURN_IF_ERROR(Read(w, "keyFile", "webhook", &c->webhook.key_file));
  }
  if (YAML::Node k = root["cluster"]) {
    GPUSCHED_RETURN_IF_ERROR(CheckKeys(k, "cluster", {"kubeconfig", "context", "inCluster", "qps", "burst", "events", "watchDra"}));
    GPUSCHED_RETURN_IF_ERROR(Read(k, "kubeconfig", "cluster", &c->cluster.kubeconfig));
    GPUSCHED_RETURN_IF_ERROR(Read(k, "context", "cluster", &c->cluster.context));
    GPUSCHED_RETURN_IF_ERROR(Read(k, "inCluster", "cluster", &c->cluster.in_cluster));
    GPUSCHED_RETURN_IF_ERROR(Read(k, "qps", "cluster", &c->cluster.qps));
    if (c->cluster.qps < 0) return Bad("cluster.qps", "is negative");
    GPUSCHED_RETURN_IF_ERROR(Read(k, "burst", "cluster", &c->cluster.burst));
    if (c->cluster.burst < 1) return Bad("cluster.burst", "must be positive");
    GPUSCHED_RETURN_IF_ERROR(Read(k, "events", "cluster", &c->cluster.events));
    GPUSCHED_RETURN_IF_ERROR(Read(k, "watchDra", "cluster", &c->cluster.watch_dra));
  }
  if (YAML::Node snaps = root["snapshots"]) {
    if (!snaps.IsSequence()) return Bad("snapshots", "want a list of file names");
    for (const auto& s : snaps) c->snapshots.push_back(s.as<std::string>());
  }
  GPUSCHED_RETURN_IF_ERROR(Read(root, "snapshotReloadSeconds", "", &c->snapshot_reload_seconds));
  if (c->snapshot_reload_seconds < 0) return Bad("snapshotReloadSeconds", "is negative");
  if (YAML::Node tls = root["tls"]) {
    GPUSCHED_RETURN_IF_ERROR(CheckKeys(tls, "tls", {"certFile", "keyFile", "clientCaFile"}));
    GPUSCHED_RETURN_IF_ERROR(Read(tls, "certFile", "tls", &c->server.tls_cert_file));
    GPUSCHED_RETURN_IF_ERROR(Read(tls, "keyFile", "tls", &c->server.tls_key_file));
    GPUSCHED_RETURN_IF_ERROR(Read(tls, "clientCaFile", "tls", &c->server.client_ca_file));
  }
  if (YAML::Node limits = root["limits"]) {
    GPUSCHED_RETURN_IF_ERROR(
        CheckKeys(limits, "limits", {"headerLimitBytes", "readTimeoutSeconds", "maxConnections", "shutdownGraceSeconds"}));
    GPUSCHED_RETURN_IF_ERROR(Read(limits, "headerLimitBytes", "limits", &c->server.header_limit));
    if (c->server.header_limit < 1024) return Bad("limits.headerLimitBytes", "must be at least 1024");
    GPUSCHED_RETURN_IF_ERROR(Read(limits, "maxConnections", "limits", &c->server.max_connections));
    if (c->server.max_connections < 1) return Bad("limits.maxConnections", "must be positive");
    for (auto [key, dst] : {std::pair{"readTimeoutSeconds", &c->server.read_timeout},
                            std::pair{"shutdownGraceSeconds", &c->server.shutdown_grace}}) {
      int64_t seconds = dst->count();
      GPUSCHED_RETURN_IF_ERROR(Read(limits, key, "limits", &seconds));
      if (seconds < 1) return Bad(fmt::format("limits.{}", key), fmt::format("{} must be positive", seconds));
      *dst = std::chrono::seconds(seconds);
    }
  }
  if (YAML::Node l = root["log"]) {
    GPUSCHED_RETURN_IF_ERROR(CheckKeys(l, "log", {"format", "level"}));
    std::string text;
    GPUSCHED_RETURN_IF_ERROR(Read(l, "format", "log", &text));
    if (!text.empty()) GPUSCHED_RETURN_IF_ERROR(ParseLogFormat(text, "config log.format", &c->log_format));
    text.clear();
    GPUSCHED_RETURN_IF_ERROR(Read(l, "level", "log", &text));
    if (!text.empty()) GPUSCHED_RETURN_IF_ERROR(ParseLogLevel(text, "config log.level", &c->log_level));
  }
  return OkStatus();
}

}  // namespace

Status ParseLogFormat(std::string_view text, std::string_view what, log::Format* out) {
  if (text == "text") {
    *out = log::Format::kText;
  } else if (text == "json") {
    *out = log::Format::kJson;
  } else {
    return InvalidArgumentError(fmt::format("{}: \"{}\" (want text or json)", what, text));
  }
  return OkStatus();
}

Status ParseLogLevel(std::string_view text, std::string_view what, log::Level* out) {
  if (text == "debug") {
    *out = log::Level::kDebug;
  } else if (text == "info") {
    *out = log::Level::kInfo;
  } else if (text == "warning") {
    *out = log::Level::kWarning;
  } else if (text == "error") {
    *out = log::Level::kError;
  } else {
    return InvalidArgumentError(fmt::format("{}: \"{}\" (want debug, info, warning or error)", what, text));
  }
  return OkStatus();
}

Status SetNodePolicy(std::string_view name, std::string_view what, extender::ServiceOptions* options) {
  std::span<const std::string_view> known = scoring::ScorerNames();
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    return InvalidArgumentError(fmt::format("{}: \"{}\" (want one of {})", what, name, fmt::join(known, ", ")));
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
    GPUSCHED_RETURN_IF_ERROR(Apply(root, &c));
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
