// File: objects.h
//
// Kubernetes JSON (as the API server, kubectl and kube-scheduler print it) into the model: Pod,
// Node, and Lists of them (kubectl get nodes,pods,... -A -o json). Quantities are parsed here,
// once. Errors name the field path and the value.
//
// A pod or node whose GPU fields are malformed still decodes, with spec_error set (the field and
// the value), so that one bad object cannot take the others down and a bound pod that cannot be
// read is still known on its node.
#pragma once

#include <string_view>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/json/json.h"
#include "gpusched/inventory/cluster_objects.h"
#include "gpusched/model/disruption_budget.h"
#include "gpusched/model/gpu.h"
#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"

namespace gpusched::kubejson {

// Returns the Pod in `v`; `path` prefixes error messages (e.g. "Pod"). Errors only for a
// non-object or unreadable identity (metadata name, namespace, uid); any other field that cannot
// be read sets Pod::spec_error.
StatusOr<Pod> DecodePod(const rapidjson::Value& v, std::string_view path);

// Reads spec.priority of the pod spec `spec` (at `path`) into `out`: an int32; absent or null
// leaves `out` unchanged. Errors: InvalidArgument naming the field and the value.
Status ReadPriority(const rapidjson::Value& spec, const std::string& path, int32_t* out);

// Reads a metav1.LabelSelector (matchLabels, matchExpressions) at `path`. Errors: InvalidArgument
// naming the field and the value (an operator Kubernetes does not define, a wrong type).
Status ReadLabelSelector(const rapidjson::Value& selector, const std::string& path, LabelSelector* out);

// Returns the Node in `v`. Errors only for a non-object or a missing metadata.name.
StatusOr<Node> DecodeNode(const rapidjson::Value& v, std::string_view path);

// The name of a drift finding in gpusched.io/gpu-devices ("UsedBeyondBooking"; "" for none).
std::string_view GpuDriftName(GpuDriftKind kind);
// Returns the GPUs described by the node annotation gpusched.io/gpu-devices.
StatusOr<std::vector<GpuDevice>> ParseGpuDevices(std::string_view text);
// Returns the annotation's value for `gpus` (what ParseGpuDevices reads back):
// [{"index","uuid","model","memoryMiB","numa","health"}].
std::string EncodeGpuDevices(const std::vector<GpuDevice>& gpus);

// Returns the PodDisruptionBudget (policy/v1) in `v`. Errors: InvalidArgument naming the field
// and the value (a selector operator Kubernetes does not define, a wrong type).
StatusOr<DisruptionBudget> DecodeDisruptionBudget(const rapidjson::Value& v, std::string_view path);

// Returns the objects of kind `kind` in one JSON document (a List or a single object), each as
// compact JSON, in document order.
StatusOr<std::vector<std::string>> ObjectsOfKind(std::string_view text, std::string_view kind);

// Appends the objects of one JSON document to *out: a List (any kind ending in "List") or a single
// Node, Pod, ResourceSlice, ResourceClaim or DeviceClass. Objects of other kinds are skipped. One
// object that cannot be read never stops the others: a node or pod that can be identified is
// kept, marked with its spec_error; anything else is listed in out->errors. Errors: only a
// document that is not JSON or not a Kubernetes object or List.
Status AppendClusterJson(std::string_view text, ClusterObjects* out);

}  // namespace gpusched::kubejson
