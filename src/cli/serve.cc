// File: serve.cc
//
// `gpusched serve`'s wiring: configuration from file and flags, the inventory's source (a live
// cluster with its watches, binder, events and claim writer, or snapshot files reloaded on change
// or SIGHUP), the HTTP and webhook listeners, readiness, and shutdown on signals.
#include "cli/serve.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <malloc.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "demo/demo_cluster.h"
#include "gpusched/common/log.h"
#include "gpusched/config/config.h"
#include "gpusched/extender/service.h"
#include "gpusched/http/router.h"
#include "gpusched/http/server.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubejson/objects.h"
#include "gpusched/kubejson/snapshot_source.h"
#include "gpusched/extender/inventory_claim_writer.h"
#include "gpusched/kubeapi/api_binder.h"
#include "gpusched/kubeapi/api_evictor.h"
#include "gpusched/kubeapi/api_hold_publisher.h"
#include "gpusched/kubeapi/api_kueue_writer.h"
#include "gpusched/kubeapi/api_pod_nominator.h"
#include "gpusched/kubeapi/api_claim_writer.h"
#include "gpusched/kubeapi/api_client.h"
#include "gpusched/kubeapi/cluster_sync.h"
#include "gpusched/kubeapi/event_recorder.h"

namespace gpusched::cli {
namespace {

// This pod's hostname: kube-scheduler's leader names its Lease holder after it.
std::string Hostname() {
  char name[256] = {};
  return gethostname(name, sizeof(name) - 1) == 0 ? std::string(name) : std::string();
}

std::string Usage() {
  return fmt::format(R"(usage: gpusched serve [flags]

Serves kube-scheduler's extender verbs (POST <prefix>/filter, /prioritize, /bind, /preempt) and
GET /healthz, /readyz, /debug/inventory[?node=NAME]; /explain, /debug/defrag and /ui for people.

  {:<22} YAML configuration (see scheduler-config/gpusched.yaml); flags override it
{}
With a live cluster, /readyz answers 503 until the first full sync of nodes, pods and DRA
objects; bind books the node and POSTs the pod's Binding with its annotations (docs/operations.md: Live
cluster).

Signals: SIGTERM/SIGINT stop accepting, let requests in flight finish (up to 20 s) and exit 0;
SIGHUP re-reads the snapshot files.
)",
                     "--config FILE", config::FlagUsage());
}

// The command line, split: the configuration file, and each other flag with its value in order.
struct Flags {
  std::string config;
  std::vector<std::pair<std::string, std::string>> values;
};

StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags flags;
  std::set<std::string> seen;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool inline_value = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      inline_value = true;
    }
    const config::Setting* s = arg == "--config" ? nullptr : config::FindFlag(arg);
    if (arg != "--config" && s == nullptr) return InvalidArgumentError(fmt::format("unknown flag {}", arg));
    if (s != nullptr && s->kind == config::Kind::kSwitch) {
      if (!inline_value) value = "true";
    } else if (!inline_value) {
      if (i + 1 >= argc) return InvalidArgumentError(fmt::format("flag {} needs a value", arg));
      value = argv[++i];
    }
    bool repeatable = s != nullptr && s->kind == config::Kind::kList;
    if (!seen.insert(arg).second && !repeatable) return InvalidArgumentError(fmt::format("flag {} given twice", arg));
    if (arg == "--config") {
      flags.config = value;
    } else {
      flags.values.emplace_back(arg, value);
    }
  }
  return flags;
}

// Applies command-line flags on top of the configuration file, each through its setting's own
// reader (config.h Settings()); a repeated list flag replaces the file's list.
Status ApplyFlags(const Flags& flags, config::Config* c) {
  std::set<std::string> cleared;
  for (const auto& [flag, value] : flags.values) {
    const config::Setting* s = config::FindFlag(flag);
    if (s->kind == config::Kind::kList && cleared.insert(flag).second) s->clear(c);
    GPUSCHED_RETURN_IF_ERROR(config::ApplyFlag(flag, value, c));
  }
  return config::Validate(*c);
}

// Logs each object of a load that could not be read; they are in /debug/inventory "errors" too.
void LogUnreadable(const ClusterObjects& objects) {
  for (const std::string& e : objects.errors) log::Warning("snapshot object left out: {}", e);
  for (const Node& n : objects.nodes) {
    if (!n.spec_error.empty()) log::Warning("node {} takes no GPU pods: {}", n.name, n.spec_error);
  }
  for (const Pod& p : objects.pods) {
    if (!p.spec_error.empty()) log::Warning("pod {}/{} cannot be read: {}", p.namespace_name, p.name, p.spec_error);
  }
}

StatusOr<ClusterObjects> LoadSource(const config::Config& c) {
  if (c.snapshots.empty()) {
    ClusterObjects objects;
    GPUSCHED_RETURN_IF_ERROR(kubejson::AppendClusterJson(demo::DemoClusterJson(), &objects));
    return objects;
  }
  return kubejson::LoadSnapshotFiles(c.snapshots);
}

// Returns the modification times of `files` (0 for a missing file).
std::vector<int64_t> ModTimes(const std::vector<std::string>& files) {
  std::vector<int64_t> out;
  for (const std::string& f : files) {
    struct stat st {};
    out.push_back(::stat(f.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec
                                                : 0);
  }
  return out;
}

// A live cluster behind the extender: API client, watches, the live binder and events.
class LiveCluster {
 public:
  static StatusOr<std::unique_ptr<LiveCluster>> Start(const config::Config& c, inventory::Inventory* inventory) {
    StatusOr<kubeapi::ApiConfig> api = c.cluster.in_cluster ? kubeapi::InClusterConfig()
                                                         : kubeapi::LoadKubeconfig(c.cluster.kubeconfig, c.cluster.context);
    if (!api.ok()) return api.status();
    std::string url = api->Url();
    StatusOr<std::unique_ptr<kubeapi::ApiClient>> client =
        kubeapi::ApiClient::Create(std::move(api).value(), kubeapi::ApiClientOptions{.qps = c.cluster.qps,
                                                                              .burst = c.cluster.burst,
                                                                              .user_agent = "gpusched/" GPUSCHED_VERSION});
    if (!client.ok()) return client.status();
    auto live = std::unique_ptr<LiveCluster>(new LiveCluster());
    live->client_ = std::move(client).value();
    live->sync_ = std::make_unique<kubeapi::ClusterSync>(live->client_.get(), inventory,
                                                      kubeapi::ClusterSyncOptions{.watch_dra = c.cluster.watch_dra,
                                                                                  .watch_pod_groups = c.cluster.watch_pod_groups,
                                                                                  .watch_kueue = c.cluster.watch_kueue});
    live->binder_ = std::make_unique<kubeapi::ApiBinder>(live->client_.get(), inventory,
                                                      kubeapi::ApiBinderOptions{.booking_ttl = c.inventory.booking_ttl});
    live->evictor_ = std::make_unique<kubeapi::ApiEvictor>(live->client_.get());
    live->hold_publisher_ = std::make_unique<kubeapi::ApiHoldPublisher>(live->client_.get(), inventory);
    live->nominator_ = std::make_unique<kubeapi::ApiPodNominator>(live->client_.get());
    if (c.dra_owner) live->claim_writer_ = std::make_unique<kubeapi::ApiClaimWriter>(live->client_.get());
    if (c.cluster.events) live->events_ = std::make_unique<kubeapi::EventRecorder>(live->client_.get());
    live->sync_->Start();
    if (c.dra_owner && live->sync_->dra_version() != "v1") {
      // Owner mode writes claim status in the v1 shape; 1.32 and 1.33 clusters are advisory only.
      return FailedPreconditionError(fmt::format(
          "dra.mode owner needs resource.k8s.io/v1 watched (Kubernetes 1.34 or later); gpusched watches {}",
          live->sync_->dra_version().empty() ? "no resource.k8s.io" : "resource.k8s.io/" + live->sync_->dra_version()));
    }
    if (!live->sync_->kueue_version().empty()) {
      live->kueue_writer_ = std::make_unique<kubeapi::ApiKueueWriter>(
          live->client_.get(), kubeapi::ApiKueueWriterOptions{.version = live->sync_->kueue_version(),
                                                              .lease_namespace = c.cluster.kueue_lease_namespace,
                                                              .lease_name = c.cluster.kueue_lease_name,
                                                              .identity = Hostname()});
    }
    log::Info("watching the cluster at {}", url);
    return live;
  }
  ~LiveCluster() {
    if (sync_) sync_->Stop();
  }

  bool healthy() const { return sync_->healthy(); }
  bool kueue_healthy() const { return sync_->kueue_healthy(); }
  extender::PodBinder* binder() { return binder_.get(); }
  extender::PodEvictor* evictor() { return evictor_.get(); }
  extender::HoldPublisher* hold_publisher() { return hold_publisher_.get(); }
  extender::PodNominator* nominator() { return nominator_.get(); }
  extender::ClaimWriter* claim_writer() { return claim_writer_.get(); }
  extender::EventSink* events() { return events_.get(); }
  extender::KueueWriter* kueue_writer() { return kueue_writer_.get(); }

 private:
  LiveCluster() = default;
  std::unique_ptr<kubeapi::ApiClient> client_;
  std::unique_ptr<kubeapi::ClusterSync> sync_;
  std::unique_ptr<kubeapi::ApiBinder> binder_;
  std::unique_ptr<kubeapi::ApiEvictor> evictor_;
  std::unique_ptr<kubeapi::ApiHoldPublisher> hold_publisher_;
  std::unique_ptr<kubeapi::ApiPodNominator> nominator_;
  std::unique_ptr<kubeapi::ApiClaimWriter> claim_writer_;
  std::unique_ptr<kubeapi::EventRecorder> events_;
  std::unique_ptr<kubeapi::ApiKueueWriter> kueue_writer_;  // where Kueue is served
};

// Reads the flags and the configuration they name into *c. Returns the exit code when the
// command should stop here (--help: 0; a bad flag or file: 2), nullopt to go on.
std::optional<int> ReadConfig(int argc, char** argv, config::Config* c) {
  for (int i = 0; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--help" || std::string_view(argv[i]) == "-h") {
      std::fputs(Usage().c_str(), stdout);
      return 0;
    }
  }
  StatusOr<Flags> flags = ParseFlags(argc, argv);
  if (!flags.ok()) {
    log::Error("{}", flags.status().message());
    std::fputs(Usage().c_str(), stderr);
    return 2;
  }
  StatusOr<config::Config> loaded = flags->config.empty() ? config::ParseConfig("") : config::LoadConfigFile(flags->config);
  if (!loaded.ok()) {
    log::Error("{}", loaded.status().message());
    return 2;
  }
  *c = std::move(loaded).value();
  if (Status s = ApplyFlags(*flags, c); !s.ok()) {
    log::Error("{}", s.message());
    return 2;
  }
  return std::nullopt;
}

// Blocks the stop and reload signals: this thread takes them synchronously, and every thread
// started afterwards (watches, events, HTTP workers) inherits the mask, so none dies of SIGTERM.
sigset_t BlockSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// Gives the memory a load freed back to the system: reading a cluster of 20,000 nodes peaks at
// about twice what the inventory keeps, and glibc would otherwise hold the difference.
void ReturnFreedMemory() { malloc_trim(0); }

// Fills the inventory from the cluster's source: a live cluster (started; not ready until its
// first full sync, and its binder, events and claim writer go into *with) or the snapshots.
Status StartSource(const config::Config& c, inventory::Inventory* inventory, std::unique_ptr<LiveCluster>* live,
                   extender::ServiceCollaborators* with, std::atomic<bool>* ready) {
  if (c.cluster.live()) {
    StatusOr<std::unique_ptr<LiveCluster>> started = LiveCluster::Start(c, inventory);
    if (!started.ok()) return started.status();
    *live = std::move(started).value();
    with->binder = (*live)->binder();
    with->evictor = (*live)->evictor();
    with->hold_publisher = (*live)->hold_publisher();
    with->nominator = (*live)->nominator();
    with->events = (*live)->events();
    with->claim_writer = (*live)->claim_writer();
    with->kueue_writer = (*live)->kueue_writer();
    ready->store(false);
    return OkStatus();
  }
  StatusOr<ClusterObjects> objects = LoadSource(c);
  if (!objects.ok()) return objects.status();
  log::Info("loaded {}: {} nodes, {} pods", c.snapshots.empty() ? "embedded demo cluster" : "snapshots", objects->nodes.size(),
            objects->pods.size());
  LogUnreadable(*objects);
  inventory->ReplaceCluster(std::move(objects).value());
  ReturnFreedMemory();
  return OkStatus();
}

// The admission webhook's own HTTPS listener (config webhook.listen).
struct Webhook {
  std::unique_ptr<http::Router> router;
  std::unique_ptr<http::Server> server;
};

// Starts the webhook if configured. Returns the exit code on failure (2: bad listen address,
// 1: cannot serve), nullopt otherwise.
std::optional<int> StartWebhook(const config::Config& c, extender::Service* service, inventory::Inventory* inventory,
                                std::atomic<bool>* ready, extender::Telemetry* telemetry, Webhook* out) {
  if (c.webhook.listen.empty()) return std::nullopt;
  http::ServerOptions options = c.server;
  options.threads = 1;
  options.tls_cert_file = c.webhook.cert_file;
  options.tls_key_file = c.webhook.key_file;
  options.client_ca_file.clear();
  if (Status s = config::ParseListen(c.webhook.listen, &options); !s.ok()) {
    log::Error("webhook: {}", s.message());
    return 2;
  }
  out->router = std::make_unique<http::Router>(service, inventory, ready, "", telemetry, http::RouterScope::kAdmissionOnly);
  out->server = std::make_unique<http::Server>(options, out->router.get());
  if (Status s = out->server->Start(); !s.ok()) {
    log::Error("webhook: {}", s.message());
    return 1;
  }
  log::Info("admission webhook on {}:{} (HTTPS: /validate/node, probes, metrics)", options.host, out->server->port());
  return std::nullopt;
}

void LogServing(const config::Config& c, uint16_t port) {
  log::Info("gpusched serving {} on {}:{} (verbs at {}/filter, /prioritize, /bind, /preempt; node policy {}, gpu policy {}, "
            "score mapping {}, filter top-K {})",
            c.server.tls_cert_file.empty() ? "HTTP" : c.server.client_ca_file.empty() ? "HTTPS" : "HTTPS with mTLS", c.server.host,
            port, c.path_prefix, c.service.node_policy, placement::PolicyName(c.service.placement.gpu_policy),
            placement::ScoreMappingName(c.service.score_mapping), c.service.filter_top_k);
}

// Readiness follows the watches: ready while they are healthy.
void FollowLiveHealth(const LiveCluster& live, const inventory::Inventory& inventory, std::atomic<bool>* ready) {
  bool healthy = live.healthy();
  if (healthy && !ready->load()) {
    inventory::InventoryStats stats = inventory.Stats();
    log::Info("cluster synced: {} nodes, {} allocations; ready", inventory.Snapshot()->nodes().size(), stats.ledger_size);
    ReturnFreedMemory();
  } else if (!healthy && ready->load()) {
    log::Warning("a watch has been failing for over a minute: not ready, filter and bind refused until it recovers");
  }
  ready->store(healthy);
}

// Re-reads the snapshot files on SIGHUP or when their modification times change.
class SnapshotReloader {
 public:
  explicit SnapshotReloader(const config::Config& c) : c_(c), mtimes_(ModTimes(c.snapshots)) {}

  void OnTick(bool hangup, inventory::Inventory* inventory, std::atomic<bool>* ready) {
    if (c_.snapshots.empty() || !(hangup || Changed())) return;
    StatusOr<ClusterObjects> fresh = kubejson::LoadSnapshotFiles(c_.snapshots);
    if (!fresh.ok()) {
      // The view on hand may be stale: binding on it could over-book. Not ready until a reload works.
      log::Error("snapshot reload failed, keeping the previous view; not ready until a reload succeeds: {}", fresh.status().message());
      ready->store(false);
      return;
    }
    log::Info("snapshots reloaded: {} nodes, {} pods", fresh->nodes.size(), fresh->pods.size());
    LogUnreadable(*fresh);
    inventory->ReplaceCluster(std::move(fresh).value());
    ReturnFreedMemory();
    ready->store(true);
  }

 private:
  // True if the files changed since the last check (checked every snapshot_reload_seconds).
  bool Changed() {
    auto now = std::chrono::steady_clock::now();
    if (c_.snapshot_reload_seconds <= 0 || now - last_check_ < std::chrono::seconds(c_.snapshot_reload_seconds)) return false;
    last_check_ = now;
    std::vector<int64_t> current = ModTimes(c_.snapshots);
    bool changed = current != mtimes_;
    mtimes_ = std::move(current);
    return changed;
  }

  const config::Config& c_;
  std::vector<int64_t> mtimes_;
  std::chrono::steady_clock::time_point last_check_ = std::chrono::steady_clock::now();
};

// Waits for SIGINT/SIGTERM, meanwhile following the live cluster's health or the snapshots.
void ServeUntilStopped(const config::Config& c, const sigset_t& signals, const LiveCluster* live, inventory::Inventory* inventory,
                       const extender::Service* service, std::atomic<bool>* ready) {
  SnapshotReloader reloader(c);
  constexpr auto kSweepEvery = std::chrono::seconds(5);
  auto last_sweep = std::chrono::steady_clock::now();
  auto last_gang_sweep = std::chrono::steady_clock::time_point{};  // the first tick sweeps
  constexpr auto kKueueSweepEvery = std::chrono::seconds(2);
  auto last_kueue_sweep = std::chrono::steady_clock::time_point{};
  while (true) {
    timespec timeout = live != nullptr && !ready->load() ? timespec{0, 50'000'000} : timespec{1, 0};
    int sig = sigtimedwait(&signals, nullptr, &timeout);
    if (sig == SIGINT || sig == SIGTERM) {
      log::Info("signal {}: stopping; requests in flight may finish", sig);
      return;
    }
    if (live != nullptr) {
      FollowLiveHealth(*live, *inventory, ready);
      if (c.dra_owner && live->healthy() && std::chrono::steady_clock::now() - last_sweep >= kSweepEvery) {
        last_sweep = std::chrono::steady_clock::now();
        if (size_t released = service->SweepClaims(); released > 0) {
          log::Info("released {} ResourceClaim(s) allocated for pods that did not bind within {} s", released,
                    c.service.dra_release_after.count());
        }
      }
    } else {
      reloader.OnTick(sig == SIGHUP, inventory, ready);
    }
    // Gangs: plans for groups whose members arrived, dropped for those deleted (gang_holds.h).
    if ((live == nullptr || live->healthy()) && std::chrono::steady_clock::now() - last_gang_sweep >= kSweepEvery) {
      last_gang_sweep = std::chrono::steady_clock::now();
      if (size_t planned = service->SweepGangs(); planned > 0) log::Info("planned and held {} gang(s)", planned);
    }
    // Kueue's admission check: Workloads waiting for it decided, on the leader (kueue_admission.h).
    if (live != nullptr && live->kueue_healthy() && std::chrono::steady_clock::now() - last_kueue_sweep >= kKueueSweepEvery) {
      last_kueue_sweep = std::chrono::steady_clock::now();
      service->SweepKueue();
    }
  }
}

}  // namespace

int RunServe(int argc, char** argv) {
  config::Config c;
  if (std::optional<int> exit_code = ReadConfig(argc, argv, &c)) return *exit_code;
  log::SetFormat(c.log_format);
  log::SetLevel(c.log_level);
  sigset_t signals = BlockSignals();

  inventory::Inventory inventory(c.inventory);
  std::atomic<bool> ready{true};
  std::unique_ptr<LiveCluster> live;
  extender::ServiceCollaborators with;
  if (Status s = StartSource(c, &inventory, &live, &with, &ready); !s.ok()) {
    log::Error("{}", s.message());
    return 1;
  }
  extender::InventoryClaimWriter memory_claims(&inventory);
  if (c.dra_owner && !live) with.claim_writer = &memory_claims;

  extender::Telemetry telemetry(&inventory);
  with.telemetry = &telemetry;
  extender::Service service(&inventory, c.service, std::move(with));
  http::Router router(&service, &inventory, &ready, c.path_prefix, &telemetry);
  http::Server server(c.server, &router);
  if (Status s = server.Start(); !s.ok()) {
    log::Error("{}", s.message());
    return 1;
  }
  Webhook webhook;
  if (std::optional<int> exit_code = StartWebhook(c, &service, &inventory, &ready, &telemetry, &webhook)) return *exit_code;
  LogServing(c, server.port());

  ServeUntilStopped(c, signals, live.get(), &inventory, &service, &ready);
  if (webhook.server) webhook.server->Shutdown();
  size_t unfinished = server.Shutdown();
  if (unfinished > 0) log::Warning("stopped with {} requests unfinished after the grace period", unfinished);
  live.reset();
  log::Info("stopped");
  return 0;
}

}  // namespace gpusched::cli
