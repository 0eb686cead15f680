// The H200 of shared/fixtures (real nvidia-smi output) as a partitionable DRA device: its MIG
// profiles and memory-slice placements become counters, and the allocator keeps a full GPU and
// its MIG devices, or MIG devices on overlapping slices, from both being allocated.
#include "gpusched/dra/mig.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "gpusched/dra/allocator.h"

namespace gpusched::dra {
namespace mig_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(GPUSCHED_TEST_DATA_DIR) + "/nvidia-h200/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<MigProfile> H200Profiles() {
  StatusOr<std::vector<MigProfile>> p = ParseMigProfiles(Fixture("nvidia-smi-mig-lgip.txt"), Fixture("nvidia-smi-mig-lgipp.txt"));
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? *p : std::vector<MigProfile>{};
}

// The H200 as nvidia-smi --query-gpu reports it.
MigGpu H200() {
  return MigGpu{.index = 0, .uuid = "GPU-0fddc4db-fc26-aaba-2b3c-03d2db73746c", .product = "NVIDIA H200", .memory_mib = 143771,
                .driver_version = "580.159.4"};
}

TEST(MigProfiles, TheH200sProfilesAndPlacementsAreRead) {
  std::vector<MigProfile> p = H200Profiles();
  ASSERT_EQ(p.size(), 7u);
  EXPECT_EQ(p[0].name, "1g.18gb");
  EXPECT_EQ(p[0].id, 19);
  EXPECT_EQ(p[0].memory_mib, 16384);
  EXPECT_EQ(p[0].multiprocessors, 16);
  EXPECT_THAT(p[0].starts, ElementsAre(0, 1, 2, 3, 4, 5, 6));
  EXPECT_EQ(p[0].slices, 1);
  EXPECT_EQ(p[1].name, "1g.18gb+me");
  EXPECT_EQ(p[1].ofa_engines, 1);
  EXPECT_THAT(p[4].starts, ElementsAre(0, 4));  // 3g.71gb
  EXPECT_EQ(p[4].slices, 4);
  EXPECT_EQ(p[6].name, "7g.141gb");
  EXPECT_EQ(p[6].multiprocessors, 132);
  EXPECT_EQ(p[6].copy_engines, 8);
  EXPECT_EQ(p[6].slices, 8);
  EXPECT_FALSE(ParseMigProfiles("|   0  MIG 1g.18gb  x  7/7  16.00  No  16  1  0 |", "").ok());
}

struct H200Node {
  H200Node() : slice(PartitionableGpuSlice("h200-1", H200(), H200Profiles())), index({slice}) {
    classes["mig.nvidia.com"] = DeviceClass{.name = "mig.nvidia.com",
                                            .selectors = {"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"}};
    classes["gpu.nvidia.com"] = DeviceClass{.name = "gpu.nvidia.com",
                                            .selectors = {"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}};
  }

  // Claims, each {class, profile ("" = any), count}; returns the outcome and the picks.
  AllocatorOutcome Allocate(const std::vector<std::tuple<std::string, std::string, int>>& wants) {
    claims.clear();
    for (size_t i = 0; i < wants.size(); ++i) {
      auto [cls, profile, count] = wants[i];
      ExactRequest r{.device_class = cls, .count = count};
      if (!profile.empty()) r.selectors = {"device.attributes['gpu.nvidia.com'].profile == '" + profile + "'"};
      claims.push_back(ResourceClaim{.namespace_name = "ml", .name = "c" + std::to_string(i), .requests = {DeviceRequest{.name = "r", .exactly = r}}});
    }
    AllocatorInput in{.node = &node, .slices = &index, .classes = &classes, .allocated = &allocated, .programs = &programs};
    for (const ResourceClaim& c : claims) in.claims.push_back(&c);
    return dra::Allocate(in);
  }

  static std::vector<std::string> Picks(const AllocatorOutcome& out) {
    std::vector<std::string> names;
    for (const AllocationResult& a : out.results) {
      for (const DeviceResult& r : a.results) names.push_back(r.id.device);
    }
    return names;
  }

  ResourceSlice slice;
  SliceIndex index;
  std::map<std::string, DeviceClass, std::less<>> classes;
  std::vector<ResourceClaim> claims;
  AllocatedDevices allocated;
  cel::ProgramCache programs;
  NodeInfo node{.name = "h200-1"};
};

TEST(MigPartitionable, TheSliceHoldsTheFullGpuEveryPlacementAndTheirCounters) {
  ResourceSlice s = PartitionableGpuSlice("h200-1", H200(), H200Profiles());
  EXPECT_EQ(s.devices.size(), 1u + 7 + 7 + 4 + 3 + 2 + 1 + 1);
  EXPECT_EQ(s.devices[0].name, "gpu-0");
  EXPECT_EQ(s.devices[1].name, "gpu-0-mig-1g18gb-19-0");
  ASSERT_EQ(s.shared_counters.size(), 1u);
  EXPECT_EQ(s.shared_counters[0].name, "gpu-0-counter-set");
  EXPECT_EQ(s.shared_counters[0].counters_milli.at("multiprocessors"), 132'000);
  EXPECT_EQ(s.shared_counters[0].counters_milli.at("memory-slice-7"), 1000);
  EXPECT_EQ(s.shared_counters[0].counters_milli.size(), 6u + 1 + 8);
}

TEST(MigPartitionable, SevenSmallestSlicesFitAndAnEighthDoesNot) {
  H200Node h;
  AllocatorOutcome out = h.Allocate({{"mig.nvidia.com", "1g.18gb", 7}});
  ASSERT_EQ(out.kind, AllocatorOutcome::Kind::kAllocated) << out.reason;
  EXPECT_EQ(H200Node::Picks(out).size(), 7u);
  EXPECT_EQ(h.Allocate({{"mig.nvidia.com", "1g.18gb", 8}}).kind, AllocatorOutcome::Kind::kUnschedulable);
}

TEST(MigPartitionable, AFullGpuAndItsMigDevicesAreNeverBothAllocated) {
  H200Node h;
  // In one pod: a MIG slice and the full GPU cannot both be had.
  EXPECT_EQ(h.Allocate({{"mig.nvidia.com", "1g.18gb", 1}, {"gpu.nvidia.com", "", 1}}).kind, AllocatorOutcome::Kind::kUnschedulable);
  // Across pods: with a MIG slice allocated, the full GPU is not available, and the other way.
  h.allocated.exclusive.insert(DeviceId{"gpu.nvidia.com", "h200-1", "gpu-0-mig-3g71gb-9-4"});
  AllocatorOutcome out = h.Allocate({{"gpu.nvidia.com", "", 1}});
  EXPECT_EQ(out.kind, AllocatorOutcome::Kind::kUnschedulable);
  EXPECT_THAT(out.reason, HasSubstr("shared counters"));
  h.allocated = {};
  h.allocated.exclusive.insert(DeviceId{"gpu.nvidia.com", "h200-1", "gpu-0"});
  EXPECT_EQ(h.Allocate({{"mig.nvidia.com", "", 1}}).kind, AllocatorOutcome::Kind::kUnschedulable);
}

TEST(MigPartitionable, MemorySlicePlacementsDecideWhichMixesFit) {
  H200Node h;
  // 4g.71gb takes slices 0-3, so a 3g.71gb goes to 4-7.
  AllocatorOutcome out = h.Allocate({{"mig.nvidia.com", "4g.71gb", 1}, {"mig.nvidia.com", "3g.71gb", 1}});
  ASSERT_EQ(out.kind, AllocatorOutcome::Kind::kAllocated) << out.reason;
  EXPECT_THAT(H200Node::Picks(out), ElementsAre("gpu-0-mig-4g71gb-5-0", "gpu-0-mig-3g71gb-9-4"));
  // Two 3g.71gb use all eight slices: nothing else fits beside them.
  EXPECT_EQ(h.Allocate({{"mig.nvidia.com", "3g.71gb", 2}}).kind, AllocatorOutcome::Kind::kAllocated);
  EXPECT_EQ(h.Allocate({{"mig.nvidia.com", "3g.71gb", 2}, {"mig.nvidia.com", "1g.18gb", 1}}).kind,
            AllocatorOutcome::Kind::kUnschedulable);
  // Three 2g.35gb (slices 0-5) and a 1g.18gb on slice 6.
  out = h.Allocate({{"mig.nvidia.com", "2g.35gb", 3}, {"mig.nvidia.com", "1g.18gb", 1}});
  ASSERT_EQ(out.kind, AllocatorOutcome::Kind::kAllocated) << out.reason;
  EXPECT_EQ(H200Node::Picks(out).back(), "gpu-0-mig-1g18gb-19-6");
}

}  // namespace mig_test
}  // namespace gpusched::dra
