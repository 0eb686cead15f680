// Fuzz target: the snapshot loader (Kubernetes List JSON) and the inventory built from it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gpusched/extender/inventory_json.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubejson/objects.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpusched::ClusterObjects objects;
  if (!gpusched::kubejson::AppendClusterJson(std::string_view(reinterpret_cast<const char*>(data), size), &objects).ok()) {
    return 0;
  }
  gpusched::inventory::Inventory inventory;
  inventory.ReplaceCluster(std::move(objects));
  std::string doc = gpusched::extender::EncodeInventory(*inventory.Snapshot(), inventory.Stats(), "");
  if (doc.empty()) __builtin_trap();
  return 0;
}
