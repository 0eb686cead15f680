// The table of device kinds (model/node_mode.h): every mode that takes GPU pods has one row, and
// the label, the mode, the request kind and their names all come from it.
#include "gpusched/model/node_mode.h"

#include <gtest/gtest.h>

#include <set>

namespace gpusched {
namespace node_mode_test {

TEST(DeviceKinds, EachModeAndEachRequestKindHasExactlyOneRow) {
  std::set<NodeMode> modes;
  std::set<RequestKind> requests;
  for (const DeviceKind& k : DeviceKinds()) {
    EXPECT_TRUE(modes.insert(k.mode).second) << k.label;
    EXPECT_TRUE(requests.insert(k.request).second) << k.label;
  }
  EXPECT_EQ(modes, (std::set<NodeMode>{NodeMode::kNvidia, NodeMode::kNvidiaDra, NodeMode::kMgpu}));
  EXPECT_EQ(requests, (std::set<RequestKind>{RequestKind::kWholeGpu, RequestKind::kDra, RequestKind::kMgpu}));
  EXPECT_EQ(KindOf(RequestKind::kNone), nullptr);
  EXPECT_EQ(KindServing(NodeMode::kInvalid), nullptr);
}

TEST(DeviceKinds, LabelsModesAndRequestsRoundTripThroughTheTable) {
  for (const DeviceKind& k : DeviceKinds()) {
    EXPECT_EQ(ModeFromLabel(std::string(k.label)), k.mode);
    EXPECT_EQ(ModeName(k.mode), k.label);
    EXPECT_EQ(ModeServing(k.request), k.mode);
    EXPECT_EQ(RequestKindName(k.request), k.asks);
    EXPECT_EQ(KindOf(k.request), &k);
    EXPECT_EQ(KindServing(k.mode), &k);
  }
}

TEST(DeviceKinds, AnAbsentLabelIsNvidiaAndAnyOtherValueTakesNoGpuPods) {
  EXPECT_EQ(ModeFromLabel(std::nullopt), NodeMode::kNvidia);
  EXPECT_EQ(ModeFromLabel(std::string("")), NodeMode::kInvalid);
  EXPECT_EQ(ModeFromLabel(std::string("NVIDIA")), NodeMode::kInvalid);  // values are case-sensitive
  EXPECT_EQ(ModeName(NodeMode::kInvalid), "invalid");
  EXPECT_EQ(ModeServing(RequestKind::kNone), NodeMode::kInvalid);
  EXPECT_EQ(RequestKindName(RequestKind::kNone), "no GPU");
  EXPECT_EQ(KindOf(RequestKind::kWholeGpu)->short_name, "whole");
  EXPECT_EQ(KindOf(RequestKind::kMgpu)->short_name, "mgpu");
  EXPECT_EQ(KindOf(RequestKind::kDra)->short_name, "dra");
}

}  // namespace node_mode_test
}  // namespace gpusched
