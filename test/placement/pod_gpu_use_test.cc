#include "gpusched/placement/pod_gpu_use.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::placement {
namespace pod_gpu_use_test {

using ::testing::ElementsAre;

ContainerAssignment On(std::vector<int> gpus, int64_t milli, int64_t mib, int init = 0, bool sidecar = false) {
  return ContainerAssignment{.container = "c", .gpu_indices = std::move(gpus), .milli_per_gpu = milli,
                             .mib_per_gpu = mib, .init_position = init, .sidecar = sidecar};
}

TEST(PodGpuUse, OnePhaseAddsUp) {
  std::vector<ContainerAssignment> c = {On({0}, 300, 1024), On({0, 1}, 200, 512)};
  EXPECT_THAT(PodGpuUse(c), ElementsAre(GpuUse{.index = 0, .milli = 500, .mib = 1536, .instances = 2},
                                        GpuUse{.index = 1, .milli = 200, .mib = 512, .instances = 1}));
}

TEST(PodGpuUse, PhasesTakeTheLargest) {
  // init (position 1) 600 on GPU0; app 400 on GPU0 and 100 on GPU1.
  std::vector<ContainerAssignment> c = {On({0}, 600, 100, 1), On({0}, 400, 4096), On({1}, 100, 256)};
  EXPECT_THAT(PodGpuUse(c), ElementsAre(GpuUse{.index = 0, .milli = 600, .mib = 4096, .instances = 1},
                                        GpuUse{.index = 1, .milli = 100, .mib = 256, .instances = 1}));
}

TEST(PodGpuUse, OnlySidecarsDeclaredBeforeAnInitContainerRunBesideIt) {
  // sidecar A (1), init (2), sidecar B (3), app: init phase = A + init; app phase = A + B + app.
  std::vector<ContainerAssignment> c = {On({0}, 100, 0, 1, true), On({0}, 700, 0, 2), On({0}, 100, 0, 3, true),
                                        On({0}, 100, 0)};
  EXPECT_THAT(PodGpuUse(c), ElementsAre(GpuUse{.index = 0, .milli = 800, .mib = 0, .instances = 3}));
}

TEST(PodGpuUse, AWholeCardSharedWithinOnePhaseIsAConflict) {
  ContainerAssignment whole = On({0}, 1000, 0);
  whole.exclusive = true;
  EXPECT_TRUE(PodGpuUse(std::vector<ContainerAssignment>{whole, On({0}, 100, 0)})[0].conflict);
  // In different phases the GPU is the pod's, whole, in turn.
  ContainerAssignment init = whole;
  init.init_position = 1;
  std::vector<GpuUse> use = PodGpuUse(std::vector<ContainerAssignment>{init, On({0}, 100, 0)});
  EXPECT_FALSE(use[0].conflict);
  EXPECT_TRUE(use[0].exclusive);
}

}  // namespace pod_gpu_use_test
}  // namespace gpusched::placement
