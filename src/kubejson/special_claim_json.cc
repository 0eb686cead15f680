#include "gpusched/kubejson/special_claim_json.h"

#include <fmt/format.h>

#include "gpusched/json/json.h"

namespace gpusched::kubejson {
namespace {

std::string Quoted(std::string_view s) {
  std::string out;
  json::AppendString(&out, s);
  return out;
}

}  // namespace

std::string SpecialClaimJson(const dra::SpecialClaim& special, const Pod& pod) {
  const dra::ResourceClaim& c = special.claim;
  std::string out = fmt::format(
      R"({{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{{"generateName":{},"namespace":{},)"
      R"("annotations":{{{}:"true"}},"finalizers":["resource.kubernetes.io/delete-protection"],)"
      R"("ownerReferences":[{{"apiVersion":"v1","kind":"Pod","name":{},"uid":{},"controller":true}}]}},)"
      R"("spec":{{"devices":{{"requests":[)",
      Quoted(c.name), Quoted(c.namespace_name), Quoted(kExtendedResourceClaimAnnotation), Quoted(pod.name), Quoted(pod.uid));
  for (size_t i = 0; i < c.requests.size(); ++i) {
    const dra::DeviceRequest& r = c.requests[i];
    if (i > 0) out += ',';
    out += fmt::format(R"({{"name":{},"exactly":{{"deviceClassName":{},"allocationMode":"ExactCount","count":{}}}}})",
                       Quoted(r.name), Quoted(r.exactly ? r.exactly->device_class : ""), r.exactly ? r.exactly->count : 0);
  }
  out += "]}}}";
  return out;
}

std::string ExtendedClaimStatusPatch(const dra::SpecialClaim& special, const std::string& claim_name, const Pod& pod) {
  std::string out = fmt::format(R"({{"metadata":{{"uid":{}}},"status":{{"extendedResourceClaimStatus":{{"resourceClaimName":{},)"
                                R"("requestMappings":[)",
                                Quoted(pod.uid), Quoted(claim_name));
  for (size_t i = 0; i < special.mappings.size(); ++i) {
    const dra::RequestMapping& m = special.mappings[i];
    if (i > 0) out += ',';
    out += fmt::format(R"({{"containerName":{},"resourceName":{},"requestName":{}}})", Quoted(m.container), Quoted(m.resource),
                       Quoted(m.request));
  }
  out += "]}}}";
  return out;
}

}  // namespace gpusched::kubejson
