// File: special_claim_json.h
//
// The two objects kube-scheduler writes for a pod's extended resources served by DRA (KEP 5004),
// as the API server takes them: the special ResourceClaim to create (generateName
// "<pod>-extended-resources-", the annotation resource.kubernetes.io/extended-resource-claim:
// "true", the finalizer resource.kubernetes.io/delete-protection, the pod as its controlling
// owner (without blockOwnerDeletion, which upstream dropped: kubernetes#134956; it would need
// pods/finalizers rights under OwnerReferencesPermissionEnforcement), one ExactCount request per
// container request), and the merge patch of the pod's status
// that names it (status.extendedResourceClaimStatus with the request mappings). shared/specs/dra.md
// §1.5.
#pragma once

#include <string>

#include "gpusched/dra/extended_resources.h"
#include "gpusched/model/pod.h"

namespace gpusched::kubejson {

inline constexpr std::string_view kExtendedResourceClaimAnnotation = "resource.kubernetes.io/extended-resource-claim";

// The resource.k8s.io/v1 ResourceClaim to POST for `special` (its claim's name is the generateName).
std::string SpecialClaimJson(const dra::SpecialClaim& special, const Pod& pod);

// The merge patch of pods/<name>/status recording `claim_name` and `special`'s mappings, with the
// pod's UID as precondition.
std::string ExtendedClaimStatusPatch(const dra::SpecialClaim& special, const std::string& claim_name, const Pod& pod);

}  // namespace gpusched::kubejson
