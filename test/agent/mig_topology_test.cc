// The node agent's MIG instances (`nvidia-smi mig -lgi` with the H200's real `-lgip` profiles) and
// GPU peers (`nvidia-smi topo -m`), and how they travel in gpusched.io/gpu-devices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "gpusched/agent/gpu_devices.h"
#include "gpusched/agent/topology.h"
#include "gpusched/dra/mig.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::agent {
namespace mig_topology_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(GPUSCHED_TEST_DATA_DIR) + "/nvidia-h200/" + name);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_FALSE(s.str().empty()) << name;
  return s.str();
}

// `nvidia-smi mig -lgi` on the H200 with three instances made from its real profiles (placements
// from its -lgipp: 3g.71gb at {0,4}, 2g.35gb at {0,2,4}, 1g.18gb at {0..6}).
constexpr std::string_view kH200Instances = R"(+---------------------------------------------------------+
| GPU instances:                                          |
| GPU   Name               Profile  Instance   Placement  |
|                            ID       ID       Start:Size |
|=========================================================|
|   0  MIG 1g.18gb          19       13          6:1     |
+---------------------------------------------------------+
|   0  MIG 2g.35gb          14        5          4:2     |
+---------------------------------------------------------+
|   0  MIG 3g.71gb           9        1          0:4     |
+---------------------------------------------------------+
)";

PhysicalGpu Gpu(int index, int smi_index, bool mig = false) {
  return PhysicalGpu{.index = index, .smi_index = smi_index, .uuid = "GPU-" + std::to_string(index), .mig_enabled = mig};
}

TEST(MigInstances, AnH200WithMigEnabledGetsItsInstancesWithTheirProfilesMemory) {
  std::vector<PhysicalGpu> gpus{Gpu(0, 0, true)};
  ASSERT_TRUE(AttachMigInstances(kH200Instances, Fixture("nvidia-smi-mig-lgip.txt"), Fixture("nvidia-smi-mig-lgipp.txt"), &gpus).ok());
  EXPECT_EQ(gpus[0].mig_slices, 8);  // 7g.141gb at {0}:8
  const std::vector<MigInstance>& m = gpus[0].mig_instances;
  ASSERT_EQ(m.size(), 3u);  // by placement
  EXPECT_EQ(m[0], (MigInstance{.profile = "3g.71gb", .profile_id = 9, .instance_id = 1, .start = 0, .size = 4, .memory_mib = 71424}));
  EXPECT_EQ(m[1], (MigInstance{.profile = "2g.35gb", .profile_id = 14, .instance_id = 5, .start = 4, .size = 2, .memory_mib = 33280}));
  EXPECT_EQ(m[2], (MigInstance{.profile = "1g.18gb", .profile_id = 19, .instance_id = 13, .start = 6, .size = 1, .memory_mib = 16384}));
}

TEST(MigInstances, NoInstancesAndGpusWithoutMigGetNone) {
  EXPECT_THAT(dra::ParseMigInstances("No GPU instances found: Not Found\n").value(), IsEmpty());
  std::vector<PhysicalGpu> gpus{Gpu(0, 0, false), Gpu(1, 1, true)};
  ASSERT_TRUE(AttachMigInstances(kH200Instances, "", "", &gpus).ok());
  EXPECT_EQ(gpus[1].mig_slices, 0);  // no placements read: unknown
  EXPECT_THAT(gpus[0].mig_instances, IsEmpty());  // the rows name nvidia-smi GPU 0, which has MIG disabled
  EXPECT_THAT(gpus[1].mig_instances, IsEmpty());
}

TEST(MigInstances, AnUnreadableRowIsNamed) {
  Status s = dra::ParseMigInstances("|   0  MIG 1g.18gb          19       13          6-1     |\n").status();
  EXPECT_THAT(s.message(), HasSubstr("nvidia-smi mig -lgi: cannot read"));
  EXPECT_THAT(s.message(), HasSubstr("6-1"));
}

// `nvidia-smi topo -m` of an 8-GPU NVSwitch machine (every pair NV18) with two NICs, the header
// underlined with terminal escapes as recent drivers print it.
std::string HgxMatrix() {
  std::string out = "\t\x1b[4mGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n";
  for (int r = 0; r < 8; ++r) {
    out += "GPU" + std::to_string(r);
    for (int c = 0; c < 8; ++c) out += c == r ? "\t X " : "\tNV18";
    out += r < 4 ? "\tPXB\tSYS\t0-47\t0\t\tN/A\n" : "\tSYS\tPXB\t48-95\t1\t\tN/A\n";
  }
  out += "NIC0\tPXB\tPXB\tPXB\tPXB\tSYS\tSYS\tSYS\tSYS\t X \tSYS\n\nLegend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n";
  return out;
}

TEST(Topology, EveryGpuOfAnNvSwitchMachineHasSevenNvlinkPeersAndNicsAreNotPeers) {
  auto links = ParseTopologyMatrix(HgxMatrix());
  ASSERT_TRUE(links.ok()) << links.status().message();
  ASSERT_EQ(links->size(), 8u);
  EXPECT_THAT(links->at(0).nvlink, ElementsAre(1, 2, 3, 4, 5, 6, 7));
  EXPECT_THAT(links->at(5).nvlink, ElementsAre(0, 1, 2, 3, 4, 6, 7));
  EXPECT_THAT(links->at(5).pcie, IsEmpty());
}

TEST(Topology, PcieSwitchPeersAndTheTranslationToMinorNumbers) {
  // A PCIe machine: GPU0-GPU1 behind one bridge, GPU2-GPU3 behind a switch of several, the pairs
  // apart across the CPUs.
  std::string m =
      "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n"
      "GPU0\t X \tPIX\tSYS\tSYS\t0-15\t0\n"
      "GPU1\tPIX\t X \tSYS\tSYS\t0-15\t0\n"
      "GPU2\tSYS\tSYS\t X \tPXB\t16-31\t1\n"
      "GPU3\tSYS\tSYS\tPXB\t X \t16-31\t1\n";
  auto links = ParseTopologyMatrix(m);
  ASSERT_TRUE(links.ok()) << links.status().message();
  EXPECT_THAT(links->at(1).pcie, ElementsAre(0));
  EXPECT_THAT(links->at(2).pcie, ElementsAre(3));
  EXPECT_THAT(links->at(2).nvlink, IsEmpty());
  // nvidia-smi's GPU i is minor number 3 - i here.
  std::vector<PhysicalGpu> gpus{Gpu(3, 0), Gpu(2, 1), Gpu(1, 2), Gpu(0, 3)};
  AttachPeers(*links, &gpus);
  EXPECT_THAT(gpus[0].pcie_peers, ElementsAre(2));  // minor 3 (smi 0) with minor 2 (smi 1)
  EXPECT_THAT(gpus[2].pcie_peers, ElementsAre(0));
}

TEST(Topology, AMatrixWithoutGpuColumnsOrWithAShortRowIsAnError) {
  EXPECT_THAT(ParseTopologyMatrix("NVIDIA-SMI has failed\n").status().message(), HasSubstr("no header names a GPU column"));
  EXPECT_THAT(ParseTopologyMatrix("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X\n").status().message(),
              HasSubstr("row GPU0 has 1 cells for 2 columns"));
}

TEST(GpuDevicesAnnotation, MigPeersAndDriftTravelAndReadBack) {
  std::vector<PhysicalGpu> gpus{Gpu(0, 0, true), Gpu(1, 1)};
  gpus[0].mig_instances = {MigInstance{.profile = "1g.18gb", .profile_id = 19, .instance_id = 13, .start = 6, .size = 1, .memory_mib = 16384}};
  gpus[1].nvlink_peers = {0};
  gpus[1].pcie_peers = {0};
  std::vector<GpuDrift> drift{{.index = -1, .kind = GpuDriftKind::kUsedWithoutBooking, .gpus = {1}, .reason = "r"}};
  std::vector<GpuDevice> devices = ToGpuDevices(gpus, drift);
  std::string value = kubejson::EncodeGpuDevices(devices);
  EXPECT_THAT(value, HasSubstr(R"("migEnabled":true,"migInstances":[{"profile":"1g.18gb","profileId":19,"id":13,"start":6,"size":1,"memoryMiB":16384}])"));
  EXPECT_THAT(value, HasSubstr(R"("nvlinkPeers":[0],"pcieSwitchPeers":[0],"drift":"UsedWithoutBooking"})"));
  auto back = kubejson::ParseGpuDevices(value);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, devices);
  EXPECT_EQ(devices[0].drift, GpuDriftKind::kNone);
}

TEST(GpuDevicesAnnotation, BadAgentFieldsAreNamed) {
  auto drift = kubejson::ParseGpuDevices(R"([{"index":0,"drift":"Sideways"}])");
  EXPECT_THAT(drift.status().message(), HasSubstr("[0].drift: \"Sideways\" (want UsedBeyondBooking or UsedWithoutBooking)"));
  auto mig = kubejson::ParseGpuDevices(R"([{"index":0,"migInstances":[{"profile":"1g.18gb","start":0,"size":0}]}])");
  EXPECT_THAT(mig.status().message(), HasSubstr("[0].migInstances[0]: placement 0:0"));
  auto peers = kubejson::ParseGpuDevices(R"([{"index":0,"nvlinkPeers":["1"]}])");
  EXPECT_THAT(peers.status().message(), HasSubstr("[0].nvlinkPeers[0]: want a GPU index"));
}

}  // namespace mig_topology_test
}  // namespace gpusched::agent
