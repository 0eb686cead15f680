// File: types.h
//
// resource.k8s.io/v1 objects reduced to what the structured allocator reads: DeviceClasses,
// ResourceSlices (pools, devices, attributes, capacity, shared counters, taints) and
// ResourceClaims (requests, constraints, config, allocation status). Decoded once from JSON
// (kubejson/dra_objects.h); immutable afterwards. Quantities are exact int64 milli-units.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched::dra {

// A device attribute: one of int, bool, string, version (semver text). An attribute whose JSON
// object had no known key is kUnsupported: evaluating any selector on its device is an error
// ("unsupported attribute value"), as upstream.
struct AttributeValue {
  enum class Kind { kInt, kBool, kString, kVersion, kUnsupported };
  Kind kind = Kind::kUnsupported;
  int64_t int_value = 0;
  bool bool_value = false;
  std::string text;  // kString and kVersion

  bool operator==(const AttributeValue&) const = default;
};

struct RequestPolicy {
  std::optional<int64_t> default_milli;
  std::vector<int64_t> valid_values_milli;  // sorted ascending
  std::optional<int64_t> range_min_milli;
  std::optional<int64_t> range_max_milli;
  std::optional<int64_t> range_step_milli;

  bool empty() const {
    return !default_milli && valid_values_milli.empty() && !range_min_milli && !range_max_milli && !range_step_milli;
  }
  bool operator==(const RequestPolicy&) const = default;
};

struct Capacity {
  int64_t value_milli = 0;
  std::string text;  // the quantity as published, for results
  RequestPolicy policy;
  bool operator==(const Capacity&) const = default;
};

struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
  bool operator==(const NodeSelectorRequirement&) const = default;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;  // on labels
  std::vector<NodeSelectorRequirement> match_fields;       // only metadata.name
  bool operator==(const NodeSelectorTerm&) const = default;
};

// Terms are ORed, requirements in a term ANDed; no terms matches nothing.
struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;
  bool operator==(const NodeSelector&) const = default;
};

struct DeviceTaint {
  std::string key;
  std::string value;
  std::string effect;  // None, NoSchedule, NoExecute
  bool operator==(const DeviceTaint&) const = default;
};

// A DeviceTaintRule (resource.k8s.io v1alpha3, v1beta2, v1): `taint` on every device its
// selector matches, as if the driver had published it there. Selector fields left empty match any
// value; a rule without a selector matches no device.
struct DeviceTaintRule {
  std::string name;
  bool has_selector = false;
  std::string driver;
  std::string pool;
  std::string device;
  DeviceTaint taint;

  bool Matches(std::string_view slice_driver, std::string_view slice_pool, std::string_view device_name) const {
    return has_selector && (driver.empty() || driver == slice_driver) && (pool.empty() || pool == slice_pool) &&
           (device.empty() || device == device_name);
  }
  bool operator==(const DeviceTaintRule&) const = default;
};

// A Namespace as adminAccess admission reads it: whether it carries the label
// resource.kubernetes.io/admin-access=true.
struct NamespaceAccess {
  std::string name;
  bool admin_access = false;
  bool operator==(const NamespaceAccess&) const = default;
};

struct DeviceToleration {
  std::string key;
  std::string op = "Equal";  // Exists or Equal
  std::string value;
  std::string effect;  // empty: every effect
  std::optional<int64_t> toleration_seconds;
  bool operator==(const DeviceToleration&) const = default;
};

struct CounterConsumption {
  std::string counter_set;
  std::map<std::string, int64_t> counters_milli;
  bool operator==(const CounterConsumption&) const = default;
};

struct CounterSet {
  std::string name;
  std::map<std::string, int64_t> counters_milli;
  bool operator==(const CounterSet&) const = default;
};

struct Device {
  std::string name;
  std::map<std::string, AttributeValue> attributes;  // keys as published: "id" or "domain/id"
  std::map<std::string, Capacity> capacity;
  std::vector<CounterConsumption> consumes_counters;
  std::vector<DeviceTaint> taints;
  bool allow_multiple_allocations = false;
  bool binds_to_node = false;
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
  // Only with the slice's perDeviceNodeSelection.
  std::string node_name;
  bool all_nodes = false;
  std::optional<NodeSelector> node_selector;
  bool operator==(const Device&) const = default;
};

// The value of `device`'s string attribute `name`, published unqualified or in the driver's
// domain ("uuid", "gpu.nvidia.com/uuid"); "" when it has none or it is not a string.
inline std::string StringAttribute(const Device& device, std::string_view driver, std::string_view name) {
  std::string qualified = std::string(driver) + "/" + std::string(name);
  for (const std::string& key : {std::string(name), qualified}) {
    auto it = device.attributes.find(key);
    if (it != device.attributes.end() && it->second.kind == AttributeValue::Kind::kString) return it->second.text;
  }
  return "";
}

struct ResourceSlice {
  std::string name;
  std::string driver;
  std::string pool;
  int64_t generation = 0;
  int64_t slice_count = 0;
  std::string node_name;
  bool all_nodes = false;
  std::optional<NodeSelector> node_selector;
  bool per_device_node_selection = false;
  std::vector<Device> devices;  // in published order: the allocator's candidate order
  std::vector<CounterSet> shared_counters;
  bool operator==(const ResourceSlice&) const = default;
};

// A slice shared, unchanged, by every state built while the API server holds the same version:
// one copy in memory, and pointer equality means equal content.
using SlicePtr = std::shared_ptr<const ResourceSlice>;

struct OpaqueConfig {
  std::string driver;
  std::string parameters_json;  // compact JSON, copied to the result untouched
  bool operator==(const OpaqueConfig&) const = default;
};

struct DeviceClass {
  std::string name;
  std::vector<std::string> selectors;  // CEL; "" = a selector without cel (an error when used)
  std::vector<OpaqueConfig> configs;
  std::string extended_resource_name;
  // metadata.creationTimestamp as the API server writes it (RFC 3339 in UTC, whole seconds): in
  // that form string order is time order. Breaks ties between classes mapping one resource.
  std::string creation_timestamp;
  bool operator==(const DeviceClass&) const = default;
};

// ExactDeviceRequest, or one DeviceSubRequest of a firstAvailable list.
struct ExactRequest {
  std::string name;  // the subrequest's name; empty for an exactly request
  std::string device_class;
  std::vector<std::string> selectors;
  std::string allocation_mode = "ExactCount";
  int64_t count = 1;
  std::optional<bool> admin_access;
  std::vector<DeviceToleration> tolerations;
  std::map<std::string, int64_t> capacity_requests_milli;
  bool operator==(const ExactRequest&) const = default;
};

struct DeviceRequest {
  std::string name;
  std::optional<ExactRequest> exactly;
  std::vector<ExactRequest> first_available;
  bool operator==(const DeviceRequest&) const = default;
};

struct DeviceConstraint {
  std::vector<std::string> requests;  // empty: every request
  std::string match_attribute;
  std::string distinct_attribute;
  bool operator==(const DeviceConstraint&) const = default;
};

struct ClaimConfig {
  std::vector<std::string> requests;
  OpaqueConfig opaque;
  bool operator==(const ClaimConfig&) const = default;
};

struct DeviceId {
  std::string driver;
  std::string pool;
  std::string device;
  auto operator<=>(const DeviceId&) const = default;
  bool operator==(const DeviceId&) const = default;
};

struct DeviceResult {
  std::string request;  // "req" or "req/sub"
  DeviceId id;
  bool admin_access = false;
  std::vector<DeviceToleration> tolerations;
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
  std::string share_id;
  std::map<std::string, int64_t> consumed_capacity_milli;
  bool operator==(const DeviceResult&) const = default;
};

struct ResultConfig {
  std::string source;  // FromClass or FromClaim
  std::vector<std::string> requests;
  OpaqueConfig opaque;
  bool operator==(const ResultConfig&) const = default;
};

struct AllocationResult {
  std::vector<DeviceResult> results;
  std::vector<ResultConfig> config;
  std::optional<NodeSelector> node_selector;  // nullopt: usable everywhere
  // allocationTimestamp (Unix ms): set by the allocating scheduler when a device has binding
  // conditions; their timeout counts from it.
  std::optional<int64_t> allocation_timestamp_ms;
  bool operator==(const AllocationResult&) const = default;
};

struct ConsumerRef {
  std::string api_group;  // "" for pods
  std::string resource;   // "pods"
  std::string name;
  std::string uid;
  bool operator==(const ConsumerRef&) const = default;
};

// status.devices[]: what a DRA driver reports of an allocated device; its conditions by type
// ("True", "False" or "Unknown").
struct AllocatedDeviceStatus {
  DeviceId id;
  std::string share_id;
  std::map<std::string, std::string> conditions;
  bool operator==(const AllocatedDeviceStatus&) const = default;
};

struct ResourceClaim {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string owner_pod_uid;  // controller ownerReference of kind Pod (template claims)
  bool deleting = false;
  std::vector<std::string> finalizers;
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  std::vector<ClaimConfig> configs;
  std::optional<AllocationResult> allocation;
  std::vector<ConsumerRef> reserved_for;
  std::vector<AllocatedDeviceStatus> device_statuses;
  bool operator==(const ResourceClaim&) const = default;
};

}  // namespace gpusched::dra
