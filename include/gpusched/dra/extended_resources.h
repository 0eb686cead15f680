// File: extended_resources.h
//
// Extended resources served by DRA (KEP 5004; kube-scheduler's DRAExtendedResource, beta in
// 1.36): a container asking `limits: {nvidia.com/gpu: 2}` on a node whose status.allocatable
// does not list nvidia.com/gpu is served from the node's ResourceSlices, through the DeviceClass
// that maps the resource, by a special ResourceClaim that kube-scheduler builds for the pod.
// shared/specs/dra.md §1.5.
//
// - The class of a resource (ClassFor): a class whose spec.extendedResourceName is the resource,
//   and every class <c> under the implicit name deviceclass.resource.kubernetes.io/<c>. Where
//   several classes map one name, the newest (metadata.creationTimestamp) wins, then the lower
//   name (upstream's extendedresourcecache, betterDeviceClass).
// - A resource is served by DRA on a node if a class maps it and the node's allocatable lists
//   none of it; otherwise the device plugin serves it (upstream's filterExtendedResources).
// - The special claim (BuildSpecialClaim) follows upstream's createRequestsAndMappings. Its
//   requests are ExactCount requests of the resource's class, named container-<i>-request-<r>:
//   i counts the init containers, then the containers; r is the resource's position among
//   everything the container requests, in name order (cpu and memory included). For each
//   resource served, in name order:
//   - each long-lived container (an app container or a sidecar) asking it gets a request for its
//     whole count, and a mapping to it;
//   - an init container that is not a sidecar runs to completion before the long-lived containers
//     after it start, so it uses their devices: it maps to the long-lived requests after it, in
//     container order, until their counts add up to its own (a sidecar before it runs beside it
//     and is not reused); for the count they leave, it maps to a request of its own of that count;
//   - such init containers run one after another, so they share one request: of their own
//     requests only the one with the largest count (the first on a tie) is kept, and every
//     mapping to another of them names it instead.
//   Example: init container 3, app containers 2 + 2: requests container-1-request-0 and
//   container-2-request-0 of 2 each, the init container mapped to both: 4 devices. With an init
//   container of 5 it maps to both and to container-0-request-0 of 1.
//   Requests are sorted by name. Mappings go resource by resource; within one, the long-lived
//   containers' in container order, then each init container's in container order: the requests
//   it reuses, then its own (or the shared one).
//
// Pure.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/dra/types.h"
#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"

namespace gpusched::dra {

inline constexpr std::string_view kImplicitExtendedResourcePrefix = "deviceclass.resource.kubernetes.io/";
// The suffix of a special claim's generateName after the pod's name.
inline constexpr std::string_view kExtendedResourceClaimSuffix = "-extended-resources-";

using DeviceClasses = std::map<std::string, DeviceClass, std::less<>>;

// Returns the class that serves extended resource `resource`, or nullptr.
const DeviceClass* ClassFor(const DeviceClasses& classes, std::string_view resource);

// Returns the extended resources `pod` requests (any container) that a class maps, by name.
std::vector<std::string> MappedResources(const Pod& pod, const DeviceClasses& classes);

// Returns the resources of `mapped` (MappedResources) that DRA serves on `node`: those its
// allocatable does not list (or lists as 0).
std::vector<std::string> ServedOn(const Node& node, std::span<const std::string> mapped);

// True if `node` is labelled nvidia-dra and DRA serves some of `pod`'s extended resources there
// (ServedOn of MappedResources): the pod's GPUs there come through its special claim.
bool ServedThroughDra(const Pod& pod, const Node& node, const DeviceClasses& classes);

// <container>, <resource> -> <request>: pod.status.extendedResourceClaimStatus.requestMappings.
struct RequestMapping {
  std::string container;
  std::string resource;
  std::string request;
  bool operator==(const RequestMapping&) const = default;
};

struct SpecialClaim {
  // In the pod's namespace, named "<pod>-extended-resources-" (the generateName the API server
  // completes), owned by the pod; its requests. No allocation.
  ResourceClaim claim;
  std::vector<RequestMapping> mappings;
};

// Returns the special claim for `pod` where DRA serves `served` (ServedOn; any order), with its
// request mappings, as described above; nullopt when it asks none of them.
std::optional<SpecialClaim> BuildSpecialClaim(const Pod& pod, const DeviceClasses& classes, std::span<const std::string> served);

}  // namespace gpusched::dra
