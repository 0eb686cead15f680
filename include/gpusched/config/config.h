// File: config.h
//
// gpusched's configuration file (YAML; JSON is YAML too), parsed once at start-up into explicit
// option structs. Unknown keys are errors, so a typo never silently falls back to a default.
//
//   listen: 127.0.0.1:8888        # host:port; [v6]:port
//   pathPrefix: ""                # kube-scheduler's urlPrefix path, e.g. /gpu
//   threads: 2
//   bodyLimitBytes: 134217728
//   idleTimeoutSeconds: 120       # must exceed 90 (Go's client idle timeout)
//   placement: {nodePolicy: binpack, gpuPolicy: binpack, searchBudget: 4096}
//                                 # nodePolicy: any scoring policy (fgd, softmix, ...)
//   scoring: {mapping: rank, filterTopK: 0}
//   inventory: {maxPendingPods: 100000}
//   snapshots: [cluster.json]     # Kubernetes List JSON files
//   snapshotReloadSeconds: 2      # re-read snapshots when they change; 0 = only on SIGHUP
//   tls: {certFile: tls.crt, keyFile: tls.key, clientCaFile: ca.crt}   # HTTPS; mTLS with clientCaFile
//   limits: {headerLimitBytes: 65536, readTimeoutSeconds: 30, maxConnections: 1024,
//            shutdownGraceSeconds: 20}
//   log: {format: text, level: info}                                   # json; debug, warning, error
//   dra: {mode: advisory, gpuDrivers: [gpu.nvidia.com], searchSteps: 200000}
//                                 # owner: bind allocates claims (dra.md §5.3 C)
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/log.h"
#include "gpusched/common/status.h"
#include "gpusched/extender/service.h"
#include "gpusched/http/server.h"
#include "gpusched/inventory/inventory.h"

namespace gpusched::config {

// Where the inventory comes from when it is a live cluster (otherwise: snapshots or the demo).
struct ClusterSource {
  std::string kubeconfig;  // a kubeconfig file
  std::string context;     // its context; "" = current-context
  bool in_cluster = false;  // the pod's service account
  double qps = 50;          // client-side rate limit of API requests (watches excluded)
  int burst = 100;
  bool events = true;     // post FailedGPUPlacement Events on pods that fit no node
  bool watch_dra = true;  // also watch resource.k8s.io objects
  bool watch_pod_groups = true;  // also watch pod groups (gangs) where the cluster serves them
  bool watch_kueue = true;       // also watch Kueue's objects and act as its admission check
  // The Lease whose holder is the replica that acts for Kueue's admission check (kueue.leaderLease,
  // namespace/name): kube-scheduler's own, whose holderIdentity starts with the pod's hostname.
  std::string kueue_lease_namespace = "kube-system";
  std::string kueue_lease_name = "gpu-scheduler";

  bool live() const { return in_cluster || !kubeconfig.empty(); }
};

// The admission webhook's own HTTPS listener (POST /validate/node only), reachable by the API
// server while the extender verbs stay on loopback. Off unless `listen` is set.
struct WebhookListener {
  std::string listen;  // HOST:PORT
  std::string cert_file;
  std::string key_file;
};

struct Config {
  http::ServerOptions server;
  std::string path_prefix;  // Default: "" (verbs at /filter, /prioritize, /bind).
  extender::ServiceOptions service;
  inventory::InventoryOptions inventory;
  std::vector<std::string> snapshots;
  int snapshot_reload_seconds = 2;  // Default: 2.
  ClusterSource cluster;
  WebhookListener webhook;
  bool dra_owner = false;  // dra.mode: owner; Default: advisory.
  log::Format log_format = log::Format::kText;  // Default: text.
  log::Level log_level = log::Level::kInfo;     // Default: info.
};

// How a setting's value is given: one scalar, a list (in the file; a repeatable flag), or a flag
// without a value (a switch: "true").
enum class Kind { kScalar, kList, kSwitch };

// One setting: its key in the file ("placement.nodePolicy"), its command-line flag ("" if none),
// the flag's argument and help for `serve --help`, and how a value's text is read into a Config
// (a list's items one by one, after `clear` empties the default). Settings() is the one table the
// file's keys, the flags and the usage text come from.
struct Setting {
  std::string_view key;
  std::string_view flag;
  std::string_view arg;
  std::string_view help;
  Kind kind;
  Status (*set)(std::string_view text, Config* c);
  void (*clear)(Config* c) = nullptr;  // kList only
};

std::span<const Setting> Settings();
// Returns the setting of command-line flag `flag` ("--node-policy"), or nullptr.
const Setting* FindFlag(std::string_view flag);
// Applies one flag's value on top of `c`. Errors: InvalidArgument naming the flag and the value.
Status ApplyFlag(std::string_view flag, std::string_view value, Config* c);
// Returns the flag lines of `gpusched serve --help`, one per flag.
std::string FlagUsage();
// Returns an error when settings contradict each other (a TLS certificate without its key, a live
// cluster and snapshots, ...), naming them.
Status Validate(const Config& c);

// Parse "text"/"json" and "debug"/"info"/"warning"/"error".
Status ParseLogFormat(std::string_view text, log::Format* out);
Status ParseLogLevel(std::string_view text, log::Level* out);

// Returns the configuration in `text`, on top of the defaults.
// Errors: InvalidArgument naming the key and the value.
StatusOr<Config> ParseConfig(std::string_view text);
StatusOr<Config> LoadConfigFile(const std::string& path);

// Sets options->node_policy to `name` if it is a known scoring policy.
Status SetNodePolicy(std::string_view name, extender::ServiceOptions* options);

// Sets options->host and options->port from "HOST:PORT" or "[V6]:PORT".
Status ParseListen(std::string_view listen, http::ServerOptions* options);

}  // namespace gpusched::config
