// File: dra_objects.cc
//
// dra_objects.h's non-claim half: ResourceSlices (v1beta1 "basic" or flat devices, attributes,
// capacities, counters, taints), DeviceClasses, DeviceTaintRules, Namespaces, the shared
// dra_fields.h readers and kind dispatch. Claims: dra_claims.cc.
#include "gpusched/kubejson/dra_objects.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpusched/common/quantity.h"
#include "dra_fields.h"

namespace gpusched::kubejson {
namespace dra_fields {

using rapidjson::Value;
using namespace gpusched::dra;

// Reads a quantity (a string; a plain integer is accepted too) in milli-units.
Status ReadQuantity(const Value& v, std::string_view path, int64_t* out, std::string* text) {
  if (v.IsInt64()) {
    if (__builtin_mul_overflow(v.GetInt64(), int64_t{1000}, out)) {
      return InvalidArgumentError(fmt::format("{}: {} is out of range", path, v.GetInt64()));
    }
    if (text != nullptr) *text = std::to_string(v.GetInt64());
    return OkStatus();
  }
  if (!v.IsString()) return json::WrongType(path, "quantity string", v);
  StatusOr<int64_t> q = ParseQuantityMilli(json::View(v));
  if (!q.ok()) return q.status().WithContext(std::string(path));
  *out = *q;
  if (text != nullptr) *text = std::string(json::View(v));
  return OkStatus();
}

Status DecodeRequirements(const Value& term, std::string_view key, std::string_view path,
                          std::vector<NodeSelectorRequirement>* out) {
  const Value* a = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(term, key, path, &a));
  if (a == nullptr) return OkStatus();
  for (rapidjson::SizeType i = 0; i < a->Size(); ++i) {
    std::string rpath = fmt::format("{}.{}[{}]", path, key, i);
    const Value& r = (*a)[i];
    if (!r.IsObject()) return json::WrongType(rpath, "object", r);
    NodeSelectorRequirement req;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(r, "key", rpath, &req.key));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(r, "operator", rpath, &req.op));
    GPUSCHED_RETURN_IF_ERROR(json::ReadStrings(r, "values", rpath, &req.values));
    static constexpr std::string_view kOps[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    if (std::find(std::begin(kOps), std::end(kOps), req.op) == std::end(kOps)) {
      return InvalidArgumentError(fmt::format("{}.operator: \"{}\" is not a node selector operator", rpath, req.op));
    }
    out->push_back(std::move(req));
  }
  return OkStatus();
}

Status DecodeNodeSelector(const Value& obj, std::string_view key, std::string_view path, std::optional<NodeSelector>* out) {
  const Value* s = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(obj, key, path, &s));
  if (s == nullptr) return OkStatus();
  std::string spath = fmt::format("{}.{}", path, key);
  const Value* terms = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(*s, "nodeSelectorTerms", spath, &terms));
  NodeSelector sel;
  for (rapidjson::SizeType i = 0; terms != nullptr && i < terms->Size(); ++i) {
    std::string tpath = fmt::format("{}.nodeSelectorTerms[{}]", spath, i);
    const Value& t = (*terms)[i];
    if (!t.IsObject()) return json::WrongType(tpath, "object", t);
    NodeSelectorTerm term;
    GPUSCHED_RETURN_IF_ERROR(DecodeRequirements(t, "matchExpressions", tpath, &term.match_expressions));
    GPUSCHED_RETURN_IF_ERROR(DecodeRequirements(t, "matchFields", tpath, &term.match_fields));
    sel.terms.push_back(std::move(term));
  }
  *out = std::move(sel);
  return OkStatus();
}

Status DecodeCounters(const Value& obj, std::string_view path, std::map<std::string, int64_t>* out) {
  const Value* counters = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(obj, "counters", path, &counters));
  if (counters == nullptr) return OkStatus();
  for (auto it = counters->MemberBegin(); it != counters->MemberEnd(); ++it) {
    std::string name(json::View(it->name));
    std::string cpath = fmt::format("{}.counters[\"{}\"]", path, name);
    if (!it->value.IsObject()) return json::WrongType(cpath, "object", it->value);
    const Value* value = json::Find(it->value, "value");
    if (value == nullptr) return InvalidArgumentError(cpath + ".value: missing");
    GPUSCHED_RETURN_IF_ERROR(ReadQuantity(*value, cpath + ".value", &(*out)[name]));
  }
  return OkStatus();
}

Status DecodeTolerations(const Value& obj, std::string_view path, std::vector<DeviceToleration>* out) {
  const Value* a = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(obj, "tolerations", path, &a));
  for (rapidjson::SizeType i = 0; a != nullptr && i < a->Size(); ++i) {
    std::string tpath = fmt::format("{}.tolerations[{}]", path, i);
    const Value& t = (*a)[i];
    if (!t.IsObject()) return json::WrongType(tpath, "object", t);
    DeviceToleration tol;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(t, "key", tpath, &tol.key));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(t, "operator", tpath, &tol.op));
    if (tol.op.empty()) tol.op = "Equal";
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(t, "value", tpath, &tol.value));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(t, "effect", tpath, &tol.effect));
    if (const Value* s = json::Find(t, "tolerationSeconds"); s != nullptr) {
      if (!s->IsInt64()) return json::WrongType(tpath + ".tolerationSeconds", "integer", *s);
      tol.toleration_seconds = s->GetInt64();
    }
    out->push_back(std::move(tol));
  }
  return OkStatus();
}

Status DecodeDeviceFields(const Value& d, std::string_view path, Device* out);

// Reads one device. resource.k8s.io/v1beta1 (Kubernetes 1.32) nests every field but the name under
// "basic"; v1beta2 and v1 put them on the device.
Status DecodeDevice(const Value& d, std::string_view path, Device* out) {
  if (!d.IsObject()) return json::WrongType(path, "object", d);
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(d, "name", path, &out->name));
  if (out->name.empty()) return InvalidArgumentError(fmt::format("{}.name: missing", path));
  const Value* basic = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(d, "basic", path, &basic));
  if (basic != nullptr) return DecodeDeviceFields(*basic, fmt::format("{}.basic", path), out);
  return DecodeDeviceFields(d, path, out);
}

// attributes: each a one-of int, bool, string, version; no known key: kUnsupported, an error only
// when a selector looks at the device.
Status DecodeAttributes(const Value& d, std::string_view path, Device* out) {
  const Value* attrs = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(d, "attributes", path, &attrs));
  for (auto it = attrs == nullptr ? Value::ConstMemberIterator() : attrs->MemberBegin(); attrs && it != attrs->MemberEnd(); ++it) {
    std::string key(json::View(it->name));
    std::string apath = fmt::format("{}.attributes[\"{}\"]", path, key);
    if (!it->value.IsObject()) return json::WrongType(apath, "object", it->value);
    AttributeValue a;
    if (const Value* v = json::Find(it->value, "int")) {
      if (!v->IsInt64()) return json::WrongType(apath + ".int", "integer", *v);
      a = {.kind = AttributeValue::Kind::kInt, .int_value = v->GetInt64()};
    } else if (const Value* v = json::Find(it->value, "bool")) {
      if (!v->IsBool()) return json::WrongType(apath + ".bool", "boolean", *v);
      a = {.kind = AttributeValue::Kind::kBool, .bool_value = v->GetBool()};
    } else if (const Value* v = json::Find(it->value, "string")) {
      if (!v->IsString()) return json::WrongType(apath + ".string", "string", *v);
      a = {.kind = AttributeValue::Kind::kString, .text = std::string(json::View(*v))};
    } else if (const Value* v = json::Find(it->value, "version")) {
      if (!v->IsString()) return json::WrongType(apath + ".version", "string", *v);
      a = {.kind = AttributeValue::Kind::kVersion, .text = std::string(json::View(*v))};
    }
    out->attributes[key] = std::move(a);
  }
  return OkStatus();
}

// A capacity's requestPolicy: default, validValues (sorted) or validRange.
Status DecodeRequestPolicy(const Value& policy, const std::string& ppath, RequestPolicy* out) {
  if (const Value* def = json::Find(policy, "default")) {
    out->default_milli.emplace();
    GPUSCHED_RETURN_IF_ERROR(ReadQuantity(*def, ppath + ".default", &*out->default_milli));
  }
  const Value* valid = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(policy, "validValues", ppath, &valid));
  for (rapidjson::SizeType i = 0; valid != nullptr && i < valid->Size(); ++i) {
    int64_t milli = 0;
    GPUSCHED_RETURN_IF_ERROR(ReadQuantity((*valid)[i], fmt::format("{}.validValues[{}]", ppath, i), &milli));
    out->valid_values_milli.push_back(milli);
  }
  std::sort(out->valid_values_milli.begin(), out->valid_values_milli.end());
  const Value* range = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(policy, "validRange", ppath, &range));
  if (range == nullptr) return OkStatus();
  std::string rpath = ppath + ".validRange";
  std::pair<const char*, std::optional<int64_t>*> fields[] = {
      {"min", &out->range_min_milli}, {"max", &out->range_max_milli}, {"step", &out->range_step_milli}};
  for (auto& [name, dst] : fields) {
    if (const Value* q = json::Find(*range, name)) {
      dst->emplace();
      GPUSCHED_RETURN_IF_ERROR(ReadQuantity(*q, fmt::format("{}.{}", rpath, name), &**dst));
    }
  }
  return OkStatus();
}

Status DecodeCapacities(const Value& d, std::string_view path, Device* out) {
  const Value* caps = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(d, "capacity", path, &caps));
  for (auto it = caps == nullptr ? Value::ConstMemberIterator() : caps->MemberBegin(); caps && it != caps->MemberEnd(); ++it) {
    std::string key(json::View(it->name));
    std::string cpath = fmt::format("{}.capacity[\"{}\"]", path, key);
    if (!it->value.IsObject()) return json::WrongType(cpath, "object", it->value);
    Capacity cap;
    const Value* value = json::Find(it->value, "value");
    if (value == nullptr) return InvalidArgumentError(cpath + ".value: missing");
    GPUSCHED_RETURN_IF_ERROR(ReadQuantity(*value, cpath + ".value", &cap.value_milli, &cap.text));
    const Value* policy = nullptr;
    GPUSCHED_RETURN_IF_ERROR(json::FindObject(it->value, "requestPolicy", cpath, &policy));
    if (policy != nullptr) GPUSCHED_RETURN_IF_ERROR(DecodeRequestPolicy(*policy, cpath + ".requestPolicy", &cap.policy));
    out->capacity[key] = std::move(cap);
  }
  return OkStatus();
}

Status DecodeConsumesCounters(const Value& d, std::string_view path, Device* out) {
  const Value* consumes = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(d, "consumesCounters", path, &consumes));
  for (rapidjson::SizeType i = 0; consumes != nullptr && i < consumes->Size(); ++i) {
    std::string cpath = fmt::format("{}.consumesCounters[{}]", path, i);
    const Value& c = (*consumes)[i];
    if (!c.IsObject()) return json::WrongType(cpath, "object", c);
    CounterConsumption cc;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "counterSet", cpath, &cc.counter_set));
    GPUSCHED_RETURN_IF_ERROR(DecodeCounters(c, cpath, &cc.counters_milli));
    out->consumes_counters.push_back(std::move(cc));
  }
  return OkStatus();
}

Status DecodeTaints(const Value& d, std::string_view path, Device* out) {
  const Value* taints = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(d, "taints", path, &taints));
  for (rapidjson::SizeType i = 0; taints != nullptr && i < taints->Size(); ++i) {
    std::string tpath = fmt::format("{}.taints[{}]", path, i);
    const Value& t = (*taints)[i];
    if (!t.IsObject()) return json::WrongType(tpath, "object", t);
    DeviceTaint taint;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(t, "key", tpath, &taint.key));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(t, "value", tpath, &taint.value));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(t, "effect", tpath, &taint.effect));
    out->taints.push_back(std::move(taint));
  }
  return OkStatus();
}

Status DecodeDeviceFields(const Value& d, std::string_view path, Device* out) {
  GPUSCHED_RETURN_IF_ERROR(DecodeAttributes(d, path, out));
  GPUSCHED_RETURN_IF_ERROR(DecodeCapacities(d, path, out));
  GPUSCHED_RETURN_IF_ERROR(DecodeConsumesCounters(d, path, out));
  GPUSCHED_RETURN_IF_ERROR(DecodeTaints(d, path, out));
  GPUSCHED_RETURN_IF_ERROR(json::ReadBool(d, "allowMultipleAllocations", path, &out->allow_multiple_allocations));
  GPUSCHED_RETURN_IF_ERROR(json::ReadBool(d, "bindsToNode", path, &out->binds_to_node));
  GPUSCHED_RETURN_IF_ERROR(json::ReadStrings(d, "bindingConditions", path, &out->binding_conditions));
  GPUSCHED_RETURN_IF_ERROR(json::ReadStrings(d, "bindingFailureConditions", path, &out->binding_failure_conditions));
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(d, "nodeName", path, &out->node_name));
  GPUSCHED_RETURN_IF_ERROR(json::ReadBool(d, "allNodes", path, &out->all_nodes));
  return DecodeNodeSelector(d, "nodeSelector", path, &out->node_selector);
}


// Reads apiVersion into *version ("" when absent). Errors: a resource.k8s.io version gpusched does
// not read (v1alpha2 of 1.30, v1alpha3 of 1.31).
Status ReadDraVersion(const Value& v, std::string_view path, std::string* version) {
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(v, "apiVersion", path, version));
  if (version->empty() || *version == "resource.k8s.io/v1" || *version == "resource.k8s.io/v1beta2" ||
      *version == kV1beta1) {
    return OkStatus();
  }
  return InvalidArgumentError(fmt::format("{}.apiVersion: \"{}\" is not supported (gpusched reads resource.k8s.io/v1, "
                                          "v1beta2 and v1beta1: Kubernetes 1.32 and later)",
                                          path, *version));
}

Status ReadMeta(const Value& v, std::string_view kind, std::string* name, std::string* ns, std::string* path) {
  if (!v.IsObject()) return json::WrongType(kind, "object", v);
  const Value* meta = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "metadata", kind, &meta));
  if (meta == nullptr) return InvalidArgumentError(fmt::format("{}.metadata: missing", kind));
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "name", fmt::format("{}.metadata", kind), name));
  if (name->empty()) return InvalidArgumentError(fmt::format("{}.metadata.name: missing", kind));
  if (ns != nullptr) GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "namespace", fmt::format("{}.metadata", kind), ns));
  *path = ns != nullptr && !ns->empty() ? fmt::format("{} {}/{}", kind, *ns, *name) : fmt::format("{} {}", kind, *name);
  return OkStatus();
}

Status DecodeExact(const Value& r, std::string_view path, bool sub, ExactRequest* out) {
  if (!r.IsObject()) return json::WrongType(path, "object", r);
  if (sub) GPUSCHED_RETURN_IF_ERROR(json::ReadString(r, "name", path, &out->name));
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(r, "deviceClassName", path, &out->device_class));
  const Value* selectors = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(r, "selectors", path, &selectors));
  for (rapidjson::SizeType i = 0; selectors != nullptr && i < selectors->Size(); ++i) {
    std::string spath = fmt::format("{}.selectors[{}]", path, i);
    const Value& s = (*selectors)[i];
    if (!s.IsObject()) return json::WrongType(spath, "object", s);
    const Value* cel = nullptr;
    GPUSCHED_RETURN_IF_ERROR(json::FindObject(s, "cel", spath, &cel));
    std::string expr;
    if (cel != nullptr) GPUSCHED_RETURN_IF_ERROR(json::ReadString(*cel, "expression", spath + ".cel", &expr));
    out->selectors.push_back(std::move(expr));
  }
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(r, "allocationMode", path, &out->allocation_mode));
  GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(r, "count", path, &out->count));
  if (const Value* a = json::Find(r, "adminAccess")) {
    if (!a->IsBool()) return json::WrongType(std::string(path) + ".adminAccess", "boolean", *a);
    out->admin_access = a->GetBool();
  }
  GPUSCHED_RETURN_IF_ERROR(DecodeTolerations(r, path, &out->tolerations));
  const Value* capacity = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(r, "capacity", path, &capacity));
  if (capacity != nullptr) {
    const Value* requests = nullptr;
    GPUSCHED_RETURN_IF_ERROR(json::FindObject(*capacity, "requests", std::string(path) + ".capacity", &requests));
    for (auto it = requests == nullptr ? Value::ConstMemberIterator() : requests->MemberBegin(); requests && it != requests->MemberEnd(); ++it) {
      std::string key(json::View(it->name));
      GPUSCHED_RETURN_IF_ERROR(ReadQuantity(it->value, fmt::format("{}.capacity.requests[\"{}\"]", path, key),
                                            &out->capacity_requests_milli[key]));
    }
  }
  return OkStatus();
}

Status DecodeOpaque(const Value& c, std::string_view path, OpaqueConfig* out) {
  const Value* opaque = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(c, "opaque", path, &opaque));
  if (opaque == nullptr) return InvalidArgumentError(fmt::format("{}.opaque: missing", path));
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*opaque, "driver", std::string(path) + ".opaque", &out->driver));
  if (const Value* p = json::Find(*opaque, "parameters")) json::AppendValue(&out->parameters_json, *p);
  return OkStatus();
}

template <typename T>
StatusOr<T> ParseWith(std::string_view text, StatusOr<T> (*decode)(const Value&)) {
  rapidjson::Document d;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(text, &d));
  return decode(d);
}

}  // namespace dra_fields

using namespace dra_fields;

StatusOr<ResourceSlice> DecodeResourceSlice(const Value& v) {
  ResourceSlice s;
  std::string path;
  GPUSCHED_RETURN_IF_ERROR(ReadMeta(v, "ResourceSlice", &s.name, nullptr, &path));
  std::string version;
  GPUSCHED_RETURN_IF_ERROR(ReadDraVersion(v, path, &version));
  const Value* spec = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "spec", path, &spec));
  if (spec == nullptr) return InvalidArgumentError(path + ".spec: missing");
  std::string sp = path + ".spec";
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*spec, "driver", sp, &s.driver));
  if (s.driver.empty()) return InvalidArgumentError(sp + ".driver: missing");
  const Value* pool = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(*spec, "pool", sp, &pool));
  if (pool == nullptr) return InvalidArgumentError(sp + ".pool: missing");
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*pool, "name", sp + ".pool", &s.pool));
  GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(*pool, "generation", sp + ".pool", &s.generation));
  GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(*pool, "resourceSliceCount", sp + ".pool", &s.slice_count));
  if (s.pool.empty()) return InvalidArgumentError(sp + ".pool.name: missing");
  if (s.slice_count <= 0) {
    return InvalidArgumentError(fmt::format("{}.pool.resourceSliceCount: {} must be positive", sp, s.slice_count));
  }
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*spec, "nodeName", sp, &s.node_name));
  GPUSCHED_RETURN_IF_ERROR(json::ReadBool(*spec, "allNodes", sp, &s.all_nodes));
  GPUSCHED_RETURN_IF_ERROR(json::ReadBool(*spec, "perDeviceNodeSelection", sp, &s.per_device_node_selection));
  GPUSCHED_RETURN_IF_ERROR(DecodeNodeSelector(*spec, "nodeSelector", sp, &s.node_selector));
  int selections = !s.node_name.empty() + s.all_nodes + s.per_device_node_selection + s.node_selector.has_value();
  if (selections > 1) {
    return InvalidArgumentError(fmt::format("{}: exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection "
                                            "may be set, {} are",
                                            sp, selections));
  }
  const Value* devices = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(*spec, "devices", sp, &devices));
  for (rapidjson::SizeType i = 0; devices != nullptr && i < devices->Size(); ++i) {
    Device d;
    GPUSCHED_RETURN_IF_ERROR(DecodeDevice((*devices)[i], fmt::format("{}.devices[{}]", sp, i), &d));
    s.devices.push_back(std::move(d));
  }
  const Value* counters = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(*spec, "sharedCounters", sp, &counters));
  for (rapidjson::SizeType i = 0; counters != nullptr && i < counters->Size(); ++i) {
    std::string cpath = fmt::format("{}.sharedCounters[{}]", sp, i);
    const Value& c = (*counters)[i];
    if (!c.IsObject()) return json::WrongType(cpath, "object", c);
    CounterSet set;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "name", cpath, &set.name));
    GPUSCHED_RETURN_IF_ERROR(DecodeCounters(c, cpath, &set.counters_milli));
    s.shared_counters.push_back(std::move(set));
  }
  return s;
}

StatusOr<DeviceClass> DecodeDeviceClass(const Value& v) {
  DeviceClass c;
  std::string path;
  GPUSCHED_RETURN_IF_ERROR(ReadMeta(v, "DeviceClass", &c.name, nullptr, &path));
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(v["metadata"], "creationTimestamp", path + ".metadata", &c.creation_timestamp));
  std::string version;
  GPUSCHED_RETURN_IF_ERROR(ReadDraVersion(v, path, &version));
  const Value* spec = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "spec", path, &spec));
  if (spec == nullptr) return c;
  std::string sp = path + ".spec";
  ExactRequest selectors;  // the same selector shape as a request's
  GPUSCHED_RETURN_IF_ERROR(DecodeExact(*spec, sp, false, &selectors));
  c.selectors = std::move(selectors.selectors);
  const Value* config = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(*spec, "config", sp, &config));
  for (rapidjson::SizeType i = 0; config != nullptr && i < config->Size(); ++i) {
    OpaqueConfig o;
    GPUSCHED_RETURN_IF_ERROR(DecodeOpaque((*config)[i], fmt::format("{}.config[{}]", sp, i), &o));
    c.configs.push_back(std::move(o));
  }
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*spec, "extendedResourceName", sp, &c.extended_resource_name));
  return c;
}

StatusOr<DeviceTaintRule> DecodeDeviceTaintRule(const Value& v) {
  DeviceTaintRule r;
  std::string path;
  GPUSCHED_RETURN_IF_ERROR(ReadMeta(v, "DeviceTaintRule", &r.name, nullptr, &path));
  std::string version;
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(v, "apiVersion", path, &version));
  if (!version.empty() && version != "resource.k8s.io/v1" && version != "resource.k8s.io/v1beta2" && version != "resource.k8s.io/v1alpha3") {
    return InvalidArgumentError(fmt::format("{}.apiVersion: \"{}\" is not supported (want resource.k8s.io/v1, v1beta2 or v1alpha3)", path, version));
  }
  const Value* spec = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "spec", path, &spec));
  if (spec == nullptr) return InvalidArgumentError(path + ".spec: missing");
  std::string sp = path + ".spec";
  const Value* selector = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(*spec, "deviceSelector", sp, &selector));
  if (selector != nullptr) {
    std::string sel = sp + ".deviceSelector";
    r.has_selector = true;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*selector, "driver", sel, &r.driver));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*selector, "pool", sel, &r.pool));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*selector, "device", sel, &r.device));
    // v1alpha3's class and CEL selectors (dropped in 1.36): refused rather than misapplied.
    std::string device_class;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*selector, "deviceClassName", sel, &device_class));
    const Value* cel = nullptr;
    GPUSCHED_RETURN_IF_ERROR(json::FindArray(*selector, "selectors", sel, &cel));
    if (!device_class.empty() || (cel != nullptr && cel->Size() > 0)) {
      return InvalidArgumentError(fmt::format("{}: deviceClassName and selectors (v1alpha3) are not supported; select by "
                                              "driver, pool and device",
                                              sel));
    }
  }
  const Value* taint = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(*spec, "taint", sp, &taint));
  if (taint == nullptr) return InvalidArgumentError(sp + ".taint: missing");
  std::string tp = sp + ".taint";
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*taint, "key", tp, &r.taint.key));
  if (r.taint.key.empty()) return InvalidArgumentError(tp + ".key: missing");
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*taint, "value", tp, &r.taint.value));
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*taint, "effect", tp, &r.taint.effect));
  return r;
}

StatusOr<NamespaceAccess> DecodeNamespaceAccess(const Value& v) {
  NamespaceAccess n;
  std::string path;
  GPUSCHED_RETURN_IF_ERROR(ReadMeta(v, "Namespace", &n.name, nullptr, &path));
  const Value* labels = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v["metadata"], "labels", path + ".metadata", &labels));
  std::string admin;
  if (labels != nullptr) GPUSCHED_RETURN_IF_ERROR(json::ReadString(*labels, "resource.kubernetes.io/admin-access", path + ".metadata.labels", &admin));
  n.admin_access = admin == "true";
  return n;
}

StatusOr<ResourceSlice> ParseResourceSlice(std::string_view text) { return ParseWith(text, &DecodeResourceSlice); }
StatusOr<DeviceClass> ParseDeviceClass(std::string_view text) { return ParseWith(text, &DecodeDeviceClass); }
StatusOr<ResourceClaim> ParseResourceClaim(std::string_view text) { return ParseWith(text, &DecodeResourceClaim); }

std::optional<dra::ObjectKind> DraKind(std::string_view kind) {
  for (dra::ObjectKind k : {dra::ObjectKind::kResourceSlice, dra::ObjectKind::kDeviceClass, dra::ObjectKind::kResourceClaim,
                            dra::ObjectKind::kDeviceTaintRule, dra::ObjectKind::kNamespace}) {
    if (dra::ObjectKindName(k) == kind) return k;
  }
  return std::nullopt;
}

std::string DraObjectKey(const Value& v) {
  std::string name, ns;
  const Value* meta = v.IsObject() ? json::Find(v, "metadata") : nullptr;
  if (meta == nullptr || !meta->IsObject()) return "";
  (void)json::ReadString(*meta, "name", "", &name);
  (void)json::ReadString(*meta, "namespace", "", &ns);
  if (name.empty()) return "";
  return ns.empty() ? name : ns + "/" + name;
}

dra::DraObject DecodeDraObject(const Value& v, dra::ObjectKind kind) {
  dra::DraObject out{.kind = kind, .key = DraObjectKey(v)};
  const Value* meta = v.IsObject() ? json::Find(v, "metadata") : nullptr;
  if (meta != nullptr && meta->IsObject()) (void)json::ReadString(*meta, "resourceVersion", "", &out.resource_version);
  auto take = [&](auto decoded) {
    if (decoded.ok()) {
      out.value = std::move(decoded).value();
    } else {
      out.error = std::string(decoded.status().message());
    }
  };
  switch (kind) {
    case dra::ObjectKind::kResourceSlice: {
      StatusOr<ResourceSlice> slice = DecodeResourceSlice(v);
      if (slice.ok()) {
        out.value = std::make_shared<const ResourceSlice>(std::move(slice).value());
      } else {
        out.error = std::string(slice.status().message());
      }
      break;
    }
    case dra::ObjectKind::kDeviceClass: take(DecodeDeviceClass(v)); break;
    case dra::ObjectKind::kResourceClaim: take(DecodeResourceClaim(v)); break;
    case dra::ObjectKind::kDeviceTaintRule: take(DecodeDeviceTaintRule(v)); break;
    case dra::ObjectKind::kNamespace: take(DecodeNamespaceAccess(v)); break;
  }
  return out;
}

}  // namespace gpusched::kubejson
