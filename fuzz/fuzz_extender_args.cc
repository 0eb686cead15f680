// Fuzz target: the extender's request bodies, end to end through the handlers (filter,
// prioritize, bind) against a small inventory. Any input must produce a well-formed reply and
// never crash, hang or leak; and a body read through a remembered NodeNames list
// (node_names_memo.h) must read exactly as a full parse does.
#include <cstddef>
#include <cstdint>
#include <string>

#include "gpusched/extender/service.h"
#include "gpusched/kubejson/objects.h"

namespace {

gpusched::inventory::Inventory* MakeInventory() {
  auto* inv = new gpusched::inventory::Inventory();
  gpusched::ClusterObjects objects;
  // The demo-like cluster: every mode.
  (void)gpusched::kubejson::AppendClusterJson(R"({"kind":"List","items":[
    {"kind":"Node","metadata":{"name":"w","labels":{"vke.node.gpu.schedule":"nvidia"}},"status":{"allocatable":{"nvidia.com/gpu":"8"}}},
    {"kind":"Node","metadata":{"name":"m","labels":{"vke.node.gpu.schedule":"mgpu"}},"status":{"allocatable":{"vke.volcengine.com/mgpu-core":"400","vke.volcengine.com/mgpu-memory":"40000"}}},
    {"kind":"Node","metadata":{"name":"d","labels":{"vke.node.gpu.schedule":"nvidia-dra"}}},
    {"kind":"Node","metadata":{"name":"x","labels":{"vke.node.gpu.schedule":"bogus"}}},
    {"kind":"Pod","metadata":{"name":"p","namespace":"n","uid":"u1"},"spec":{"nodeName":"m","containers":[{"name":"c","resources":{"limits":{"vke.volcengine.com/mgpu-core":"30","vke.volcengine.com/mgpu-memory":"4096"}}}]},"status":{"phase":"Running"}}]})",
                                         &objects);
  inv->ReplaceCluster(std::move(objects));
  return inv;
}

// Parses `body` in full, then twice with a memo (the first remembers the list, the second reads
// it from there) and traps unless all three agree.
void CheckRememberedReadsAsFull(const std::string& body) {
  static gpusched::extender::NodeNamesMemo* memo = new gpusched::extender::NodeNamesMemo();
  auto full = gpusched::extender::ParseExtenderArgs(body);
  for (int i = 0; i < 2; ++i) {
    auto memoized = gpusched::extender::ParseExtenderArgs(body, memo);
    if (full.ok() != memoized.ok()) __builtin_trap();
    if (!full.ok()) {
      if (full.status().message() != memoized.status().message()) __builtin_trap();
      continue;
    }
    if (!((*full)->pod == (*memoized)->pod) || (*full)->node_names != (*memoized)->node_names ||
        (*full)->with_nodes != (*memoized)->with_nodes) {
      __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static gpusched::inventory::Inventory* inventory = MakeInventory();
  static gpusched::extender::Service* service = new gpusched::extender::Service(inventory, {});
  std::string body(reinterpret_cast<const char*>(data), size);
  CheckRememberedReadsAsFull(body);
  std::string filter = service->Filter(body);
  std::string scores = service->Prioritize(body);
  std::string bind = service->Bind(body);
  if (filter.empty() || filter.front() != '{' || scores.empty() || scores.front() != '[' || bind.empty()) __builtin_trap();
  return 0;
}
