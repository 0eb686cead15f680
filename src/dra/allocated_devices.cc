// File: allocated_devices.cc
//
// Sorting an allocation's device results into what they hold: exclusive devices, shared ones, and
// per device the capacity its shares consume; admin-access results hold nothing.
#include "gpusched/dra/allocated_devices.h"

namespace gpusched::dra {

void AllocatedDevices::Add(const AllocationResult& result) {
  for (const DeviceResult& r : result.results) {
    if (r.admin_access) continue;
    if (!r.share_id.empty()) {
      shared.insert(r.id);
      auto& sum = consumed_capacity_milli[r.id];
      for (const auto& [name, milli] : r.consumed_capacity_milli) sum[name] += milli;
    } else {
      exclusive.insert(r.id);
    }
  }
}

}  // namespace gpusched::dra
