// File: pod_groups.h
//
// Pod groups in Kubernetes JSON (model/pod_group.h): the group objects of the three APIs that
// declare gangs, and the reference a pod makes to its group. The group's API is told by the
// object's apiVersion and kind, since two of them are kind PodGroup.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/json/json.h"
#include "gpusched/model/labels.h"
#include "gpusched/model/pod_group.h"

namespace gpusched::kubejson {

// The API of an object of `kind` at `api_version` ("scheduling.k8s.io/v1beta1"), or nullopt if
// it declares no group gpusched reads (another group's PodGroup, an unknown version).
std::optional<GroupApi> GroupApiOf(std::string_view kind, std::string_view api_version);

// Returns the groups the object `v` of API `api` declares: one, or a Workload's one per
// spec.podGroups[] entry. `path` prefixes error messages. Errors: InvalidArgument naming the
// field and the value (a missing name, a minCount that is not a positive 32-bit integer, a
// policy that is neither basic nor gang).
StatusOr<std::vector<PodGroup>> DecodePodGroups(const rapidjson::Value& v, GroupApi api, std::string_view path);

// Reads the group the pod spec `spec` (at `path`) and its `labels` name into `out`:
// spec.schedulingGroup.podGroupName, else spec.workloadRef, else the Coscheduling label; leaves
// `out` empty when none. Errors: InvalidArgument naming the field and the value.
Status ReadPodGroupRef(const rapidjson::Value& spec, const Labels& labels, const std::string& path,
                       std::optional<PodGroupRef>* out);

}  // namespace gpusched::kubejson
