// The registry of kinds (placement/kinds.h): every built-in kind is found by its mode and its
// request kind, a registered kind joins the table of device kinds and the label lookup, and a
// registration that would make two kinds answer for one label, mode or request is refused.
#include "gpusched/placement/kinds.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpusched/placement/kinds/counted.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::placement {
namespace kinds_test {

using ::testing::HasSubstr;

class StubKind final : public CountedKind {
 public:
  explicit StubKind(DeviceKind row) : CountedKind(row) {}
  bool Asks(const Pod& pod) const override { return Requested(pod, nullptr) > 0; }
  int64_t Requested(const Pod& pod, Violations* invalid) const override {
    return AggregateLikeKubernetes(pod, [](const Container& c) { return c.other_requests.Get("example.com/stub"); });
  }
};

DeviceKind StubRow(uint8_t value, std::string_view label) {
  return DeviceKind{.mode = static_cast<NodeMode>(value), .label = label, .request = static_cast<RequestKind>(value),
                    .short_name = "stub", .asks = "example.com/stub", .payload = Payload::kCount};
}

TEST(Kinds, EveryBuiltInKindIsFoundByItsModeAndItsRequestKind) {
  for (const DeviceKind& row : DeviceKinds()) {
    ASSERT_NE(KindFor(row.mode), nullptr) << row.label;
    EXPECT_EQ(KindFor(row.mode), KindFor(row.request)) << row.label;
    EXPECT_EQ(KindFor(row.mode)->row().label, row.label);
  }
  EXPECT_EQ(KindFor(NodeMode::kInvalid), nullptr);
  EXPECT_EQ(KindFor(RequestKind::kNone), nullptr);
  EXPECT_EQ(AllKinds().size(), DeviceKinds().size());
}

TEST(Kinds, ARegisteredKindIsReadFromPodsAndSelectedByItsLabel) {
  ASSERT_TRUE(RegisterKind(std::make_unique<StubKind>(StubRow(9, "stub"))).ok());
  EXPECT_EQ(ModeFromLabel(std::string("stub")), static_cast<NodeMode>(9));
  EXPECT_EQ(ModeName(static_cast<NodeMode>(9)), "stub");
  EXPECT_THAT(LabelValues(), HasSubstr("mgpu or stub"));

  Pod pod{.name = "p", .containers = {Container{.name = "c"}}};
  pod.containers[0].other_requests.Add("example.com/stub", 3);
  PodRequest request = AnalyzePod(pod);
  EXPECT_EQ(request.kind, static_cast<RequestKind>(9));
  EXPECT_EQ(request.whole_gpus, 3);
  EXPECT_TRUE(request.device_plugin());

  // A pod that asks two kinds for GPUs is refused, naming both.
  pod.containers[0].limits.nvidia_gpus = 1;
  EXPECT_EQ(AnalyzePod(pod).invalid_reason, "pod mixes nvidia.com/gpu and example.com/stub requests; a pod uses one kind of GPU");
}

TEST(Kinds, ARegistrationThatWouldMakeTwoKindsAnswerForOneThingIsRefused) {
  EXPECT_FALSE(RegisterKind(std::make_unique<StubKind>(StubRow(10, "nvidia"))).ok());  // label taken
  DeviceKind same_mode = StubRow(11, "other");
  same_mode.mode = NodeMode::kMgpu;
  EXPECT_FALSE(RegisterKind(std::make_unique<StubKind>(same_mode)).ok());
  DeviceKind no_gpu = StubRow(12, "none");
  no_gpu.request = RequestKind::kNone;
  EXPECT_FALSE(RegisterKind(std::make_unique<StubKind>(no_gpu)).ok());
  EXPECT_FALSE(RegisterKind(std::make_unique<StubKind>(StubRow(16, "wide"))).ok());  // PodUse keeps 4 bits
  EXPECT_FALSE(RegisterKind(std::make_unique<StubKind>(StubRow(13, ""))).ok());  // "" is no mode
  EXPECT_FALSE(RegisterKind(std::make_unique<StubKind>(StubRow(13, "invalid"))).ok());
  DeviceKind claims = StubRow(14, "claims2");
  claims.payload = Payload::kDevices;  // one kind serves claims
  EXPECT_FALSE(RegisterKind(std::make_unique<StubKind>(claims)).ok());
  for (std::string_view label : {"other", "none", "wide", "claims2"}) EXPECT_EQ(ModeFromLabel(std::string(label)), NodeMode::kInvalid);
}

}  // namespace kinds_test
}  // namespace gpusched::placement
