#include "cli/agent.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "cli/agent_metrics.h"
#include "cli/subcommand.h"
#include "gpusched/agent/drift.h"
#include "gpusched/agent/gpu_devices.h"
#include "gpusched/agent/nvidia_smi.h"
#include "gpusched/agent/nvml.h"
#include "gpusched/agent/topology.h"
#include "gpusched/config/config.h"
#include "gpusched/http/server.h"
#include "gpusched/kubeapi/api_client.h"
#include "gpusched/kubeapi/api_config.h"
#include "gpusched/kubeapi/node_agent_api.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::cli {
namespace {

constexpr std::string_view kUsage = R"(usage: gpusched agent [--node NAME] [flags]

Reads this node's GPUs through NVML (libnvidia-ml, loaded at run time when present) or else from
`nvidia-smi -q -x`, and publishes the annotation
gpusched.io/gpu-devices that describes them (index, UUID, model, memory MiB, NUMA node, health:
unhealthy on uncorrectable ECC errors, a pending or failed row remap, pages pending retirement;
MIG mode and instances from `nvidia-smi mig -lgi`/`-lgip`; NVLink and PCIe-switch peers from
`nvidia-smi topo -m`) on its Node, every --interval seconds, writing only when the value changed.
Each round it also checks the GPUs against what gpusched booked for the node's pods: a GPU used
beyond its mGPU bookings, or used by no booked pod, is marked in the annotation ("drift") and
posted as a Warning Event GPUAccountingDrift on the Node (README: Node agent).

  --node NAME         the Node to publish on (default: $NODE_NAME, set by the DaemonSet)
  --interval S        seconds between reads (default 5: an unhealthy GPU is published within 10 s)
  --once              read and publish once, then exit
  --print             print the annotation's value instead of publishing it (implies --once)
  --nvidia-smi-xml F  read a saved `nvidia-smi -q -x` report instead of NVML or nvidia-smi
  --nvidia-smi-topo F saved `nvidia-smi topo -m` (NVLink and PCIe-switch peers)
  --nvidia-smi-mig F  saved `nvidia-smi mig -lgi` (the MIG instances of MIG-enabled GPUs)
  --nvidia-smi-mig-profiles F
                      saved `nvidia-smi mig -lgip` (the instances' memory)
                      Without a saved -q -x report these three are read from nvidia-smi.
  --nvml-library F    the NVML library to load (default libnvidia-ml.so.1)
  --sysfs DIR         where sysfs is mounted, for the GPUs' NUMA nodes (default /sys)
  --server URL        the API server (default: in-cluster, from the pod's ServiceAccount)
  --kubeconfig FILE   or a kubeconfig's current context
  --metrics-listen A  serve GET /metrics and /healthz on HOST:PORT (the loop only): GPUs, health
                      and drift per GPU, writes and failed rounds
)";

struct Args {
  bool once = false;
  bool print = false;
  std::string xml_file;
  std::string sysfs = "/sys";
  std::string node;
  std::string server;
  std::string kubeconfig;
  std::string metrics_listen;
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string topo_file;          // saved `nvidia-smi topo -m`
  std::string mig_file;           // saved `nvidia-smi mig -lgi`
  std::string mig_profiles_file;  // saved `nvidia-smi mig -lgip`
  int interval_s = 5;
};

std::atomic<bool> stop_agent{false};

StatusOr<Args> ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 0; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (flag == "--once") {
      a.once = true;
    } else if (flag == "--print") {
      a.print = true;
    } else if (std::string* into = flag == "--nvidia-smi-xml" ? &a.xml_file
                                   : flag == "--sysfs"          ? &a.sysfs
                                   : flag == "--node"           ? &a.node
                                   : flag == "--server"         ? &a.server
                                   : flag == "--kubeconfig"     ? &a.kubeconfig
                                   : flag == "--metrics-listen" ? &a.metrics_listen
                                   : flag == "--nvml-library"   ? &a.nvml_library
                                   : flag == "--nvidia-smi-topo" ? &a.topo_file
                                   : flag == "--nvidia-smi-mig" ? &a.mig_file
                                   : flag == "--nvidia-smi-mig-profiles" ? &a.mig_profiles_file
                                                                : nullptr) {
      if (i + 1 >= argc) return InvalidArgumentError(fmt::format("{} needs a value", flag));
      *into = argv[++i];
    } else if (flag == "--interval") {
      if (i + 1 >= argc) return InvalidArgumentError("--interval needs a value");
      a.interval_s = std::atoi(argv[++i]);
      if (a.interval_s < 1 || a.interval_s > 3600) return InvalidArgumentError(fmt::format("--interval {}: want 1-3600", argv[i]));
    } else {
      return InvalidArgumentError(fmt::format("unknown flag {}", flag));
    }
  }
  if (a.node.empty() && std::getenv("NODE_NAME") != nullptr) a.node = std::getenv("NODE_NAME");
  if (!a.print && a.node.empty()) return InvalidArgumentError("give --node (or set NODE_NAME), or --print");
  if (!a.server.empty() && !a.kubeconfig.empty()) return InvalidArgumentError("--server and --kubeconfig exclude each other");
  return a;
}

StatusOr<std::string> ReadFile(std::string_view flag, const std::string& file) {
  std::ifstream in(file);
  if (!in) return NotFoundError(fmt::format("{} {}: cannot be read", flag, file));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// What `nvidia-smi <args>` prints (stdout and stderr). No shell: the image is distroless;
// nvidia-smi comes from the PATH the NVIDIA runtime sets up. Errors name the command.
StatusOr<std::string> NvidiaSmi(std::vector<const char*> args) {
  std::string command = fmt::format("nvidia-smi {}", fmt::join(args, " "));
  args.insert(args.begin(), "nvidia-smi");
  args.push_back(nullptr);
  int out[2];
  if (pipe(out) != 0) return UnavailableError(fmt::format("cannot run {}: no pipe", command));
  pid_t pid = fork();
  if (pid < 0) return UnavailableError(fmt::format("cannot run {}: fork failed", command));
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(out[1], STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    execvp("nvidia-smi", const_cast<char* const*>(args.data()));
    _exit(127);
  }
  close(out[1]);
  std::stringstream text;
  std::array<char, 65536> buf;
  for (ssize_t n; (n = read(out[0], buf.data(), buf.size())) > 0;) text.write(buf.data(), n);
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 127) return UnavailableError("nvidia-smi is not on this machine's PATH (give --nvidia-smi-xml to read a saved report)");
  if (code != 0) return UnavailableError(fmt::format("{} exited {}: {}", command, code, text.str().substr(0, 300)));
  return text.str();
}

// A report: the saved file given by `flag` when given; else, with no saved -q -x report either,
// nvidia-smi's output; else "" (a saved report and no saved companion: that part stays unknown).
StatusOr<std::string> Report(const Args& a, std::string_view flag, const std::string& file, std::vector<const char*> args) {
  if (!file.empty()) return ReadFile(flag, file);
  if (!a.xml_file.empty()) return std::string();
  return NvidiaSmi(std::move(args));
}

// Adds the MIG instances and the peers to `gpus`; what goes wrong is left unknown and said in
// *warnings.
void AddMigAndPeers(const Args& a, std::vector<agent::PhysicalGpu>* gpus, std::vector<std::string>* warnings) {
  bool any_mig = std::any_of(gpus->begin(), gpus->end(), [](const agent::PhysicalGpu& g) { return g.mig_enabled; });
  if (any_mig) {
    StatusOr<std::string> lgi = Report(a, "--nvidia-smi-mig", a.mig_file, {"mig", "-lgi"});
    // No instances: nvidia-smi says so and exits non-zero.
    if (!lgi.ok() && lgi.status().message().find("No GPU instances") != std::string::npos) lgi = std::string();
    StatusOr<std::string> lgip = Report(a, "--nvidia-smi-mig-profiles", a.mig_profiles_file, {"mig", "-lgip"});
    Status s = !lgi.ok() ? lgi.status() : !lgip.ok() ? lgip.status() : agent::AttachMigInstances(*lgi, *lgip, gpus);
    if (!s.ok()) warnings->push_back("MIG instances unknown: " + s.message());
  }
  if (gpus->size() < 2) return;
  StatusOr<std::string> topo = Report(a, "--nvidia-smi-topo", a.topo_file, {"topo", "-m"});
  if (topo.ok() && topo->empty()) return;
  StatusOr<std::map<int, agent::GpuLinks>> links = topo.ok() ? agent::ParseTopologyMatrix(*topo) : topo.status();
  if (links.ok()) {
    agent::AttachPeers(*links, gpus);
  } else {
    warnings->push_back("GPU peers unknown: " + links.status().message());
  }
}

// The GPUs: from a saved report; else through NVML when its library loads; else nvidia-smi. What
// could not be read beyond the GPUs themselves is said in *warnings.
StatusOr<std::vector<agent::PhysicalGpu>> ReadGpus(const Args& a, std::vector<std::string>* warnings) {
  StatusOr<std::vector<agent::PhysicalGpu>> gpus = NotFoundError("");
  if (a.xml_file.empty()) gpus = agent::ReadNvml(a.nvml_library);
  if (gpus.status().code() == StatusCode::kNotFound) {
    GPUSCHED_ASSIGN_OR_RETURN(std::string xml, a.xml_file.empty() ? NvidiaSmi({"-q", "-x"}) : ReadFile("--nvidia-smi-xml", a.xml_file));
    gpus = agent::ParseNvidiaSmiXml(xml);
  }
  if (!gpus.ok()) return gpus;
  agent::ResolveNumaNodes(a.sysfs, &*gpus);
  AddMigAndPeers(a, &*gpus, warnings);
  return gpus;
}

void PrintWarnings(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) std::fprintf(stderr, "gpusched agent: %s\n", w.c_str());
}

StatusOr<std::string> Describe(const Args& a) {
  std::vector<std::string> warnings;
  GPUSCHED_ASSIGN_OR_RETURN(std::vector<agent::PhysicalGpu> gpus, ReadGpus(a, &warnings));
  PrintWarnings(warnings);
  return kubejson::EncodeGpuDevices(agent::ToGpuDevices(gpus)) + "\n";
}

StatusOr<std::unique_ptr<kubeapi::ApiClient>> Client(const Args& a) {
  kubeapi::ApiConfig config;
  if (!a.server.empty()) {
    GPUSCHED_RETURN_IF_ERROR(kubeapi::ParseServerUrl(a.server, &config));
  } else {
    GPUSCHED_ASSIGN_OR_RETURN(config, a.kubeconfig.empty() ? kubeapi::InClusterConfig() : kubeapi::LoadKubeconfig(a.kubeconfig));
  }
  return kubeapi::ApiClient::Create(config);
}

// One round's outcome: in words ("published" or "unchanged", then a "drift:" line per drifting
// GPU), and what the metrics read.
struct RoundResult {
  std::string text;
  std::vector<agent::PhysicalGpu> gpus;
  std::vector<agent::GpuDrift> drift;
  std::vector<std::string> warnings;  // what could not be read (ReadGpus)
  bool published = false;
};

// One round: read the GPUs, publish them if they changed, and check them against what the node's
// pods book; a drift not in *reported (the last round's) is posted as a Node Event.
StatusOr<RoundResult> PublishOnce(const Args& a, kubeapi::ApiClient* client, std::set<std::string>* reported) {
  RoundResult r;
  GPUSCHED_ASSIGN_OR_RETURN(r.gpus, ReadGpus(a, &r.warnings));
  GPUSCHED_ASSIGN_OR_RETURN(std::vector<Pod> pods, kubeapi::PodsOnNode(client, a.node));
  r.drift = agent::FindDrift(r.gpus, agent::BookedBy(pods));
  std::string value = kubejson::EncodeGpuDevices(agent::ToGpuDevices(r.gpus, r.drift));
  GPUSCHED_ASSIGN_OR_RETURN(r.published, kubeapi::PublishGpuDevices(client, a.node, value));
  r.text = fmt::format("node {}: {} {}\n", a.node, r.published ? "published" : "unchanged", value);
  std::set<std::string> now;
  for (const agent::GpuDrift& d : r.drift) {
    now.insert(d.reason);
    r.text += fmt::format("drift: {}\n", d.reason);
    if (reported->contains(d.reason)) continue;
    Status posted = kubeapi::PostNodeEvent(client, a.node, "GPUAccountingDrift", d.reason);
    if (!posted.ok()) now.erase(d.reason);  // tried again next round
  }
  *reported = std::move(now);
  return r;
}

// Starts the /metrics listener if asked for; prints where it listens. Null when not asked for.
StatusOr<std::unique_ptr<http::Server>> MetricsServer(const Args& a, const AgentMetrics* metrics) {
  if (a.metrics_listen.empty()) return std::unique_ptr<http::Server>();
  http::ServerOptions options{.threads = 1, .blocking_threads = 1};
  GPUSCHED_RETURN_IF_ERROR(config::ParseListen(a.metrics_listen, &options));
  auto server = std::make_unique<http::Server>(options, metrics);
  GPUSCHED_RETURN_IF_ERROR(server->Start());
  std::printf("metrics on %s:%u\n", options.host.c_str(), static_cast<unsigned>(server->port()));
  std::fflush(stdout);
  return server;
}

// Publishes every interval until SIGTERM or SIGINT; a failed round is logged and retried.
int PublishLoop(const Args& a, kubeapi::ApiClient* client) {
  std::signal(SIGTERM, [](int) { stop_agent = true; });
  std::signal(SIGINT, [](int) { stop_agent = true; });
  AgentMetrics metrics(a.node);
  StatusOr<std::unique_ptr<http::Server>> server = MetricsServer(a, &metrics);
  if (!server.ok()) {
    std::fprintf(stderr, "gpusched agent: --metrics-listen %s: %s\n", a.metrics_listen.c_str(), server.status().message().c_str());
    return 2;
  }
  std::set<std::string> reported;
  std::vector<std::string> warned;  // the last round's warnings: said again only when they change
  while (!stop_agent) {
    StatusOr<RoundResult> round = PublishOnce(a, client, &reported);
    if (round.ok()) {
      if (round->warnings != warned) PrintWarnings(round->warnings);
      warned = round->warnings;
      metrics.Round(round->gpus, round->drift, round->published);
      if (round->published || !round->drift.empty()) std::fputs(round->text.c_str(), stdout);
    } else {
      metrics.Failed();
      std::fprintf(stderr, "gpusched agent: %s\n", round.status().message().c_str());
    }
    std::fflush(stdout);
    for (int tick = 0; tick < a.interval_s * 10 && !stop_agent; ++tick) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (*server) (*server)->Shutdown();
  return 0;
}

}  // namespace

int RunAgent(int argc, char** argv) {
  StatusOr<Args> parsed = ParseArgs(argc, argv);
  if (parsed.ok() && !parsed->print && !parsed->once) {
    StatusOr<std::unique_ptr<kubeapi::ApiClient>> client = Client(*parsed);
    if (!client.ok()) {
      std::fprintf(stderr, "gpusched agent: %s\n", client.status().message().c_str());
      return 1;
    }
    return PublishLoop(*parsed, client->get());
  }
  return RunAnswering<Args>("agent", kUsage, argc, argv, ParseArgs, [](const Args& a) -> StatusOr<std::string> {
    if (a.print) return Describe(a);
    GPUSCHED_ASSIGN_OR_RETURN(std::unique_ptr<kubeapi::ApiClient> client, Client(a));
    std::set<std::string> reported;
    GPUSCHED_ASSIGN_OR_RETURN(RoundResult r, PublishOnce(a, client.get(), &reported));
    PrintWarnings(r.warnings);
    return r.text;
  });
}

}  // namespace gpusched::cli
