// File: dra_claims.cc
//
// dra_objects.h's ResourceClaim half: spec (requests in v1beta1's flat or v1's
// exactly/firstAvailable shapes, constraints, config), owner and status (allocation, reservedFor,
// device conditions). dra_objects.cc decodes the other kinds.
#include "gpusched/kubejson/dra_objects.h"

#include <fmt/format.h>

#include "dra_fields.h"
#include "gpusched/common/time_format.h"

namespace gpusched::kubejson {

using rapidjson::Value;
using namespace gpusched::dra;
using namespace dra_fields;

StatusOr<AllocationResult> DecodeAllocationResult(const Value& a, std::string_view path) {
  if (!a.IsObject()) return json::WrongType(path, "object", a);
  AllocationResult out;
  const Value* devices = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(a, "devices", path, &devices));
  std::string dpath = fmt::format("{}.devices", path);
  const Value* results = nullptr;
  if (devices != nullptr) GPUSCHED_RETURN_IF_ERROR(json::FindArray(*devices, "results", dpath, &results));
  for (rapidjson::SizeType i = 0; results != nullptr && i < results->Size(); ++i) {
    std::string rpath = fmt::format("{}.results[{}]", dpath, i);
    const Value& r = (*results)[i];
    if (!r.IsObject()) return json::WrongType(rpath, "object", r);
    DeviceResult d;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(r, "request", rpath, &d.request));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(r, "driver", rpath, &d.id.driver));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(r, "pool", rpath, &d.id.pool));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(r, "device", rpath, &d.id.device));
    GPUSCHED_RETURN_IF_ERROR(json::ReadBool(r, "adminAccess", rpath, &d.admin_access));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(r, "shareID", rpath, &d.share_id));
    GPUSCHED_RETURN_IF_ERROR(DecodeTolerations(r, rpath, &d.tolerations));
    GPUSCHED_RETURN_IF_ERROR(json::ReadStrings(r, "bindingConditions", rpath, &d.binding_conditions));
    GPUSCHED_RETURN_IF_ERROR(json::ReadStrings(r, "bindingFailureConditions", rpath, &d.binding_failure_conditions));
    const Value* consumed = nullptr;
    GPUSCHED_RETURN_IF_ERROR(json::FindObject(r, "consumedCapacity", rpath, &consumed));
    for (auto it = consumed == nullptr ? Value::ConstMemberIterator() : consumed->MemberBegin(); consumed && it != consumed->MemberEnd(); ++it) {
      std::string key(json::View(it->name));
      GPUSCHED_RETURN_IF_ERROR(ReadQuantity(it->value, fmt::format("{}.consumedCapacity[\"{}\"]", rpath, key),
                                            &d.consumed_capacity_milli[key]));
    }
    if (d.id.driver.empty() || d.id.pool.empty() || d.id.device.empty()) {
      return InvalidArgumentError(fmt::format("{}: driver, pool and device are required", rpath));
    }
    out.results.push_back(std::move(d));
  }
  GPUSCHED_RETURN_IF_ERROR(DecodeNodeSelector(a, "nodeSelector", path, &out.node_selector));
  std::string at;
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(a, "allocationTimestamp", path, &at));
  if (!at.empty()) {
    out.allocation_timestamp_ms = ParseRfc3339(at);
    if (!out.allocation_timestamp_ms) {
      return InvalidArgumentError(fmt::format("{}.allocationTimestamp: \"{}\" is not an RFC 3339 time", path, at));
    }
  }
  return out;
}

namespace {

// The controlling Pod owner (a claim generated from a template), into out->owner_pod_uid.
Status DecodeClaimOwner(const Value& meta, const std::string& path, ResourceClaim* out) {
  const Value* owners = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(meta, "ownerReferences", path + ".metadata", &owners));
  for (rapidjson::SizeType i = 0; owners != nullptr && i < owners->Size(); ++i) {
    const Value& o = (*owners)[i];
    if (!o.IsObject()) continue;
    std::string kind, uid;
    bool controller = false;
    std::string opath = fmt::format("{}.metadata.ownerReferences[{}]", path, i);
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(o, "kind", opath, &kind));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(o, "uid", opath, &uid));
    GPUSCHED_RETURN_IF_ERROR(json::ReadBool(o, "controller", opath, &controller));
    if (kind == "Pod" && controller) out->owner_pod_uid = uid;
  }
  return OkStatus();
}

// One entry of spec.devices.requests. `version` picks the shape: resource.k8s.io/v1beta1
// (Kubernetes 1.32, 1.33) has the exact request's fields on the request itself; v1beta2 and v1
// nest them under "exactly".
Status DecodeClaimRequest(const Value& r, const std::string& rpath, std::string_view version, DeviceRequest* req) {
  if (!r.IsObject()) return json::WrongType(rpath, "object", r);
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(r, "name", rpath, &req->name));
  const Value* exactly = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(r, "exactly", rpath, &exactly));
  if (exactly != nullptr) {
    req->exactly.emplace();
    GPUSCHED_RETURN_IF_ERROR(DecodeExact(*exactly, rpath + ".exactly", false, &*req->exactly));
  }
  const Value* first = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(r, "firstAvailable", rpath, &first));
  for (rapidjson::SizeType k = 0; first != nullptr && k < first->Size(); ++k) {
    ExactRequest sub;
    GPUSCHED_RETURN_IF_ERROR(DecodeExact((*first)[k], fmt::format("{}.firstAvailable[{}]", rpath, k), true, &sub));
    req->first_available.push_back(std::move(sub));
  }
  bool flat = version == kV1beta1 || (version.empty() && json::Find(r, "deviceClassName") != nullptr);
  if (flat && exactly == nullptr && first == nullptr) {
    req->exactly.emplace();
    GPUSCHED_RETURN_IF_ERROR(DecodeExact(r, rpath, false, &*req->exactly));
  }
  if (req->exactly.has_value() == !req->first_available.empty()) {
    return InvalidArgumentError(fmt::format("{}: exactly one of exactly and firstAvailable must be set", rpath));
  }
  return OkStatus();
}

Status DecodeClaimConstraints(const Value& devices, const std::string& dp, ResourceClaim* c) {
  const Value* constraints = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(devices, "constraints", dp, &constraints));
  for (rapidjson::SizeType i = 0; constraints != nullptr && i < constraints->Size(); ++i) {
    std::string kpath = fmt::format("{}.constraints[{}]", dp, i);
    const Value& k = (*constraints)[i];
    if (!k.IsObject()) return json::WrongType(kpath, "object", k);
    DeviceConstraint dc;
    GPUSCHED_RETURN_IF_ERROR(json::ReadStrings(k, "requests", kpath, &dc.requests));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(k, "matchAttribute", kpath, &dc.match_attribute));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(k, "distinctAttribute", kpath, &dc.distinct_attribute));
    c->constraints.push_back(std::move(dc));
  }
  const Value* config = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(devices, "config", dp, &config));
  for (rapidjson::SizeType i = 0; config != nullptr && i < config->Size(); ++i) {
    std::string cpath = fmt::format("{}.config[{}]", dp, i);
    ClaimConfig cc;
    if (!(*config)[i].IsObject()) return json::WrongType(cpath, "object", (*config)[i]);
    GPUSCHED_RETURN_IF_ERROR(json::ReadStrings((*config)[i], "requests", cpath, &cc.requests));
    GPUSCHED_RETURN_IF_ERROR(DecodeOpaque((*config)[i], cpath, &cc.opaque));
    c->configs.push_back(std::move(cc));
  }
  return OkStatus();
}

// spec.devices: requests, constraints, config.
Status DecodeClaimSpec(const Value& v, const std::string& path, std::string_view version, ResourceClaim* c) {
  const Value* spec = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "spec", path, &spec));
  const Value* devices = nullptr;
  if (spec != nullptr) GPUSCHED_RETURN_IF_ERROR(json::FindObject(*spec, "devices", path + ".spec", &devices));
  if (devices == nullptr) return OkStatus();
  std::string dp = path + ".spec.devices";
  const Value* requests = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(*devices, "requests", dp, &requests));
  for (rapidjson::SizeType i = 0; requests != nullptr && i < requests->Size(); ++i) {
    DeviceRequest req;
    GPUSCHED_RETURN_IF_ERROR(DecodeClaimRequest((*requests)[i], fmt::format("{}.requests[{}]", dp, i), version, &req));
    c->requests.push_back(std::move(req));
  }
  return DecodeClaimConstraints(*devices, dp, c);
}

// status.devices: the drivers' conditions of allocated devices (binding conditions).
Status DecodeDeviceStatuses(const Value& status, const std::string& path, ResourceClaim* c) {
  const Value* devices = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(status, "devices", path, &devices));
  for (rapidjson::SizeType i = 0; devices != nullptr && i < devices->Size(); ++i) {
    std::string dpath = fmt::format("{}.devices[{}]", path, i);
    const Value& d = (*devices)[i];
    if (!d.IsObject()) return json::WrongType(dpath, "object", d);
    AllocatedDeviceStatus out;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(d, "driver", dpath, &out.id.driver));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(d, "pool", dpath, &out.id.pool));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(d, "device", dpath, &out.id.device));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(d, "shareID", dpath, &out.share_id));
    const Value* conditions = nullptr;
    GPUSCHED_RETURN_IF_ERROR(json::FindArray(d, "conditions", dpath, &conditions));
    for (rapidjson::SizeType k = 0; conditions != nullptr && k < conditions->Size(); ++k) {
      std::string cpath = fmt::format("{}.conditions[{}]", dpath, k);
      const Value& cond = (*conditions)[k];
      if (!cond.IsObject()) return json::WrongType(cpath, "object", cond);
      std::string type, value;
      GPUSCHED_RETURN_IF_ERROR(json::ReadString(cond, "type", cpath, &type));
      GPUSCHED_RETURN_IF_ERROR(json::ReadString(cond, "status", cpath, &value));
      out.conditions[type] = value;
    }
    c->device_statuses.push_back(std::move(out));
  }
  return OkStatus();
}

// status: allocation, reservedFor and devices.
Status DecodeClaimStatus(const Value& v, const std::string& path, ResourceClaim* c) {
  const Value* status = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "status", path, &status));
  if (status == nullptr) return OkStatus();
  const Value* allocation = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(*status, "allocation", path + ".status", &allocation));
  if (allocation != nullptr) {
    GPUSCHED_ASSIGN_OR_RETURN(AllocationResult a, DecodeAllocationResult(*allocation, path + ".status.allocation"));
    c->allocation = std::move(a);
  }
  const Value* reserved = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(*status, "reservedFor", path + ".status", &reserved));
  for (rapidjson::SizeType i = 0; reserved != nullptr && i < reserved->Size(); ++i) {
    std::string rpath = fmt::format("{}.status.reservedFor[{}]", path, i);
    const Value& r = (*reserved)[i];
    if (!r.IsObject()) return json::WrongType(rpath, "object", r);
    ConsumerRef ref;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(r, "apiGroup", rpath, &ref.api_group));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(r, "resource", rpath, &ref.resource));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(r, "name", rpath, &ref.name));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(r, "uid", rpath, &ref.uid));
    c->reserved_for.push_back(std::move(ref));
  }
  return DecodeDeviceStatuses(*status, path + ".status", c);
}

}  // namespace

StatusOr<ResourceClaim> DecodeClaimTemplate(const Value& v) {
  ResourceClaim named;
  std::string path;
  GPUSCHED_RETURN_IF_ERROR(ReadMeta(v, "ResourceClaimTemplate", &named.name, &named.namespace_name, &path));
  const Value* outer = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "spec", path, &outer));
  const Value* spec = nullptr;
  if (outer != nullptr) GPUSCHED_RETURN_IF_ERROR(json::FindObject(*outer, "spec", path + ".spec", &spec));
  if (spec == nullptr) return InvalidArgumentError(path + ".spec.spec: missing");
  rapidjson::Document claim(rapidjson::kObjectType);
  auto& a = claim.GetAllocator();
  Value meta(rapidjson::kObjectType);
  meta.AddMember("name", Value(named.name.c_str(), a), a);
  meta.AddMember("namespace", Value(named.namespace_name.c_str(), a), a);
  Value copy;
  copy.CopyFrom(*spec, a);
  const Value* version = json::Find(v, "apiVersion");
  claim.AddMember("apiVersion", version != nullptr && version->IsString() ? Value(version->GetString(), a) : Value("resource.k8s.io/v1"), a);
  claim.AddMember("kind", "ResourceClaim", a);
  claim.AddMember("metadata", meta, a);
  claim.AddMember("spec", copy, a);
  StatusOr<ResourceClaim> decoded = DecodeResourceClaim(claim);
  if (!decoded.ok()) return InvalidArgumentError(fmt::format("ResourceClaimTemplate {}/{}: {}", named.namespace_name, named.name, decoded.status().message()));
  return decoded;
}

StatusOr<ResourceClaim> DecodeResourceClaim(const Value& v) {
  ResourceClaim c;
  std::string path;
  GPUSCHED_RETURN_IF_ERROR(ReadMeta(v, "ResourceClaim", &c.name, &c.namespace_name, &path));
  std::string version;
  GPUSCHED_RETURN_IF_ERROR(ReadDraVersion(v, path, &version));
  const Value& meta = v["metadata"];
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(meta, "uid", path + ".metadata", &c.uid));
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(meta, "resourceVersion", path + ".metadata", &c.resource_version));
  c.deleting = json::Find(meta, "deletionTimestamp") != nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::ReadStrings(meta, "finalizers", path + ".metadata", &c.finalizers));
  GPUSCHED_RETURN_IF_ERROR(DecodeClaimOwner(meta, path, &c));
  GPUSCHED_RETURN_IF_ERROR(DecodeClaimSpec(v, path, version, &c));
  GPUSCHED_RETURN_IF_ERROR(DecodeClaimStatus(v, path, &c));
  return c;
}

}  // namespace gpusched::kubejson
