// File: features.h
//
// The DRA feature gates the allocator honours, as kube-scheduler's (all on by default, as in the
// Kubernetes release gpusched follows).
#pragma once

namespace gpusched::dra {

struct Features {
  bool admin_access = true;
  bool prioritized_list = true;
  bool partitionable_devices = true;
  bool device_taints = true;
  bool consumable_capacity = true;
  bool binding_conditions = true;
};

}  // namespace gpusched::dra
