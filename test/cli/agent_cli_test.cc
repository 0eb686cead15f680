// `gpusched agent --once --print` as a node's operator runs it: the real H200 report (saved) to
// the annotation's value, the NUMA node from a sysfs tree, and bad usage named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli_run.h"

namespace gpusched::testing {
namespace {

using ::testing::HasSubstr;

CliRun Agent(const std::string& args) { return RunCli(GPUSCHED_BINARY, "agent " + args); }

const std::string kXml = std::string(GPUSCHED_TEST_DATA_DIR) + "/nvidia-h200/nvidia-smi-q.xml";

TEST(AgentCli, PrintsTheGpuDevicesAnnotationOfASavedReport) {
  std::filesystem::path sys = std::filesystem::path(::testing::TempDir()) / "agent-sys";
  std::filesystem::create_directories(sys / "bus/pci/devices/0000:00:06.0");
  std::ofstream(sys / "bus/pci/devices/0000:00:06.0/numa_node") << "0\n";
  CliRun r = Agent("--once --print --nvidia-smi-xml " + kXml + " --sysfs " + sys.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, R"([{"index":0,"uuid":"GPU-0fddc4db-fc26-aaba-2b3c-03d2db73746c","model":"NVIDIA-H200","memoryMiB":143771,)"
                   R"("numa":0,"health":"Healthy"}])"
                   "\n");
}

TEST(AgentCli, BadUsageAndUnreadableReportsAreNamed) {
  CliRun loop = Agent("--nvidia-smi-xml " + kXml);
  EXPECT_EQ(loop.code, 2);
  EXPECT_THAT(loop.out, HasSubstr("give --once --print"));
  CliRun missing = Agent("--once --print --nvidia-smi-xml /nonexistent.xml");
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.out, HasSubstr("/nonexistent.xml: cannot be read"));
  std::string bad = WriteTemp("bad-report.xml", "<nvidia_smi_log><gpu id=\"x\"><uuid>GPU-1</uuid></gpu></nvidia_smi_log>");
  CliRun unreadable = Agent("--once --print --nvidia-smi-xml " + bad);
  EXPECT_EQ(unreadable.code, 1);
  EXPECT_THAT(unreadable.out, HasSubstr("GPU x: minor_number \"\""));
}

}  // namespace
}  // namespace gpusched::testing
