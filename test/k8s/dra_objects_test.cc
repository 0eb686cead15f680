// resource.k8s.io/v1 JSON into the DRA model, and allocation results back.
#include "gpusched/k8s/dra_objects.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::k8s {
namespace {

using ::testing::HasSubstr;

TEST(DraObjects, AClaimWithEveryRequestShapeDecodes) {
  StatusOr<dra::ResourceClaim> c = ParseResourceClaim(R"({"kind":"ResourceClaim","metadata":{"name":"pair","namespace":"ml",
    "uid":"u1","resourceVersion":"42","finalizers":["f"],"ownerReferences":[{"kind":"Pod","uid":"p1","controller":true}]},
    "spec":{"devices":{"requests":[
      {"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com","count":2,"allocationMode":"ExactCount",
        "selectors":[{"cel":{"expression":"device.driver == 'x'"}}],
        "tolerations":[{"key":"gpu.nvidia.com/xid","operator":"Exists","effect":"NoSchedule"}],
        "capacity":{"requests":{"memory":"40Gi"}}}},
      {"name":"aux","firstAvailable":[{"name":"mig","deviceClassName":"mig.nvidia.com","count":1},
                                      {"name":"gpu","deviceClassName":"gpu.nvidia.com","allocationMode":"All","adminAccess":true}]}],
      "constraints":[{"requests":["gpus"],"matchAttribute":"resource.kubernetes.io/pcieRoot"}],
      "config":[{"requests":["gpus"],"opaque":{"driver":"gpu.nvidia.com","parameters":{"kind":"GpuConfig"}}}]}},
    "status":{"allocation":{"devices":{"results":[{"request":"gpus","driver":"gpu.nvidia.com","pool":"n1","device":"gpu-0",
      "shareID":"s1","consumedCapacity":{"memory":"40Gi"}}]},
      "nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]}},
      "reservedFor":[{"resource":"pods","name":"p","uid":"p1"}]}})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->owner_pod_uid, "p1");
  EXPECT_EQ(c->finalizers, std::vector<std::string>{"f"});
  ASSERT_EQ(c->requests.size(), 2u);
  EXPECT_EQ(c->requests[0].exactly->count, 2);
  EXPECT_EQ(c->requests[0].exactly->tolerations[0].op, "Exists");
  EXPECT_EQ(c->requests[0].exactly->capacity_requests_milli.at("memory"), (int64_t{40} << 30) * 1000);
  EXPECT_EQ(c->requests[1].first_available[1].allocation_mode, "All");
  EXPECT_TRUE(*c->requests[1].first_available[1].admin_access);
  EXPECT_EQ(c->constraints[0].match_attribute, "resource.kubernetes.io/pcieRoot");
  EXPECT_EQ(c->configs[0].opaque.parameters_json, R"({"kind":"GpuConfig"})");
  ASSERT_TRUE(c->allocation.has_value());
  EXPECT_EQ(c->allocation->results[0].share_id, "s1");
  EXPECT_EQ(c->reserved_for[0].uid, "p1");

  // Encoded back, the allocation decodes to the same thing.
  std::string text;
  AppendAllocationResult(&text, *c->allocation);
  rapidjson::Document d;
  ASSERT_TRUE(json::Parse(text, &d).ok()) << text;
  StatusOr<dra::AllocationResult> again = DecodeAllocationResult(d, "allocation");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(*again, *c->allocation);
}

TEST(DraObjects, MalformedObjectsNameTheFieldAndTheValue) {
  EXPECT_THAT(ParseResourceSlice(R"({"metadata":{"name":"s"},"spec":{"driver":"d","pool":{"name":"p","resourceSliceCount":1},
    "nodeName":"n","devices":[{"name":"a","capacity":{"memory":{"value":"12 apples"}}}]}})").status().message(),
              HasSubstr("ResourceSlice s.spec.devices[0].capacity[\"memory\"].value"));
  EXPECT_THAT(ParseResourceSlice(R"({"metadata":{"name":"s"},"spec":{"driver":"d","pool":{"name":"p","resourceSliceCount":1},
    "nodeName":"n","allNodes":true}})").status().message(),
              HasSubstr("exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection"));
  EXPECT_THAT(ParseResourceClaim(R"({"metadata":{"name":"c","namespace":"ml"},"spec":{"devices":{"requests":[{"name":"r"}]}}})")
                  .status().message(),
              HasSubstr("ResourceClaim ml/c.spec.devices.requests[0]: exactly one of exactly and firstAvailable"));
  EXPECT_THAT(ParseDeviceClass(R"({"metadata":{"name":"k"},"spec":{"selectors":[{"cel":{"expression":7}}]}})").status().message(),
              HasSubstr("DeviceClass k.spec.selectors[0].cel.expression"));
  EXPECT_THAT(ParseResourceSlice(R"({"metadata":{"name":"s"},"spec":{"driver":"d","pool":{"name":"p","resourceSliceCount":1},
    "nodeSelector":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"Like"}]}]}}})").status().message(),
              HasSubstr("\"Like\" is not a node selector operator"));
}

}  // namespace
}  // namespace gpusched::k8s
