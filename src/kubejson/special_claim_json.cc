// File: special_claim_json.cc
//
// The JSON of KEP 5004's two writes: the special ResourceClaim to create (generateName, annotation,
// finalizer, controlling pod owner, one ExactCount request per container request) and the pod
// status patch naming it with the request mappings.
#include "gpusched/kubejson/special_claim_json.h"

#include <fmt/format.h>

#include "gpusched/json/json.h"

namespace gpusched::kubejson {
std::string SpecialClaimJson(const dra::SpecialClaim& special, const Pod& pod) {
  const dra::ResourceClaim& c = special.claim;
  std::string out = fmt::format(
      R"({{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{{"generateName":{},"namespace":{},)"
      R"("annotations":{{{}:"true"}},"finalizers":["resource.kubernetes.io/delete-protection"],)"
      R"("ownerReferences":[{{"apiVersion":"v1","kind":"Pod","name":{},"uid":{},"controller":true}}]}},)"
      R"("spec":{{"devices":{{"requests":[)",
      json::Quoted(c.name), json::Quoted(c.namespace_name), json::Quoted(kExtendedResourceClaimAnnotation), json::Quoted(pod.name), json::Quoted(pod.uid));
  for (size_t i = 0; i < c.requests.size(); ++i) {
    const dra::DeviceRequest& r = c.requests[i];
    if (i > 0) out += ',';
    out += fmt::format(R"({{"name":{},"exactly":{{"deviceClassName":{},"allocationMode":"ExactCount","count":{}}}}})",
                       json::Quoted(r.name), json::Quoted(r.exactly ? r.exactly->device_class : ""), r.exactly ? r.exactly->count : 0);
  }
  out += "]}}}";
  return out;
}

std::string ExtendedClaimStatusPatch(const dra::SpecialClaim& special, const std::string& claim_name, const Pod& pod) {
  std::string out = fmt::format(R"({{"metadata":{{"uid":{}}},"status":{{"extendedResourceClaimStatus":{{"resourceClaimName":{},)"
                                R"("requestMappings":[)",
                                json::Quoted(pod.uid), json::Quoted(claim_name));
  for (size_t i = 0; i < special.mappings.size(); ++i) {
    const dra::RequestMapping& m = special.mappings[i];
    if (i > 0) out += ',';
    out += fmt::format(R"({{"containerName":{},"resourceName":{},"requestName":{}}})", json::Quoted(m.container), json::Quoted(m.resource),
                       json::Quoted(m.request));
  }
  out += "]}}}";
  return out;
}

}  // namespace gpusched::kubejson
