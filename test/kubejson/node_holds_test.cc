#include "gpusched/kubejson/node_holds.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <climits>

#include "gpusched/json/json.h"
#include "gpusched/kubejson/node_bookings.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::kubejson {
namespace node_holds_test {

using ::testing::HasSubstr;

NodeHold Hold(std::string about, std::string holder, Placement placement, NodeMode mode) {
  return NodeHold{.about_uid = std::move(about),
                  .hold = {.pod_uid = std::move(holder),
                           .pod_namespace = "ml",
                           .pod_name = "train-0",
                           .node_name = "n1",
                           .mode = mode,
                           .placement = std::move(placement),
                           .origin = AllocationOrigin::kHeld,
                           .priority = INT32_MAX},
                  .at_ms = 1764470000000,
                  .ttl_s = 300};
}

TEST(NodeHolds, RoundTripsWholeSharedAndDevicePlacementsInUidOrder) {
  NodeHold whole = Hold("u3", "u3", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 2}, NodeMode::kNvidia);
  NodeHold shared = Hold("u1", "controller/rs-1", Placement{.kind = RequestKind::kMgpu}, NodeMode::kMgpu);
  shared.hold.placement.containers = {ContainerAssignment{.container = "main", .gpu_indices = {1}, .milli_per_gpu = 500, .mib_per_gpu = 4096}};
  shared.present = {"a", "b"};
  NodeHold devices = Hold("u2", "controller/rs-2", Placement{.kind = RequestKind::kDra}, NodeMode::kNvidiaDra);
  devices.hold.placement.devices = {"gpu.nvidia.com/n1/gpu-0", "gpu.nvidia.com/n1/gpu-1"};
  std::vector<NodeHold> in = {whole, shared, devices};
  std::string text = EncodeNodeHolds(in);
  EXPECT_EQ(text,
            R"({"u1":{"for":"controller/rs-1","pod":"ml/train-0","at":1764470000000,"seconds":300,"mode":"mgpu",)"
            R"("containers":[{"name":"main","gpus":[1],"milli":500,"mib":4096}],"present":["a","b"]},)"
            R"("u2":{"for":"controller/rs-2","pod":"ml/train-0","at":1764470000000,"seconds":300,"mode":"nvidia-dra",)"
            R"("devices":["gpu.nvidia.com/n1/gpu-0","gpu.nvidia.com/n1/gpu-1"]},)"
            R"("u3":{"for":"u3","pod":"ml/train-0","at":1764470000000,"seconds":300,"mode":"nvidia","gpus":2}})");
  StatusOr<std::vector<NodeHold>> out = ParseNodeHolds(text, "n1");
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(*out, (std::vector<NodeHold>{shared, devices, whole}));
  EXPECT_EQ(EncodeNodeHolds({}), "{}");
}

TEST(NodeHolds, MalformedEntriesNameThePodAndField) {
  struct Case {
    std::string text;
    std::string want;
  };
  std::string ok = R"("pod":"a/b","at":1,"seconds":60)";
  std::vector<Case> cases = {
      {"[]", "holds: want object, got array"},
      {R"({"u1":{"pod":"a/b","at":1,"seconds":60,"mode":"nvidia","gpus":1}})", R"(holds["u1"].for: missing)"},
      {R"({"u1":{"for":"u1","pod":"a/b","at":1,"mode":"nvidia","gpus":1}})", R"(holds["u1"].seconds: missing)"},
      {R"({"u1":{"for":"u1",)" + ok + R"(,"mode":"mig","gpus":1}})", R"(holds["u1"].mode: "mig" (want nvidia, nvidia-dra or mgpu))"},
      {R"({"u1":{"for":"u1",)" + ok + R"(,"mode":"nvidia-dra","devices":["gpu-0"]}})",
       R"(holds["u1"].devices[0]: want "driver/pool/device")"},
      {R"({"u1":{"for":"u1",)" + ok + R"(,"mode":"nvidia-dra"}})", R"(holds["u1"].devices: missing)"},
      {R"({"u1":{"for":"u1",)" + ok + R"(,"mode":"nvidia","gpus":1,"present":[7]}})", R"(holds["u1"].present[0]: want a pod UID)"},
      {R"({"u1":{"for":"u1","pod":"a/b","at":-1,"seconds":60,"mode":"nvidia","gpus":1}})", R"(holds["u1"].at: -1 is outside)"},
  };
  for (const Case& c : cases) {
    StatusOr<std::vector<NodeHold>> out = ParseNodeHolds(c.text, "n1");
    ASSERT_FALSE(out.ok()) << c.text;
    EXPECT_THAT(out.status().message(), HasSubstr(c.want)) << c.text;
  }
}

TEST(NodeHolds, BookingsStillRefuseDevices) {
  StatusOr<std::vector<NodeBooking>> out =
      ParseNodeBookings(R"({"u1":{"pod":"a/b","at":1,"mode":"nvidia-dra","devices":["d/p/x"]}})", "n1");
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr(R"(bookings["u1"].mode: "nvidia-dra" (want nvidia or mgpu))"));
}

TEST(NodeHolds, ANodeWithUnreadableHoldsTakesNoGpuPods) {
  rapidjson::Document doc;
  ASSERT_TRUE(json::Parse(R"({"metadata":{"name":"n1","annotations":{"gpusched.io/holds":"{\"u\":[]}"}},)"
                          R"("status":{"allocatable":{"nvidia.com/gpu":"8"}}})",
                          &doc)
                  .ok());
  StatusOr<Node> node = DecodeNode(doc, "Node");
  ASSERT_TRUE(node.ok());
  EXPECT_THAT(node->spec_error, HasSubstr(R"(annotation gpusched.io/holds: holds["u"]: want object, got array)"));
}

}  // namespace node_holds_test
}  // namespace gpusched::kubejson
