#include "gpusched/kubejson/node_bookings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpusched/json/json.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::kubejson {
namespace node_bookings_test {

using ::testing::HasSubstr;

NodeBooking Whole(std::string uid, int64_t gpus, int64_t at) {
  return NodeBooking{.allocation = {.pod_uid = std::move(uid),
                                    .pod_namespace = "ml",
                                    .pod_name = "train",
                                    .node_name = "n1",
                                    .mode = NodeMode::kNvidia,
                                    .placement = {.kind = RequestKind::kWholeGpu, .whole_gpus = gpus},
                                    .origin = AllocationOrigin::kBooked},
                     .booked_at_ms = at};
}

NodeBooking Shared(std::string uid, int64_t at) {
  NodeBooking b = Whole(std::move(uid), 0, at);
  b.allocation.mode = NodeMode::kMgpu;
  b.allocation.placement = Placement{.kind = RequestKind::kMgpu};
  b.allocation.placement.containers = {
      ContainerAssignment{.container = "main", .gpu_indices = {1, 0}, .milli_per_gpu = 500, .mib_per_gpu = 8192},
      ContainerAssignment{.container = "side", .gpu_indices = {3}, .milli_per_gpu = 1000, .exclusive = true}};
  return b;
}

TEST(NodeBookings, RoundTripsWholeAndSharedPlacementsInUidOrder) {
  std::vector<NodeBooking> in = {Shared("u2", 1764470000123), Whole("u1", 2, 1764470000000)};
  std::string text = EncodeNodeBookings(in);
  EXPECT_EQ(text,
            R"({"u1":{"pod":"ml/train","at":1764470000000,"mode":"nvidia","gpus":2},)"
            R"("u2":{"pod":"ml/train","at":1764470000123,"mode":"mgpu","containers":[)"
            R"({"name":"main","gpus":[1,0],"milli":500,"mib":8192},)"
            R"({"name":"side","gpus":[3],"milli":1000,"mib":0,"exclusive":true}]}})");
  StatusOr<std::vector<NodeBooking>> out = ParseNodeBookings(text, "n1");
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0], in[1]);
  EXPECT_EQ((*out)[1], in[0]);
  EXPECT_EQ(EncodeNodeBookings({}), "{}");
}

TEST(NodeBookings, RoundTripsInitContainersAndSidecars) {
  NodeBooking b = Shared("u3", 1764470000200);
  b.allocation.placement.containers[0].init_position = 2;
  b.allocation.placement.containers[1].init_position = 1;
  b.allocation.placement.containers[1].sidecar = true;
  std::string text = EncodeNodeBookings({b});
  EXPECT_THAT(text, ::testing::HasSubstr(R"("mib":8192,"init":2})"));
  EXPECT_THAT(text, ::testing::HasSubstr(R"("exclusive":true,"init":1,"sidecar":true})"));
  StatusOr<std::vector<NodeBooking>> out = ParseNodeBookings(text, "n1");
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0], b);
}

TEST(NodeBookings, MalformedEntriesNameThePodAndField) {
  struct Case {
    std::string text;
    std::string want;
  };
  std::vector<Case> cases = {
      {"[]", "bookings: want object, got array"},
      {R"({"u1":{"pod":"train","at":1,"mode":"nvidia","gpus":1}})", R"(bookings["u1"].pod: "train" (want namespace/name))"},
      {R"({"u1":{"pod":"a/b","at":1,"mode":"mig","gpus":1}})", R"(bookings["u1"].mode: "mig")"},
      {R"({"u1":{"pod":"a/b","at":1,"mode":"nvidia"}})", R"(bookings["u1"].gpus: missing)"},
      {R"({"u1":{"pod":"a/b","at":-5,"mode":"nvidia","gpus":1}})", R"(bookings["u1"].at: -5 is outside)"},
      {R"({"u1":{"pod":"a/b","at":1,"mode":"mgpu","containers":[{"name":"c","gpus":[2000],"milli":10,"mib":1}]}})",
       R"(bookings["u1"].containers[0].gpus[0]: want a GPU index 0-1023)"},
      {R"({"u1":{"pod":"a/b","at":1,"mode":"mgpu","containers":[{"name":"c","gpus":[0],"milli":1001,"mib":1}]}})",
       R"(bookings["u1"].containers[0].milli: 1001 is outside 0-1000)"},
      {R"({"u1":{"pod":"a/b","at":1,"mode":"nvidia","gpus":1},"u1":{"pod":"a/b","at":1,"mode":"nvidia","gpus":1}})",
       R"(pod UID "u1" twice)"},
  };
  for (const Case& c : cases) {
    StatusOr<std::vector<NodeBooking>> out = ParseNodeBookings(c.text, "n1");
    ASSERT_FALSE(out.ok()) << c.text;
    EXPECT_THAT(out.status().message(), HasSubstr(c.want)) << c.text;
  }
}

TEST(NodeBookings, ANodeWithUnreadableBookingsTakesNoGpuPods) {
  rapidjson::Document doc;
  ASSERT_TRUE(json::Parse(R"({"metadata":{"name":"n1","annotations":{"gpusched.io/bookings":"{\"u\":7}"}},)"
                          R"("status":{"allocatable":{"nvidia.com/gpu":"8"}}})",
                          &doc)
                  .ok());
  StatusOr<Node> node = DecodeNode(doc, "Node");
  ASSERT_TRUE(node.ok());
  EXPECT_THAT(node->spec_error, HasSubstr(R"(annotation gpusched.io/bookings: bookings["u"]: want object, got number)"));
}

}  // namespace node_bookings_test
}  // namespace gpusched::kubejson
