// File: kueue_objects.h
//
// Kueue's objects as the API server serves them (kueue.x-k8s.io/v1beta2, and v1beta1 for older
// releases; Kueue 0.19) into the model (model/kueue.h). Errors name the field path and the value.
#pragma once

#include <string_view>

#include "gpusched/common/status.h"
#include "gpusched/json/json.h"
#include "gpusched/model/kueue.h"

namespace gpusched::kubejson {

// True for apiVersion kueue.x-k8s.io/v1beta2 or v1beta1.
bool IsKueueApiVersion(std::string_view api_version);

// The Workload in `v`. Each pod set's template becomes a pending Pod of the Workload's namespace
// (kueue.h's PodSet::prototype); a template whose GPU fields cannot be read keeps the reason in
// the prototype's spec_error, as a pod does. Errors: metadata (name, namespace, uid) missing, a
// pod set without a name or template, a count that is not a non-negative 32-bit number, a field
// of the wrong type.
StatusOr<kueue::Workload> DecodeKueueWorkload(const rapidjson::Value& v, std::string_view path);

StatusOr<kueue::ResourceFlavor> DecodeResourceFlavor(const rapidjson::Value& v, std::string_view path);
StatusOr<kueue::AdmissionCheck> DecodeAdmissionCheck(const rapidjson::Value& v, std::string_view path);
// spec.admissionChecksStrategy.admissionChecks[] (name, onFlavors) and spec.admissionChecks
// (names, every flavor); Kueue forbids setting both.
StatusOr<kueue::ClusterQueue> DecodeClusterQueue(const rapidjson::Value& v, std::string_view path);

}  // namespace gpusched::kubejson
