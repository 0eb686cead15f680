// The agent's NVML path, loaded at run time: a stand-in library (fake_nvml.cc) gives two GPUs,
// read by minor number with health, MIG mode and processes; a missing library is NotFound, so the
// agent falls back to nvidia-smi.
#include "gpusched/agent/nvml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::agent {
namespace nvml_test {

using ::testing::HasSubstr;

TEST(Nvml, TheGpusAreReadThroughALibraryLoadedAtRunTime) {
  StatusOr<std::vector<PhysicalGpu>> gpus = ReadNvml(FAKE_NVML_LIBRARY);
  ASSERT_TRUE(gpus.ok()) << gpus.status().message();
  ASSERT_EQ(gpus->size(), 2u);
  const PhysicalGpu& g0 = (*gpus)[0];
  EXPECT_EQ(g0.index, 0);
  EXPECT_EQ(g0.uuid, "GPU-00000000-fake-0000-0000-000000000000");
  EXPECT_EQ(g0.product, "NVIDIA H200");
  EXPECT_EQ(g0.memory_mib, 143771);
  EXPECT_EQ(g0.used_mib, 81920);
  EXPECT_EQ(g0.pci_bus_id, "00000000:00:06.0");
  EXPECT_TRUE(g0.healthy);
  EXPECT_FALSE(g0.mig_enabled);
  ASSERT_EQ(g0.processes.size(), 2u);
  EXPECT_EQ(g0.processes[0].pid, 4242);
  EXPECT_EQ(g0.processes[0].used_mib, 81920);
  // NVML_VALUE_NOT_AVAILABLE (all ones) is unknown, not 17592186044415 MiB.
  EXPECT_EQ(g0.processes[1].pid, 4243);
  EXPECT_EQ(g0.processes[1].used_mib, std::nullopt);
  const PhysicalGpu& g1 = (*gpus)[1];
  EXPECT_EQ(g1.index, 1);
  EXPECT_FALSE(g1.healthy);
  EXPECT_EQ(g1.health_reason, "2 volatile uncorrectable ECC errors");
  EXPECT_TRUE(g1.mig_enabled);
}

TEST(Nvml, AMissingLibraryIsNotFound) {
  StatusOr<std::vector<PhysicalGpu>> gpus = ReadNvml("/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(gpus.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(gpus.status().message(), HasSubstr("/nonexistent/libnvidia-ml.so.1"));
}

}  // namespace nvml_test
}  // namespace gpusched::agent
