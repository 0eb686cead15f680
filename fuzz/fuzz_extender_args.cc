// Fuzz target: the extender's request bodies, end to end through the handlers (filter,
// prioritize, bind) against a small inventory, and through the preempt verb's reader. Any input
// must produce a well-formed reply and never crash, hang or leak; a body read through a
// remembered NodeNames list (node_names_memo.h) must read exactly as a full parse does; the
// preemption request must read the same streamed and from a DOM, and the answer written for what
// was read must be valid JSON that reads back the same; the preempt verb, which decides
// candidates while the body is still being parsed, must answer what deciding the parsed request
// answers.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/extender/preemption.h"
#include "gpusched/extender/preemption_wire.h"
#include "gpusched/extender/service.h"
#include "gpusched/json/json.h"
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

// Reads `body` as ExtenderPreemptionArgs, streamed and from a DOM, and traps unless both read the
// same (answer or error); if it reads, writes the candidates back as an answer and traps unless
// that answer, wrapped into a request again, reads as the same victims.
void CheckPreemptionRoundTrip(const std::string& body) {
  auto args = gpusched::extender::ParsePreemptionArgs(body);
  auto dom = gpusched::extender::ParsePreemptionArgs(body, gpusched::extender::PreemptionRead::kDom);
  if (args.ok() != dom.ok()) __builtin_trap();
  if (!args.ok() && args.status().message() != dom.status().message()) __builtin_trap();
  if (!args.ok()) return;
  if (args->meta != dom->meta || args->candidates.size() != dom->candidates.size()) __builtin_trap();
  for (size_t i = 0; i < dom->candidates.size(); ++i) {
    const auto& a = args->candidates[i];
    const auto& b = dom->candidates[i];
    if (a.node != b.node || a.victim_uids != b.victim_uids || a.pdb_violations != b.pdb_violations) __builtin_trap();
  }
  std::vector<gpusched::extender::MetaVictims> answer;
  for (const auto& c : args->candidates) answer.push_back({.node = c.node, .uids = {c.victim_uids.begin(), c.victim_uids.end()}, .pdb_violations = c.pdb_violations});
  std::string out = gpusched::extender::EncodePreemptionResult(answer);
  std::string again = R"({"Pod":{"metadata":{"uid":"p"}},)" + out.substr(1);
  auto reread = gpusched::extender::ParsePreemptionArgs(again);
  if (!reread.ok() || reread->candidates.size() != args->candidates.size()) __builtin_trap();
  // Duplicate node keys read as separate candidates; the answer writes each, in node order.
  std::vector<std::string_view> nodes;
  for (const auto& c : args->candidates) nodes.push_back(c.node);
  std::sort(nodes.begin(), nodes.end());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (reread->candidates[i].node != nodes[i]) __builtin_trap();
  }
  // The preemptor read ahead (preempt decides while the rest parses) is the one the parse reads.
  if (std::optional<gpusched::Pod> early = gpusched::extender::PeekPreemptor(body); early && !(*early == args->pod)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static gpusched::inventory::Inventory* inventory = MakeInventory();
  static gpusched::extender::Service* service = new gpusched::extender::Service(inventory, {});
  std::string body(reinterpret_cast<const char*>(data), size);
  CheckRememberedReadsAsFull(body);
  CheckPreemptionRoundTrip(body);
  std::string filter = service->Filter(body);
  std::string scores = service->Prioritize(body);
  std::string bind = service->Bind(body);
  if (filter.empty() || filter.front() != '{' || scores.empty() || scores.front() != '[' || bind.empty()) __builtin_trap();
  auto preempt = service->Preempt(body);  // read ahead, decided while parsed, or refused
  auto args = gpusched::extender::ParsePreemptionArgs(body);
  if (preempt.ok() != args.ok()) __builtin_trap();
  if (args.ok()) {
    static gpusched::extender::ServiceOptions* options = new gpusched::extender::ServiceOptions();
    static gpusched::dra::cel::ProgramCache* programs = new gpusched::dra::cel::ProgramCache();
    auto snapshot = inventory->Snapshot();
    gpusched::placement::PodRequest request = gpusched::placement::AnalyzePod(args->pod);
    std::string reference = gpusched::extender::EncodePreemptionResult(gpusched::extender::DecidePreemption(
        *args, request, {.snapshot = snapshot.get(), .options = options, .programs = programs}));
    if (*preempt != reference) __builtin_trap();
  }
  return 0;
}
