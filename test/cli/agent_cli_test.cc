// `gpusched agent --once --print` as a node's operator runs it: the real H200 report (saved) to
// the annotation's value, the NUMA node from a sysfs tree, and bad usage named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli_run.h"
#include "cluster_json.h"
#include "dra_json.h"
#include "eventually.h"
#include "fake_apiserver.h"
#include "fake_pod_resources.h"
#include "http_client.h"

namespace gpusched::testing {
namespace agent_cli_test {

using ::testing::HasSubstr;

CliRun Agent(const std::string& args) { return RunCli(GPUSCHED_BINARY, "agent " + args); }

const std::string kXml = std::string(GPUSCHED_TEST_DATA_DIR) + "/nvidia-h200/nvidia-smi-q.xml";

TEST(AgentCli, PrintsTheGpuDevicesAnnotationOfASavedReport) {
  std::filesystem::path sys = std::filesystem::path(TestTempDir("files")) / "agent-sys";
  std::filesystem::create_directories(sys / "bus/pci/devices/0000:00:06.0");
  std::ofstream(sys / "bus/pci/devices/0000:00:06.0/numa_node") << "0\n";
  CliRun r = Agent("--once --print --nvidia-smi-xml " + kXml + " --sysfs " + sys.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, R"([{"index":0,"uuid":"GPU-0fddc4db-fc26-aaba-2b3c-03d2db73746c","model":"NVIDIA-H200","memoryMiB":143771,)"
                   R"("numa":0,"health":"Healthy"}])"
                   "\n");
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The node's published annotation, as the in-process API server holds it ("" if none).
std::string Published(const FakeApiServer& api, const std::string& node) {
  std::optional<std::string> got = api.Get("nodes", "", node);
  if (!got) return "";
  size_t at = got->find("gpusched.io/gpu-devices");
  return at == std::string::npos ? "" : got->substr(at, got->find("}]", at) - at);
}

int Patches(const FakeApiServer& api) {
  int n = 0;
  for (const RecordedRequest& r : api.Requests()) n += r.method == "PATCH";
  return n;
}

TEST(AgentCli, PublishesOnItsNodeOnlyWhenTheGpusChanged) {
  FakeApiServer api;
  api.Put("nodes", NvidiaNode("gpu-0", 1).ToJson());
  std::string url = api.url();
  CliRun first = Agent("--once --node gpu-0 --server " + url + " --nvidia-smi-xml " + kXml);
  EXPECT_EQ(first.code, 0) << first.out;
  EXPECT_THAT(first.out, HasSubstr("node gpu-0: published"));
  EXPECT_THAT(Published(api, "gpu-0"), HasSubstr(R"(\"model\":\"NVIDIA-H200\")"));
  CliRun again = Agent("--once --node gpu-0 --server " + url + " --nvidia-smi-xml " + kXml);
  EXPECT_THAT(again.out, HasSubstr("node gpu-0: unchanged"));
  EXPECT_EQ(Patches(api), 1);
  CliRun missing = Agent("--once --node nowhere --server " + url + " --nvidia-smi-xml " + kXml);
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.out, HasSubstr("node nowhere does not exist"));
}

// Issue 34 §1: the kubelet's PodResources (real HTTP/2 on a unix socket) tells which GPU each pod
// got; the agent publishes it as "pods", and says when the socket cannot be read.
TEST(AgentCli, PublishesThePodsTheKubeletGaveEachGpu) {
  FakeApiServer api;
  api.Put("nodes", NvidiaNode("gpu-0", 1).ToJson());
  std::string socket = TestTempDir("files") + "/kubelet.sock";
  FakePodResources kubelet(socket);
  ASSERT_TRUE(kubelet.Start().ok());
  kubelet.Set({{"ml", "train", "c", "nvidia.com/gpu", {"GPU-0fddc4db-fc26-aaba-2b3c-03d2db73746c"}}});
  CliRun r = Agent("--once --node gpu-0 --server " + api.url() + " --nvidia-smi-xml " + kXml + " --pod-resources-socket " + socket);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(Published(api, "gpu-0"), HasSubstr(R"(\"pods\":[\"ml/train\"])"));
  EXPECT_EQ(kubelet.calls(), 1);
  CliRun unread = Agent("--once --print --nvidia-smi-xml " + kXml + " --pod-resources-socket " + socket + ".missing");
  EXPECT_EQ(unread.code, 0) << unread.out;
  EXPECT_THAT(unread.out, HasSubstr("the pods on each GPU are unknown (kubelet PodResources)"));
  EXPECT_THAT(unread.out, ::testing::Not(HasSubstr("\"pods\""))) << "unread is not free";
}

// Review finding: one failed PodResources reading (a kubelet restart) turned every GPU unknown and
// back, two Node writes. The last reading now stands for three rounds, then the pods are unread.
TEST(AgentCli, AFailedPodResourcesReadingKeepsTheLastOneForThreeRounds) {
  FakeApiServer api;
  api.Put("nodes", NvidiaNode("gpu-2", 1).ToJson());
  std::string socket = TestTempDir("files") + "/kubelet-loop.sock";
  FakePodResources kubelet(socket);
  ASSERT_TRUE(kubelet.Start().ok());
  kubelet.Set({{"ml", "train", "c", "nvidia.com/gpu", {"GPU-0fddc4db-fc26-aaba-2b3c-03d2db73746c"}}});
  std::string pid_file = TestTempDir("files") + "/agent-loop.pid";
  std::string command = std::string(GPUSCHED_BINARY) + " agent --node gpu-2 --interval 1 --server " + api.url() +
                        " --nvidia-smi-xml " + kXml + " --pod-resources-socket " + socket + " > /dev/null 2>&1 & echo $! > " +
                        pid_file;
  ASSERT_EQ(std::system(command.c_str()), 0);
  ASSERT_TRUE(Eventually([&] { return Published(api, "gpu-2").find(R"(\"pods\":[\"ml/train\"])") != std::string::npos; }));
  int patches = Patches(api);
  int calls = kubelet.calls();
  kubelet.Fail(14, "kubelet restarting");
  ASSERT_TRUE(Eventually([&] { return kubelet.calls() >= calls + 2; }));
  EXPECT_THAT(Published(api, "gpu-2"), HasSubstr(R"(\"pods\":[\"ml/train\"])")) << "the last reading stands";
  EXPECT_EQ(Patches(api), patches);
  EXPECT_TRUE(Eventually([&] { return Published(api, "gpu-2").find("pods") == std::string::npos; })) << "then unread";
  EXPECT_EQ(std::system(("kill -TERM " + ReadAll(pid_file)).c_str()), 0);
}

// The H200's report with one process on GPU 0: `pid`, using `memory` ("20000 MiB", "N/A").
std::string WithProcess(const std::string& pid, const std::string& memory) {
  std::string xml = ReadAll(kXml);
  return xml.replace(xml.find("<processes>"), std::string("<processes>\n\t\t</processes>").size(),
                     "<processes><process_info><pid>" + pid + "</pid><process_name>python</process_name><used_memory>" + memory +
                         "</used_memory></process_info></processes>");
}

// A running pod on `node` whose mGPU container s is booked on GPU 0 with `mib`.
std::string MgpuPodOn(const std::string& node, int64_t mib) {
  return PodJson{.name = "p", .namespace_name = "ml", .uid = "u-p", .node = node, .phase = "Running",
                 .containers = {Mgpu("s", 50, mib)}, .annotations = {{"vke.volcengine.com/gpu-index-container-s", "0"}}}
      .ToJson();
}

// Whether a GPUAccountingDrift Event about `node` was posted.
bool PostedDriftEvent(const FakeApiServer& api, const std::string& node) {
  for (const RecordedRequest& q : api.Requests()) {
    if (q.method == "POST" && q.body.find(R"("reason":"GPUAccountingDrift")") != std::string::npos &&
        q.body.find(R"("kind":"Node","name":")" + node + "\"") != std::string::npos) {
      return true;
    }
  }
  return false;
}

// A GPU used beyond what the ledger books on it: the agent says so and posts a Node Event.
TEST(AgentCli, AGpuUsedBeyondItsBookingIsReportedAsDrift) {
  FakeApiServer api;
  api.Put("nodes", MgpuNode("gpu-2", 1, 143771).ToJson());
  api.Put("pods", MgpuPodOn("gpu-2", 8192));
  std::string report = WriteTemp("agent-drift.xml", WithProcess("77", "20000 MiB"));
  CliRun r = Agent("--once --node gpu-2 --server " + api.url() + " --nvidia-smi-xml " + report);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("drift: GPU 0 (GPU-0fddc4db-fc26-aaba-2b3c-03d2db73746c): processes use 20000 MiB, 8192 MiB booked by ml/p"));
  EXPECT_TRUE(PostedDriftEvent(api, "gpu-2"));
  EXPECT_THAT(Published(api, "gpu-2"), HasSubstr("UsedBeyondBooking"));  // what gpusched's /ui shows
  // Within its booking (plus tolerance) there is nothing to say, and the mark goes.
  std::string fine = WriteTemp("agent-fine.xml", ReadAll(report).replace(ReadAll(report).find("20000 MiB"), 9, "8000 MiB"));
  CliRun ok = Agent("--once --node gpu-2 --server " + api.url() + " --nvidia-smi-xml " + fine);
  EXPECT_THAT(ok.out, ::testing::Not(HasSubstr("drift:")));
  EXPECT_THAT(Published(api, "gpu-2"), ::testing::Not(HasSubstr("drift")));
}

// On an nvidia-dra node a pod's ResourceClaim holds GPU 0 (its device in the node's slice has the
// GPU's UUID): the pod's process there is not drift, and no Event is posted.
TEST(AgentCli, AGpuThatAPodsResourceClaimHoldsIsNotDrift) {
  FakeApiServer api;
  api.Put("nodes", DraNode("gpu-5"));
  api.Put("resourceslices", GpuSlice("gpu-5", 1));
  api.Put("resourceclaims", Claim("train", ClaimSpec(1, ""), {"gpu-5/gpu-0"}, {"p"}));
  api.Put("pods", ClaimPod("p", "train", "gpu-5"));
  std::string xml = WithProcess("77", "30000 MiB");
  xml.replace(xml.find("GPU-0fddc4db-fc26-aaba-2b3c-03d2db73746c"), 40, "GPU-gpu-5-0");
  std::string report = WriteTemp("agent-dra.xml", xml);
  CliRun r = Agent("--once --node gpu-5 --server " + api.url() + " --nvidia-smi-xml " + report);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("node gpu-5: published"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("drift:")));
  EXPECT_FALSE(PostedDriftEvent(api, "gpu-5"));
  // Once the claim is gone the process is no pod's.
  api.Remove("resourceclaims", "ml", "train");
  CliRun gone = Agent("--once --node gpu-5 --server " + api.url() + " --nvidia-smi-xml " + report);
  EXPECT_THAT(gone.out, HasSubstr("drift: GPUs 0 run processes but no mGPU container is booked on them"));
}

// A process whose memory nvidia-smi cannot tell (N/A), or NVML (NVML_VALUE_NOT_AVAILABLE), is no
// evidence that a GPU is used beyond its booking.
TEST(AgentCli, AProcessOfUnknownMemoryIsNotReportedAsDrift) {
  FakeApiServer api;
  api.Put("nodes", MgpuNode("gpu-6", 2, 143771).ToJson());
  api.Put("pods", MgpuPodOn("gpu-6", 81920));
  std::string report = WriteTemp("agent-unknown.xml", WithProcess("77", "N/A"));
  CliRun smi = Agent("--once --node gpu-6 --server " + api.url() + " --nvidia-smi-xml " + report);
  EXPECT_EQ(smi.code, 0) << smi.out;
  EXPECT_THAT(smi.out, ::testing::Not(HasSubstr("drift:")));
  // The stand-in NVML: on GPU 0 one process of 80 GiB (booked) and one of unknown memory.
  CliRun nvml = Agent("--once --node gpu-6 --server " + api.url() + " --nvml-library " + FAKE_NVML_LIBRARY);
  EXPECT_EQ(nvml.code, 0) << nvml.out;
  EXPECT_THAT(nvml.out, ::testing::Not(HasSubstr("drift:")));
  EXPECT_FALSE(PostedDriftEvent(api, "gpu-6"));
}

// The H200's report as two GPUs (minor numbers 0 and 1, the second MIG-enabled), as nvidia-smi
// would list them.
std::string TwoGpusOneWithMig() {
  std::string xml = ReadAll(kXml);
  size_t begin = xml.find("\t<gpu id=");
  size_t end = xml.find("</gpu>") + 6;
  std::string second = xml.substr(begin, end - begin);
  second.replace(second.find("<minor_number>0<"), 16, "<minor_number>1<");
  second.replace(second.find("03d2db73746c"), 12, "03d2db73746d");
  second.replace(second.find("<current_mig>Disabled"), 21, "<current_mig>Enabled");
  return xml.insert(end, "\n" + second);
}

constexpr std::string_view kInstances =
    "|   1  MIG 3g.71gb           9        1          0:4     |\n"
    "|   1  MIG 1g.18gb          19       13          6:1     |\n";

TEST(AgentCli, SavedMigAndTopologyReportsAddInstancesAndPeers) {
  std::string xml = WriteTemp("agent-mig.xml", TwoGpusOneWithMig());
  std::string lgi = WriteTemp("agent-lgi.txt", std::string(kInstances));
  std::string topo = WriteTemp("agent-topo.txt", "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV18\t0-47\nGPU1\tNV18\t X \t0-47\n");
  std::string lgip = std::string(GPUSCHED_TEST_DATA_DIR) + "/nvidia-h200/nvidia-smi-mig-lgip.txt";
  FakeApiServer api;
  api.Put("nodes", MgpuNode("gpu-4", 1, 143771).ToJson());
  CliRun r = Agent("--once --node gpu-4 --server " + api.url() + " --nvidia-smi-xml " + xml + " --nvidia-smi-mig " + lgi +
                   " --nvidia-smi-mig-profiles " + lgip + " --nvidia-smi-topo " + topo);
  EXPECT_EQ(r.code, 0) << r.out;
  // -lgip lists profiles for nvidia-smi GPU 0 only: GPU 1's instances have no memory figure.
  EXPECT_THAT(r.out, HasSubstr(R"("index":0,"uuid":"GPU-0fddc4db-fc26-aaba-2b3c-03d2db73746c","model":"NVIDIA-H200",)"
                               R"("memoryMiB":143771,"numa":-1,"health":"Healthy","nvlinkPeers":[1]})"));
  EXPECT_THAT(r.out, HasSubstr(R"("health":"Healthy","migEnabled":true,"migInstances":[{"profile":"3g.71gb","profileId":9,)"
                               R"("id":1,"start":0,"size":4,"memoryMiB":0},{"profile":"1g.18gb","profileId":19,"id":13,)"
                               R"("start":6,"size":1,"memoryMiB":0}],"nvlinkPeers":[0]}])"));
  EXPECT_THAT(Published(api, "gpu-4"), HasSubstr("3g.71gb"));  // published on the Node
  // Without the saved companions the saved report alone is read: no instances, no peers.
  CliRun plain = Agent("--once --print --nvidia-smi-xml " + xml);
  EXPECT_THAT(plain.out, ::testing::Not(HasSubstr("migInstances")));
  EXPECT_THAT(plain.out, ::testing::Not(HasSubstr("Peers")));
}

TEST(AgentCli, RunsNvidiaSmiMigAndTopoWhenThereIsNoSavedReport) {
  std::filesystem::path bin = std::filesystem::path(TestTempDir("files")) / "fake-nvidia-bin-mig";
  std::filesystem::create_directories(bin);
  std::string xml = WriteTemp("agent-mig-live.xml", TwoGpusOneWithMig());
  std::string lgi = WriteTemp("agent-lgi-live.txt", std::string(kInstances));
  std::string lgip = std::string(GPUSCHED_TEST_DATA_DIR) + "/nvidia-h200/nvidia-smi-mig-lgip.txt";
  std::ofstream(bin / "nvidia-smi") << "#!/bin/sh\ncase \"$*\" in\n"
                                    << "  '-q -x') cat " << xml << ";;\n"
                                    << "  'mig -lgi') cat " << lgi << ";;\n"
                                    << "  'mig -lgip') sed 's/^|   0 /|   1 /' " << lgip << ";;\n"
                                    << "  'mig -lgipp') sed 's/^GPU  0 /GPU  1 /' " << lgip.substr(0, lgip.size() - 4) << "p.txt;;\n"
                                    << "  'topo -m') printf '\\tGPU0\\tGPU1\\tCPU Affinity\\nGPU0\\t X \\tPIX\\t0\\nGPU1\\tPIX\\t X \\t0\\n';;\n"
                                    << "  *) echo \"unexpected $*\"; exit 3;;\nesac\n";
  std::filesystem::permissions(bin / "nvidia-smi", std::filesystem::perms::owner_all);
  CliRun r = RunCli("PATH=" + bin.string() + ":/usr/bin:/bin " + std::string(GPUSCHED_BINARY),
                    "agent --once --print --nvml-library /nonexistent.so --pod-resources-socket none");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(R"("pcieSwitchPeers":[1]})"));
  EXPECT_THAT(r.out, HasSubstr(R"("migInstances":[{"profile":"3g.71gb","profileId":9,"id":1,"start":0,"size":4,"memoryMiB":71424})"));
  EXPECT_THAT(r.out, HasSubstr(R"(,"migSlices":8,)"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("unknown")));
}

// A fake nvidia-smi in its own directory answering -q -x with `xml` and running `mig` for
// anything else; the PATH prefix that finds it.
std::string FakeNvidiaSmi(const std::string& dir, const std::string& xml, const std::string& mig) {
  std::filesystem::path bin = std::filesystem::path(TestTempDir("files")) / dir;
  std::filesystem::create_directories(bin);
  std::ofstream(bin / "nvidia-smi") << "#!/bin/sh\nif [ \"$1 $2\" = \"-q -x\" ]; then cat " << xml << "; exit 0; fi\n" << mig << "\n";
  std::filesystem::permissions(bin / "nvidia-smi", std::filesystem::perms::owner_all);
  return "PATH=" + bin.string() + ":/usr/bin:/bin ";
}

TEST(AgentCli, AMigGpuWithNoInstancesIsPublishedWithNone) {
  FakeApiServer api;
  api.Put("nodes", MgpuNode("gpu-3", 1, 143771).ToJson());
  std::string xml = WriteTemp("agent-mig-none.xml", TwoGpusOneWithMig());
  // nvidia-smi says so and exits 6 when no GPU instance exists; topo -m is not asked for here.
  std::string path = FakeNvidiaSmi("fake-nvidia-none", xml,
                                   "case \"$*\" in 'mig -lgi') echo 'No GPU instances found: Not Found'; exit 6;;"
                                   " 'topo -m') exit 9;; *) exit 0;; esac");
  CliRun r = RunCli(path + std::string(GPUSCHED_BINARY), "agent --once --node gpu-3 --server " + api.url() + " --nvml-library /nonexistent.so");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(Published(api, "gpu-3"), HasSubstr("migEnabled"));
  EXPECT_THAT(Published(api, "gpu-3"), ::testing::Not(HasSubstr("migInstances")));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("MIG instances unknown")));
  EXPECT_THAT(r.out, HasSubstr("GPU peers unknown: nvidia-smi topo -m exited 9"));
}

TEST(AgentCli, AHungNvidiaSmiIsKilledAndNamed) {
  std::string xml = WriteTemp("agent-hung.xml", TwoGpusOneWithMig());
  std::string path = FakeNvidiaSmi("fake-nvidia-hung", xml, "exec sleep 30");
  auto start = std::chrono::steady_clock::now();
  CliRun r = RunCli(path + std::string(GPUSCHED_BINARY), "agent --once --print --nvidia-smi-timeout 1 --nvml-library /nonexistent.so");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(15));
  EXPECT_EQ(r.code, 0) << r.out;  // the GPUs are published; what hung is left unknown
  EXPECT_THAT(r.out, HasSubstr("MIG instances unknown: nvidia-smi mig -lgi did not finish within 1 s: killed"));
  EXPECT_THAT(r.out, HasSubstr("kubectl apply -k deploy/agent-mig"));
  EXPECT_THAT(r.out, HasSubstr(R"("migEnabled":true)"));
}

// The agent as the DaemonSet runs it: a GPU that turns unhealthy is published within 10 s, and
// SIGTERM ends it cleanly.
TEST(AgentCli, AGpuThatTurnsUnhealthyIsPublishedWithinTenSeconds) {
  FakeApiServer api;
  api.Put("nodes", NvidiaNode("gpu-1", 1).ToJson());
  std::string report = WriteTemp("agent-live.xml", ReadAll(kXml));
  std::string pid_file = TestTempDir("files") + "/agent.pid";
  std::string log = TestTempDir("files") + "/agent.log";
  std::string command = std::string(GPUSCHED_BINARY) + " agent --node gpu-1 --interval 1 --server " + api.url() +
                        " --metrics-listen 127.0.0.1:0 --nvidia-smi-xml " + report + " > " + log + " 2>&1 & echo $! > " + pid_file;
  ASSERT_EQ(std::system(command.c_str()), 0);
  ASSERT_TRUE(Eventually([&] { return Published(api, "gpu-1").find("Healthy") != std::string::npos; }));
  std::string xml = ReadAll(kXml);
  xml.replace(xml.find("<dram_uncorrectable>0"), 22, "<dram_uncorrectable>3<");
  std::ofstream(report) << xml;
  auto changed = std::chrono::steady_clock::now();
  EXPECT_TRUE(Eventually([&] { return Published(api, "gpu-1").find("Unhealthy") != std::string::npos; }));
  EXPECT_LT(std::chrono::steady_clock::now() - changed, std::chrono::seconds(10));
  // Its /metrics says so too.
  std::smatch port;
  std::string printed = ReadAll(log);
  ASSERT_TRUE(std::regex_search(printed, port, std::regex("metrics on 127.0.0.1:([0-9]+)"))) << printed;
  HttpClient metrics(static_cast<uint16_t>(std::stoi(port[1])));
  EXPECT_TRUE(Eventually([&] {
    return metrics.Get("/metrics").body.find(R"(gpusched_agent_gpu_healthy{node="gpu-1",gpu="0",uuid="GPU-0fddc4db-fc26-aaba-2b3c-03d2db73746c"} 0)") !=
           std::string::npos;
  }));
  EXPECT_THAT(metrics.Get("/metrics").body, HasSubstr(R"(gpusched_agent_publishes_total{node="gpu-1"} 2)"));
  EXPECT_THAT(metrics.Get("/metrics").body, HasSubstr(R"(gpusched_agent_gpu_drift{node="gpu-1",gpu="all"} 0)"));
  std::string pid = ReadAll(pid_file);
  EXPECT_EQ(std::system(("kill -TERM " + pid).c_str()), 0);
}

// Without a saved report it runs nvidia-smi from the PATH, without a shell (the image has none).
TEST(AgentCli, RunsNvidiaSmiFromThePathAndSaysWhenItIsMissing) {
  std::filesystem::path bin = std::filesystem::path(TestTempDir("files")) / "fake-nvidia-bin";
  std::filesystem::create_directories(bin);
  std::ofstream(bin / "nvidia-smi") << "#!/bin/sh\n[ \"$1 $2\" = \"-q -x\" ] || exit 3\ncat " << kXml << "\n";
  std::filesystem::permissions(bin / "nvidia-smi", std::filesystem::perms::owner_all);
  CliRun r = RunCli("PATH=" + bin.string() + ":/usr/bin:/bin " + std::string(GPUSCHED_BINARY),
                    "agent --once --print --nvml-library /nonexistent.so");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(R"("model":"NVIDIA-H200")"));
  CliRun missing = RunCli("PATH=/nonexistent " + std::string(GPUSCHED_BINARY), "agent --once --print --nvml-library /nonexistent.so");
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.out, HasSubstr("nvidia-smi is not on this machine's PATH"));
}

// With NVML present (here a stand-in library), the agent reads the GPUs through it.
TEST(AgentCli, ReadsTheGpusThroughNvmlWhenItsLibraryLoads) {
  CliRun r = Agent(std::string("--once --print --nvml-library ") + FAKE_NVML_LIBRARY);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(R"([{"index":0,"uuid":"GPU-00000000-fake-0000-0000-000000000000","model":"NVIDIA-H200",)"
                               R"("memoryMiB":143771,"numa":-1,"health":"Healthy"},{"index":1,)"));
  EXPECT_THAT(r.out, HasSubstr(R"("health":"Unhealthy","migEnabled":true}])"));
}

TEST(AgentCli, BadUsageAndUnreadableReportsAreNamed) {
  CliRun loop = Agent("--nvidia-smi-xml " + kXml);
  EXPECT_EQ(loop.code, 2);
  EXPECT_THAT(loop.out, HasSubstr("give --node"));
  CliRun missing = Agent("--once --print --nvidia-smi-xml /nonexistent.xml");
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.out, HasSubstr("/nonexistent.xml: cannot be read"));
  std::string bad = WriteTemp("bad-report.xml", "<nvidia_smi_log><gpu id=\"x\"><uuid>GPU-1</uuid></gpu></nvidia_smi_log>");
  CliRun unreadable = Agent("--once --print --nvidia-smi-xml " + bad);
  EXPECT_EQ(unreadable.code, 1);
  EXPECT_THAT(unreadable.out, HasSubstr("GPU x: minor_number \"\""));
}

}  // namespace agent_cli_test
}  // namespace gpusched::testing
