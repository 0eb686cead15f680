// File: agent.cc
//
// `gpusched agent`'s command: its flags, where the GPUs are read from (a saved report, NVML, or
// nvidia-smi, plus MIG instances and peers, and the kubelet's PodResources), one round (drift check, publish when changed, Events
// for new drift), and the loop until SIGTERM with an optional /metrics listener.
#include "cli/agent.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "cli/agent_metrics.h"
#include "cli/nvidia_smi_command.h"
#include "cli/subcommand.h"
#include "gpusched/agent/drift.h"
#include "gpusched/agent/gpu_devices.h"
#include "gpusched/agent/grpc_call.h"
#include "gpusched/agent/nvidia_smi.h"
#include "gpusched/agent/nvml.h"
#include "gpusched/agent/pod_resources.h"
#include "gpusched/agent/topology.h"
#include "gpusched/config/config.h"
#include "gpusched/http/server.h"
#include "gpusched/kubeapi/api_client.h"
#include "gpusched/kubeapi/api_config.h"
#include "gpusched/kubeapi/node_agent_api.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::cli {
namespace {

constexpr std::string_view kAgentUsage = R"(usage: gpusched agent [--node NAME] [flags]

Reads this node's GPUs through NVML (libnvidia-ml, loaded at run time when present) or else from
`nvidia-smi -q -x`, and publishes the annotation
gpusched.io/gpu-devices that describes them (index, UUID, model, memory MiB, NUMA node, health:
unhealthy on uncorrectable ECC errors, a pending or failed row remap, pages pending retirement;
MIG mode and instances from `nvidia-smi mig -lgi`/`-lgip`; NVLink and PCIe-switch peers from
`nvidia-smi topo -m`) on its Node, every --interval seconds, writing only when the value changed.
Each round it also checks the GPUs against what gpusched booked for the node's pods: a GPU used
beyond its mGPU bookings, or used by no booked pod, is marked in the annotation ("drift") and
posted as a Warning Event GPUAccountingDrift on the Node (docs/agent.md); a GPU that a pod's
ResourceClaim holds is that pod's.

  --node NAME         the Node to publish on (default: $NODE_NAME, set by the DaemonSet)
  --interval S        seconds between reads (default 5: an unhealthy GPU is published within 10 s)
  --once              read and publish once, then exit
  --print             print the annotation's value instead of publishing it (implies --once)
  --nvidia-smi-xml F  read a saved `nvidia-smi -q -x` report instead of NVML or nvidia-smi
  --nvidia-smi-topo F saved `nvidia-smi topo -m` (NVLink and PCIe-switch peers)
  --nvidia-smi-mig F  saved `nvidia-smi mig -lgi` (the MIG instances of MIG-enabled GPUs)
  --nvidia-smi-mig-profiles F
                      saved `nvidia-smi mig -lgip` (the instances' memory)
  --nvidia-smi-mig-placements F
                      saved `nvidia-smi mig -lgipp` (the GPU's memory slices)
                      Without a saved -q -x report these four are read from nvidia-smi
                      (the topology once, the MIG tables every round on MIG-enabled GPUs).
  --nvidia-smi-timeout S
                      seconds nvidia-smi may take before it is killed (default 30)
  --nvml-library F    the NVML library to load (default libnvidia-ml.so.1)
  --sysfs DIR         where sysfs is mounted, for the GPUs' NUMA nodes (default /sys)
  --server URL        the API server (default: in-cluster, from the pod's ServiceAccount)
  --kubeconfig FILE   or a kubeconfig's current context
  --metrics-listen A  serve GET /metrics and /healthz on HOST:PORT (the loop only): GPUs, health
                      and drift per GPU, writes and failed rounds
  --pod-resources-socket F
                      the kubelet's PodResources socket, read each round for the pods each GPU
                      was given ("pods" in the annotation: which GPUs are busy on a whole-GPU
                      node); default /var/lib/kubelet/pod-resources/kubelet.sock, or none with
                      --nvidia-smi-xml; "none" turns it off
)";

struct AgentArgs {
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
  std::string mig_placements_file;  // saved `nvidia-smi mig -lgipp`
  std::optional<std::string> pod_resources_socket;  // "" or "none": not read
  int interval_s = 5;
  int nvidia_smi_timeout_s = 30;
};

constexpr std::string_view kKubeletPodResources = "/var/lib/kubelet/pod-resources/kubelet.sock";

std::atomic<bool> stop_agent{false};

StatusOr<AgentArgs> ParseAgentArgs(int argc, char** argv) {
  AgentArgs a;
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
                                   : flag == "--nvidia-smi-mig-placements" ? &a.mig_placements_file
                                                                : nullptr) {
      if (i + 1 >= argc) return InvalidArgumentError(fmt::format("{} needs a value", flag));
      *into = argv[++i];
    } else if (flag == "--pod-resources-socket") {
      if (i + 1 >= argc) return InvalidArgumentError("--pod-resources-socket needs a value");
      a.pod_resources_socket = argv[++i];
    } else if (flag == "--nvidia-smi-timeout") {
      if (i + 1 >= argc) return InvalidArgumentError("--nvidia-smi-timeout needs a value");
      a.nvidia_smi_timeout_s = std::atoi(argv[++i]);
      if (a.nvidia_smi_timeout_s < 1 || a.nvidia_smi_timeout_s > 600) {
        return InvalidArgumentError(fmt::format("--nvidia-smi-timeout {}: want 1-600 seconds", argv[i]));
      }
    } else if (flag == "--interval") {
      if (i + 1 >= argc) return InvalidArgumentError("--interval needs a value");
      a.interval_s = std::atoi(argv[++i]);
      if (a.interval_s < 1 || a.interval_s > 3600) return InvalidArgumentError(fmt::format("--interval {}: want 1-3600", argv[i]));
    } else {
      return InvalidArgumentError(fmt::format("unknown flag {}", flag));
    }
  }
  if (!a.pod_resources_socket) a.pod_resources_socket = a.xml_file.empty() ? std::string(kKubeletPodResources) : "";
  if (*a.pod_resources_socket == "none") a.pod_resources_socket = "";
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

// A report: the saved file given by `flag` when given; else, with no saved -q -x report either,
// nvidia-smi's output; else "" (a saved report and no saved companion: that part stays unknown).
StatusOr<std::string> Report(const AgentArgs& a, std::string_view flag, const std::string& file, std::vector<const char*> args) {
  if (!file.empty()) return ReadFile(flag, file);
  if (!a.xml_file.empty()) return std::string();
  return RunNvidiaSmi(std::move(args), std::chrono::seconds(a.nvidia_smi_timeout_s));
}

// What the agent keeps from one round to the next.
struct AgentMemory {
  std::set<std::string> reported;                        // drift findings already posted as Events
  std::vector<agent::GpuDrift> drift;                    // the last findings
  std::optional<std::map<int, agent::GpuLinks>> links;   // the topology, read once: it does not change
  std::optional<std::vector<agent::ContainerDevices>> pods;  // the last PodResources reading
  int pods_misses = 0;                                   // failed readings since it
};

// Rounds a failed PodResources reading is covered by the last good one: a kubelet restart must not
// turn every GPU unknown, then known again (two Node writes per node).
constexpr int kPodReadingsKept = 3;

// Where MIG instances come from, and what stops a container from listing them.
constexpr std::string_view kMigHint =
    " (in a container, listing MIG instances needs NVIDIA_MIG_MONITOR_DEVICES=all and CAP_SYS_ADMIN: "
    "install the agent with kubectl apply -k deploy/agent-mig)";

// Adds the MIG instances (read every round: an operator may repartition) to `gpus`; what goes
// wrong is left unknown and said in *warnings.
void AddMig(const AgentArgs& a, std::vector<agent::PhysicalGpu>* gpus, std::vector<std::string>* warnings) {
  if (std::none_of(gpus->begin(), gpus->end(), [](const agent::PhysicalGpu& g) { return g.mig_enabled; })) return;
  StatusOr<std::string> lgi = Report(a, "--nvidia-smi-mig", a.mig_file, {"mig", "-lgi"});
  // No instances: nvidia-smi says so and exits non-zero.
  if (!lgi.ok() && lgi.status().message().find("No GPU instances") != std::string::npos) lgi = std::string();
  StatusOr<std::string> lgip = Report(a, "--nvidia-smi-mig-profiles", a.mig_profiles_file, {"mig", "-lgip"});
  StatusOr<std::string> lgipp = Report(a, "--nvidia-smi-mig-placements", a.mig_placements_file, {"mig", "-lgipp"});
  Status s = !lgi.ok()     ? lgi.status()
             : !lgip.ok()  ? lgip.status()
             : !lgipp.ok() ? lgipp.status()
                           : agent::AttachMigInstances(*lgi, *lgip, *lgipp, gpus);
  if (!s.ok()) warnings->push_back(fmt::format("MIG instances unknown: {}{}", s.message(), a.mig_file.empty() ? kMigHint : ""));
}

// Adds the NVLink and PCIe-switch peers to `gpus`, from memory->links or else `nvidia-smi topo -m`
// (kept once read); what goes wrong is left unknown and said in *warnings.
void AddPeers(const AgentArgs& a, std::vector<agent::PhysicalGpu>* gpus, AgentMemory* memory, std::vector<std::string>* warnings) {
  if (gpus->size() < 2) return;
  if (!memory->links) {
    StatusOr<std::string> topo = Report(a, "--nvidia-smi-topo", a.topo_file, {"topo", "-m"});
    if (topo.ok() && topo->empty()) return;
    StatusOr<std::map<int, agent::GpuLinks>> links = topo.ok() ? agent::ParseTopologyMatrix(*topo) : topo.status();
    if (!links.ok()) {
      warnings->push_back("GPU peers unknown: " + links.status().message());
      return;
    }
    memory->links = std::move(*links);
  }
  agent::AttachPeers(*memory->links, gpus);
}

// The GPUs: from a saved report; else through NVML when its library loads; else nvidia-smi. What
// could not be read beyond the GPUs themselves is said in *warnings.
StatusOr<std::vector<agent::PhysicalGpu>> ReadGpus(const AgentArgs& a, AgentMemory* memory, std::vector<std::string>* warnings) {
  StatusOr<std::vector<agent::PhysicalGpu>> gpus = NotFoundError("");
  if (a.xml_file.empty()) gpus = agent::ReadNvml(a.nvml_library);
  if (gpus.status().code() == StatusCode::kNotFound) {
    GPUSCHED_ASSIGN_OR_RETURN(std::string xml, a.xml_file.empty() ? RunNvidiaSmi({"-q", "-x"}, std::chrono::seconds(a.nvidia_smi_timeout_s)) : ReadFile("--nvidia-smi-xml", a.xml_file));
    gpus = agent::ParseNvidiaSmiXml(xml);
  }
  if (!gpus.ok()) return gpus;
  agent::ResolveNumaNodes(a.sysfs, &*gpus);
  AddMig(a, &*gpus, warnings);
  AddPeers(a, &*gpus, memory, warnings);
  return gpus;
}

// What the annotation publishes: the GPUs, their drift, and the pods the kubelet gave each GPU
// (PodResources). When the socket cannot be read, the last reading stands for kPodReadingsKept
// rounds; after that the pods are unread (unknown, never "free"). *warnings says why.
std::vector<GpuDevice> Published(const AgentArgs& a, const std::vector<agent::PhysicalGpu>& gpus,
                                 const std::vector<agent::GpuDrift>& drift, AgentMemory* memory,
                                 std::vector<std::string>* warnings) {
  std::vector<GpuDevice> devices = agent::ToGpuDevices(gpus, drift);
  if (a.pod_resources_socket->empty()) return devices;
  StatusOr<std::string> reply = agent::GrpcUnaryCall(*a.pod_resources_socket, agent::kPodResourcesList, "");
  StatusOr<std::vector<agent::ContainerDevices>> list = reply.ok() ? agent::DecodeListPodResources(*reply) : reply.status();
  if (list.ok()) {
    memory->pods = std::move(list).value();
    memory->pods_misses = 0;
  } else {
    warnings->push_back("the pods on each GPU are unknown (kubelet PodResources): " + list.status().message());
    if (++memory->pods_misses > kPodReadingsKept) memory->pods.reset();
  }
  if (memory->pods) agent::AttachPods(*memory->pods, &devices);
  return devices;
}

void PrintWarnings(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) std::fprintf(stderr, "gpusched agent: %s\n", w.c_str());
}

StatusOr<std::string> Describe(const AgentArgs& a) {
  std::vector<std::string> warnings;
  AgentMemory memory;
  GPUSCHED_ASSIGN_OR_RETURN(std::vector<agent::PhysicalGpu> gpus, ReadGpus(a, &memory, &warnings));
  std::string value = kubejson::EncodeGpuDevices(Published(a, gpus, {}, &memory, &warnings));
  PrintWarnings(warnings);
  return value + "\n";
}

StatusOr<std::unique_ptr<kubeapi::ApiClient>> Client(const AgentArgs& a) {
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

// The node's drift: its GPUs against what its pods book and the GPUs their ResourceClaims hold
// (the claims and the node's slices are read only when some pod uses claims).
StatusOr<std::vector<agent::GpuDrift>> CheckDrift(const AgentArgs& a, kubeapi::ApiClient* client, const std::vector<agent::PhysicalGpu>& gpus) {
  GPUSCHED_ASSIGN_OR_RETURN(std::vector<Pod> pods, kubeapi::PodsOnNode(client, a.node));
  GPUSCHED_ASSIGN_OR_RETURN(std::vector<dra::ResourceClaim> claims, kubeapi::ClaimsOfPods(client, pods));
  std::set<std::string> claimed;
  if (!claims.empty()) {
    GPUSCHED_ASSIGN_OR_RETURN(std::vector<dra::ResourceSlice> slices, kubeapi::SlicesOnNode(client, a.node));
    claimed = agent::ClaimedGpuUuids(claims, slices);
  }
  return agent::FindDrift(gpus, agent::BookedBy(pods), claimed);
}

// One round: read the GPUs, check them against what the node's pods book, publish them if they
// changed, and post a drift not in memory->reported (the last round's) as a Node Event. The GPUs
// are published even when the pods cannot be listed (with the last round's drift): health must
// not wait for the drift check.
StatusOr<RoundResult> PublishOnce(const AgentArgs& a, kubeapi::ApiClient* client, AgentMemory* memory) {
  RoundResult r;
  GPUSCHED_ASSIGN_OR_RETURN(r.gpus, ReadGpus(a, memory, &r.warnings));
  StatusOr<std::vector<agent::GpuDrift>> drift = CheckDrift(a, client, r.gpus);
  if (drift.ok()) memory->drift = std::move(drift).value();
  r.drift = memory->drift;
  std::string value = kubejson::EncodeGpuDevices(Published(a, r.gpus, r.drift, memory, &r.warnings));
  GPUSCHED_ASSIGN_OR_RETURN(r.published, kubeapi::PublishGpuDevices(client, a.node, value));
  if (!drift.ok()) return drift.status().WithContext(fmt::format("{} the GPUs; drift not checked", r.published ? "published" : "kept"));
  r.text = fmt::format("node {}: {} {}\n", a.node, r.published ? "published" : "unchanged", value);
  std::set<std::string> now;
  for (const agent::GpuDrift& d : r.drift) {
    now.insert(d.reason);
    r.text += fmt::format("drift: {}\n", d.reason);
    if (memory->reported.contains(d.reason)) continue;
    Status posted = kubeapi::PostNodeEvent(client, a.node, "GPUAccountingDrift", d.reason);
    if (!posted.ok()) now.erase(d.reason);  // tried again next round
  }
  memory->reported = std::move(now);
  return r;
}

// Starts the /metrics listener if asked for; prints where it listens. Null when not asked for.
StatusOr<std::unique_ptr<http::Server>> MetricsServer(const AgentArgs& a, const AgentMetrics* metrics) {
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
int PublishLoop(const AgentArgs& a, kubeapi::ApiClient* client) {
  std::signal(SIGTERM, [](int) { stop_agent = true; });
  std::signal(SIGINT, [](int) { stop_agent = true; });
  AgentMetrics metrics(a.node);
  StatusOr<std::unique_ptr<http::Server>> server = MetricsServer(a, &metrics);
  if (!server.ok()) {
    std::fprintf(stderr, "gpusched agent: --metrics-listen %s: %s\n", a.metrics_listen.c_str(), server.status().message().c_str());
    return 2;
  }
  AgentMemory memory;
  std::vector<std::string> warned;  // the last round's warnings: said again only when they change
  while (!stop_agent) {
    StatusOr<RoundResult> round = PublishOnce(a, client, &memory);
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
  StatusOr<AgentArgs> parsed = ParseAgentArgs(argc, argv);
  if (parsed.ok() && !parsed->print && !parsed->once) {
    StatusOr<std::unique_ptr<kubeapi::ApiClient>> client = Client(*parsed);
    if (!client.ok()) {
      std::fprintf(stderr, "gpusched agent: %s\n", client.status().message().c_str());
      return 1;
    }
    return PublishLoop(*parsed, client->get());
  }
  return RunAnswering<AgentArgs>("agent", kAgentUsage, argc, argv, ParseAgentArgs, [](const AgentArgs& a) -> StatusOr<std::string> {
    if (a.print) return Describe(a);
    GPUSCHED_ASSIGN_OR_RETURN(std::unique_ptr<kubeapi::ApiClient> client, Client(a));
    AgentMemory memory;
    GPUSCHED_ASSIGN_OR_RETURN(RoundResult r, PublishOnce(a, client.get(), &memory));
    PrintWarnings(r.warnings);
    return r.text;
  });
}

}  // namespace gpusched::cli
