// resource.k8s.io/v1 JSON into the DRA model, and allocation results back.
#include "gpusched/kubejson/dra_allocation_json.h"
#include "gpusched/kubejson/dra_objects.h"
#include "gpusched/json/json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::kubejson {
namespace dra_objects_test {

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

// Binding conditions (KEP 5007): copied into the results with the allocation's timestamp, and the
// drivers' device conditions in status.devices; written back as read.
TEST(DraObjects, BindingConditionsTheirTimestampAndTheDeviceConditionsRoundTrip) {
  StatusOr<dra::ResourceClaim> c = ParseResourceClaim(R"({"kind":"ResourceClaim","metadata":{"name":"c","namespace":"ml"},
    "spec":{"devices":{"requests":[{"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}},
    "status":{"allocation":{"devices":{"results":[{"request":"gpus","driver":"gpu.nvidia.com","pool":"n1","device":"gpu-0",
      "bindingConditions":["dra.example.com/attached"],"bindingFailureConditions":["dra.example.com/failed"]}]},
      "allocationTimestamp":"2026-12-02T10:00:00Z"},
      "devices":[{"driver":"gpu.nvidia.com","pool":"n1","device":"gpu-0","conditions":[
        {"type":"dra.example.com/attached","status":"True","reason":"Attached","message":"","lastTransitionTime":"2026-12-02T10:00:07Z"}]}]}})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const dra::DeviceResult& r = c->allocation->results[0];
  EXPECT_EQ(r.binding_conditions, std::vector<std::string>{"dra.example.com/attached"});
  EXPECT_EQ(r.binding_failure_conditions, std::vector<std::string>{"dra.example.com/failed"});
  EXPECT_EQ(c->allocation->allocation_timestamp_ms, int64_t{1796205600000});
  ASSERT_EQ(c->device_statuses.size(), 1u);
  EXPECT_EQ(c->device_statuses[0].conditions.at("dra.example.com/attached"), "True");
  std::string text;
  AppendAllocationResult(&text, *c->allocation);
  EXPECT_THAT(text, HasSubstr(R"("bindingConditions":["dra.example.com/attached"],"bindingFailureConditions":["dra.example.com/failed"])"));
  EXPECT_THAT(text, HasSubstr(R"("allocationTimestamp":"2026-12-02T10:00:00Z")"));
  rapidjson::Document d;
  ASSERT_TRUE(json::Parse(text, &d).ok()) << text;
  EXPECT_EQ(*DecodeAllocationResult(d, "allocation"), *c->allocation);
  // A timestamp that is not one is named.
  StatusOr<dra::ResourceClaim> bad = ParseResourceClaim(R"({"kind":"ResourceClaim","metadata":{"name":"c","namespace":"ml"},
    "spec":{"devices":{"requests":[]}},"status":{"allocation":{"devices":{"results":[]},"allocationTimestamp":"yesterday"}}})");
  EXPECT_THAT(bad.status().message(), HasSubstr(R"(allocationTimestamp: "yesterday" is not an RFC 3339 time)"));
}

// Kubernetes 1.32 serves resource.k8s.io/v1beta1 only: device fields under "basic", exact request
// fields on the request (k8s.io/api resource/v1beta1 types.go: Device.Basic, DeviceRequest).
TEST(DraObjects, ReadsTheV1beta1ShapesOfKubernetes132) {
  StatusOr<dra::ResourceSlice> s = ParseResourceSlice(R"({"apiVersion":"resource.k8s.io/v1beta1","kind":"ResourceSlice",
    "metadata":{"name":"n1-gpu"},"spec":{"driver":"gpu.nvidia.com","nodeName":"n1","pool":{"name":"n1","generation":1,
    "resourceSliceCount":1},"devices":[{"name":"gpu-0","basic":{"attributes":{"productName":{"string":"H200"}},
    "capacity":{"memory":{"value":"141Gi"}}}}]}})");
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->devices.size(), 1u);
  EXPECT_EQ(s->devices[0].attributes.at("productName").text, "H200");
  EXPECT_EQ(s->devices[0].capacity.at("memory").value_milli, (int64_t{141} << 30) * 1000);
  StatusOr<dra::ResourceClaim> c = ParseResourceClaim(R"({"apiVersion":"resource.k8s.io/v1beta1","kind":"ResourceClaim",
    "metadata":{"name":"one","namespace":"ml"},"spec":{"devices":{"requests":[{"name":"gpu",
    "deviceClassName":"gpu.nvidia.com","allocationMode":"ExactCount","count":2,
    "selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com'"}}]}]}}})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(c->requests[0].exactly.has_value());
  EXPECT_EQ(c->requests[0].exactly->device_class, "gpu.nvidia.com");
  EXPECT_EQ(c->requests[0].exactly->count, 2);
  EXPECT_EQ(c->requests[0].exactly->selectors.size(), 1u);
}

// 1.33 adds v1beta2, whose shapes are v1's.
TEST(DraObjects, ReadsV1beta2AsV1) {
  StatusOr<dra::ResourceClaim> c = ParseResourceClaim(R"({"apiVersion":"resource.k8s.io/v1beta2","kind":"ResourceClaim",
    "metadata":{"name":"one","namespace":"ml"},"spec":{"devices":{"requests":[{"name":"gpu",
    "exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->requests[0].exactly->device_class, "gpu.nvidia.com");
}

TEST(DraObjects, RefusesVersionsBefore132NamingThem) {
  EXPECT_THAT(ParseResourceSlice(R"({"apiVersion":"resource.k8s.io/v1alpha3","metadata":{"name":"s"},"spec":{}})")
                  .status()
                  .message(),
              HasSubstr("ResourceSlice s.apiVersion: \"resource.k8s.io/v1alpha3\" is not supported"));
  // A v1 claim with a v1beta1-shaped request is an error, not a silently empty request.
  EXPECT_THAT(ParseResourceClaim(R"({"apiVersion":"resource.k8s.io/v1","metadata":{"name":"c","namespace":"ml"},
    "spec":{"devices":{"requests":[{"name":"r","deviceClassName":"gpu.nvidia.com"}]}}})")
                  .status()
                  .message(),
              HasSubstr("exactly one of exactly and firstAvailable must be set"));
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

}  // namespace dra_objects_test
}  // namespace gpusched::kubejson
