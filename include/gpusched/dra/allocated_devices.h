// File: allocated_devices.h
//
// The devices that allocated claims hold: exclusively, as shares, and the capacity the shares
// consume. What the allocator must not hand out again.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "gpusched/dra/types.h"

namespace gpusched::dra {

// Devices held by the cluster's allocated claims (and allocations in flight).
struct AllocatedDevices {
  std::set<DeviceId> exclusive;
  std::set<DeviceId> shared;  // devices with at least one shareID allocation
  std::map<DeviceId, std::map<std::string, int64_t>> consumed_capacity_milli;

  // Adds the devices of `result`; adminAccess results hold nothing.
  void Add(const AllocationResult& result);
  bool Holds(const DeviceId& id) const { return exclusive.contains(id) || shared.contains(id) || consumed_capacity_milli.contains(id); }
};

}  // namespace gpusched::dra
