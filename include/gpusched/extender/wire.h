// File: wire.h
//
// kube-scheduler's extender wire format (k8s.io/kube-scheduler/extender/v1), byte for byte:
// PascalCase keys out, keys matched case-insensitively in, Nodes/NodeNames mirrored, integer
// scores, errors as 200 + "Error". See shared/specs/extender-api.md §1.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/extender/node_names_memo.h"
#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"

namespace gpusched::extender {

// The body of filter and prioritize. Owns the parsed body: with Nodes, the kept Node objects are
// echoed back verbatim from it. Not copyable or movable: node_names point into it.
struct ExtenderArgs {
  ExtenderArgs();
  ~ExtenderArgs();
  ExtenderArgs(const ExtenderArgs&) = delete;
  ExtenderArgs& operator=(const ExtenderArgs&) = delete;

  Pod pod;
  bool with_nodes = false;                   // request used Nodes (nodeCacheCapable: false)
  std::vector<Node> nodes;                   // with_nodes: decoded Node objects
  std::vector<std::string_view> node_names;  // names in request order, either way
  // The remembered list node_names was read from (ParseExtenderArgs with a memo), or null.
  std::shared_ptr<const NodeNamesMemo::List> remembered;

  struct Body;                 // the parsed JSON (private to wire.cc)
  std::unique_ptr<Body> body;
};

// Parses a filter/prioritize body. With `names`, a body whose NodeNames list is remembered there
// is read without parsing that list again, and a list parsed in full is remembered; the answer
// is the same either way. Errors: InvalidArgument naming the field.
StatusOr<std::unique_ptr<ExtenderArgs>> ParseExtenderArgs(std::string body, NodeNamesMemo* names = nullptr);

struct FilterResult {
  std::vector<size_t> kept;                                // positions in args.node_names, ascending
  std::vector<std::pair<size_t, std::string>> failed;      // FailedNodes
  std::vector<std::pair<size_t, std::string>> unresolvable;  // FailedAndUnresolvableNodes
  // More FailedNodes, many to a reason: each reason (written once, escaped once) with its
  // positions. What steering refuses among thousands of fitting nodes.
  std::vector<std::pair<std::string, std::vector<size_t>>> failed_shared;
  // When not empty: every position neither kept nor listed above is a FailedNode (with
  // others_unresolvable, a FailedAndUnresolvableNode) with this reason (one string for
  // thousands of nodes).
  std::string others_failed;
  bool others_unresolvable = false;
};

// Returns the ExtenderFilterResult for `result`, mirroring Nodes or NodeNames as `args` used.
std::string EncodeFilterResult(const ExtenderArgs& args, const FilterResult& result);
// Returns an ExtenderFilterResult carrying only `error` (request-level failure).
std::string EncodeFilterError(std::string_view error);

struct HostPriority {
  std::string_view host;
  int64_t score = 0;
};
// Returns a HostPriorityList: a bare JSON array of {"Host","Score"}.
std::string EncodeHostPriorities(std::span<const HostPriority> priorities);

struct BindingArgs {
  std::string pod_name;
  std::string pod_namespace;
  std::string pod_uid;
  std::string node;
};
StatusOr<BindingArgs> ParseBindingArgs(std::string_view body);
// Returns an ExtenderBindingResult; an empty `error` means success.
std::string EncodeBindingResult(std::string_view error);

}  // namespace gpusched::extender
