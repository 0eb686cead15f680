// File: pod_group.cc
//
// The keys and names of pod groups.
#include "gpusched/model/pod_group.h"

#include <fmt/format.h>

namespace gpusched {

std::string_view GroupApiName(GroupApi api) {
  switch (api) {
    case GroupApi::kPodGroup:
      return "PodGroup";
    case GroupApi::kWorkload:
      return "Workload";
    case GroupApi::kCoscheduling:
      return "Coscheduling";
  }
  return "PodGroup";
}

std::string GroupKey(GroupApi api, std::string_view namespace_name, std::string_view name) {
  return fmt::format("{}/{}/{}", GroupApiName(api), namespace_name, name);
}

}  // namespace gpusched
