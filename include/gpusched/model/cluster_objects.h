// File: cluster_objects.h
//
// Everything a cluster source (snapshot file, API watch, replay) hands the inventory in one go.
#pragma once

#include <string>
#include <vector>

#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"

namespace gpusched {

struct ClusterObjects {
  std::vector<Node> nodes;
  std::vector<Pod> pods;
  // resource.k8s.io objects, kept verbatim (compact JSON) for DRA placement.
  std::vector<std::string> resource_slices;
  std::vector<std::string> resource_claims;
  std::vector<std::string> device_classes;
};

}  // namespace gpusched
