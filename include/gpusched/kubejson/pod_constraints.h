// File: pod_constraints.h
//
// The parts of a Pod spec and a Node that kube-scheduler's filters besides resources read
// (model/pod_constraints.h), from Kubernetes JSON. Errors name the field and the value: a wrong
// JSON type; unknown operators are kept as written (the judge gives them their meaning).
#pragma once

#include <string>

#include "gpusched/common/status.h"
#include "gpusched/json/json.h"
#include "gpusched/model/pod_constraints.h"

namespace gpusched::kubejson {

// Reads the map of strings obj[key] (nodeSelector, a flavor's nodeLabels) into *out, a later
// key replacing an earlier one; absent or null adds nothing. Errors name the entry.
Status DecodeStringMap(const rapidjson::Value& obj, std::string_view key, const std::string& path, Labels* out);

// Appends obj.tolerations (core/v1 Tolerations: key, operator, value, effect) to *out.
Status DecodeTolerations(const rapidjson::Value& obj, const std::string& path, std::vector<Toleration>* out);

// Reads the pod spec `spec` at `path` (nodeSelector, affinity, tolerations,
// topologySpreadConstraints, the host ports of containers and init containers, volumes).
Status DecodePodConstraints(const rapidjson::Value& spec, const std::string& path, PodConstraints* out);

// Reads spec.unschedulable, spec.taints and the Ready condition of the Node object `node`.
Status DecodeNodeSchedulability(const rapidjson::Value& node, const std::string& path, NodeSchedulability* out);

}  // namespace gpusched::kubejson
