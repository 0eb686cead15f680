#include "gpusched/model/pod.h"

namespace gpusched {

bool IsTrackedAnnotation(std::string_view key) {
  return key.starts_with("vke.volcengine.com/") || key.starts_with("gpusched.io/");
}

}  // namespace gpusched
