// The drift check on hand-built nodes: memory used beyond an mGPU booking (with its tolerance),
// exclusive cards, GPUs in use that no pod is booked on, whole-GPU pods whose devices the device
// plugin picks, GPUs that ResourceClaims hold, and processes whose memory is unknown.
#include "gpusched/agent/drift.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::agent {
namespace drift_test {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

PhysicalGpu Gpu(int index, std::vector<int64_t> process_mib) {
  PhysicalGpu g{.index = index, .uuid = "GPU-" + std::to_string(index), .memory_mib = 81920};
  for (size_t i = 0; i < process_mib.size(); ++i) g.processes.push_back(GpuProcess{.pid = 100 + static_cast<int64_t>(i), .used_mib = process_mib[i]});
  return g;
}

Allocation Shared(std::string name, std::vector<int> gpus, int64_t mib, bool exclusive = false) {
  Allocation a{.pod_uid = name, .pod_namespace = "ml", .pod_name = name, .node_name = "n", .mode = NodeMode::kMgpu};
  a.placement.kind = RequestKind::kMgpu;
  a.placement.containers.push_back(ContainerAssignment{.container = "c", .gpu_indices = std::move(gpus), .milli_per_gpu = 500,
                                                       .mib_per_gpu = mib, .exclusive = exclusive});
  return a;
}

Allocation Whole(std::string name, int64_t gpus) {
  Allocation a{.pod_uid = name, .pod_namespace = "ml", .pod_name = name, .node_name = "n", .mode = NodeMode::kNvidia};
  a.placement.kind = RequestKind::kWholeGpu;
  a.placement.whole_gpus = gpus;
  return a;
}

TEST(Drift, AGpuUsedBeyondItsMgpuBookingsIsReportedWithThePodsBookedThere) {
  std::vector<Allocation> booked = {Shared("a", {0}, 8192), Shared("b", {0}, 4096)};
  // 12,288 MiB booked; the tolerance is 614 MiB (5%), above the 512 MiB floor.
  EXPECT_THAT(FindDrift({Gpu(0, {8192, 4096 + 600})}, booked), IsEmpty());
  std::vector<GpuDrift> d = FindDrift({Gpu(0, {8192, 4096 + 700})}, booked);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].index, 0);
  EXPECT_EQ(d[0].reason, "GPU 0 (GPU-0): processes use 12988 MiB, 12288 MiB booked by ml/a, ml/b");
  // A small booking gets the 512 MiB floor.
  EXPECT_THAT(FindDrift({Gpu(1, {1024 + 500})}, {Shared("c", {1}, 1024)}), IsEmpty());
  EXPECT_EQ(FindDrift({Gpu(1, {1024 + 513})}, {Shared("c", {1}, 1024)}).size(), 1u);
  // A whole card booked exclusively may use all of it.
  EXPECT_THAT(FindDrift({Gpu(2, {80000})}, {Shared("w", {2}, 0, /*exclusive=*/true)}), IsEmpty());
}

TEST(Drift, GpusInUseBeyondTheWholeGpuPodsAreReported) {
  std::vector<PhysicalGpu> gpus = {Gpu(0, {30000}), Gpu(1, {}), Gpu(2, {100}), Gpu(3, {})};
  // One whole-GPU pod holds 1 GPU; two GPUs run processes with no mGPU container on them.
  std::vector<GpuDrift> d = FindDrift(gpus, {Whole("t", 1)});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].index, -1);
  EXPECT_EQ(d[0].reason, "GPUs 0, 2 run processes but no mGPU container is booked on them, and the node's whole-GPU pods hold 1 GPU");
  EXPECT_THAT(FindDrift(gpus, {Whole("t", 2)}), IsEmpty());
  EXPECT_THAT(FindDrift(gpus, {Whole("t", 1), Shared("s", {2}, 1024)}), IsEmpty());  // GPU 2 is an mGPU pod's
  EXPECT_THAT(FindDrift({Gpu(0, {})}, {}), IsEmpty());  // idle and unbooked: nothing to say
  // Which of GPUs 0 and 2 is the whole-GPU pod's is unknown: the finding names no GPU to mark.
  EXPECT_THAT(d[0].gpus, IsEmpty());
  std::vector<GpuDrift> none_whole = FindDrift(gpus, {});
  ASSERT_EQ(none_whole.size(), 1u);
  EXPECT_THAT(none_whole[0].gpus, ElementsAre(0, 2));
  EXPECT_EQ(none_whole[0].kind, GpuDriftKind::kUsedWithoutBooking);
}

TEST(Drift, AMigEnabledGpuIsNotCheckedItsSlicesServePodsBookedElsewhere) {
  PhysicalGpu mig = Gpu(0, {30000});
  mig.mig_enabled = true;
  EXPECT_THAT(FindDrift({mig}, {}), IsEmpty());
  EXPECT_THAT(FindDrift({mig, Gpu(1, {2000})}, {})[0].gpus, ElementsAre(1));
}

// A process whose memory nvidia-smi or NVML cannot tell is no evidence of use beyond a booking.
TEST(Drift, AProcessOfUnknownMemoryIsNoEvidenceOfUseBeyondABooking) {
  PhysicalGpu g = Gpu(0, {8000});
  g.processes.push_back(GpuProcess{.pid = 7, .used_mib = std::nullopt});
  EXPECT_THAT(FindDrift({g}, {Shared("a", {0}, 8192)}), IsEmpty());
  // What is known still counts.
  std::vector<GpuDrift> d = FindDrift({g}, {Shared("a", {0}, 4096)});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].reason, "GPU 0 (GPU-0): processes use at least 8000 MiB (1 of unknown memory), 4096 MiB booked by ml/a");
  // And it is a process: a GPU that no pod is booked on is in use.
  PhysicalGpu unknown_only = Gpu(1, {});
  unknown_only.processes.push_back(GpuProcess{.pid = 8});
  EXPECT_THAT(FindDrift({unknown_only}, {})[0].gpus, ElementsAre(1));
}

// A device of a ResourceSlice as the NVIDIA DRA driver publishes it: a GPU with its UUID, or a MIG
// device with its parent's.
dra::Device SliceDevice(const std::string& name, const std::string& key, const std::string& uuid) {
  dra::Device d{.name = name};
  d.attributes[key] = dra::AttributeValue{.kind = dra::AttributeValue::Kind::kString, .text = uuid};
  return d;
}

dra::ResourceClaim AllocatedClaim(const std::string& name, std::vector<std::string> devices) {
  dra::ResourceClaim c{.namespace_name = "ml", .name = name};
  c.allocation.emplace();
  for (const std::string& d : devices) {
    c.allocation->results.push_back(dra::DeviceResult{.request = "gpus", .id = {.driver = "gpu.nvidia.com", .pool = "n", .device = d}});
  }
  return c;
}

// On an nvidia-dra node the claims' pods use GPUs gpusched books nothing on: the GPUs their
// claims hold are theirs, the others are still checked.
TEST(Drift, GpusThatResourceClaimsHoldAreTheirPodsNotDrift) {
  dra::ResourceSlice slice{.name = "n-gpu", .driver = "gpu.nvidia.com", .pool = "n", .node_name = "n"};
  slice.devices = {SliceDevice("gpu-0", "uuid", "GPU-0"), SliceDevice("gpu-1", "gpu.nvidia.com/uuid", "GPU-1"),
                   SliceDevice("gpu-2-mig-1g", "parentUUID", "GPU-2"), SliceDevice("gpu-3", "uuid", "GPU-3")};
  dra::ResourceClaim admin = AllocatedClaim("admin", {"gpu-3"});
  admin.allocation->results[0].admin_access = true;  // monitoring access holds nothing
  std::vector<dra::ResourceClaim> claims = {AllocatedClaim("a", {"gpu-0", "gpu-1"}), AllocatedClaim("b", {"gpu-2-mig-1g"}),
                                            dra::ResourceClaim{.namespace_name = "ml", .name = "pending"}, admin};
  std::set<std::string> claimed = ClaimedGpuUuids(claims, {slice});
  EXPECT_THAT(claimed, ElementsAre("GPU-0", "GPU-1", "GPU-2"));
  std::vector<PhysicalGpu> gpus = {Gpu(0, {30000}), Gpu(1, {100}), Gpu(2, {5}), Gpu(3, {2000})};
  std::vector<GpuDrift> d = FindDrift(gpus, {}, claimed);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_THAT(d[0].gpus, ElementsAre(3));  // no claim holds GPU 3
  EXPECT_THAT(FindDrift({Gpu(0, {30000}), Gpu(1, {100})}, {}, claimed), IsEmpty());
}

}  // namespace drift_test
}  // namespace gpusched::agent
