// File: preemption_wire.h
//
// kube-scheduler's preempt verb on the wire (k8s.io/kube-scheduler/extender/v1
// ExtenderPreemptionArgs in, ExtenderPreemptionResult out; shared/specs/extender-api.md §1.7,
// §2.5). The request names the candidate nodes with kube-scheduler's own victims: full Pods under
// NodeNameToVictims (nodeCacheCapable: false) or UIDs under NodeNameToMetaVictims (true); a
// placeholder candidate has no victims. The answer is NodeNameToMetaVictims in both modes: per
// node kept, the victims' UIDs and the number of PodDisruptionBudget violations; a node left out
// stops being a candidate, and an empty map means evictions cannot help.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/model/pod.h"

namespace gpusched::extender {

struct PreemptionCandidate {
  std::string node;
  // As kube-scheduler offered them (empty: a placeholder); views into PreemptionArgs::body.
  std::vector<std::string_view> victim_uids;
  // With full Pods (NodeNameToVictims), aligned with victim_uids: each victim's spec.priority.
  // Empty under NodeNameToMetaVictims, which carries UIDs only.
  std::vector<std::optional<int32_t>> victim_priorities;
  int64_t pdb_violations = 0;            // as kube-scheduler counted them
};

struct PreemptionArgs {
  std::unique_ptr<std::string> body;  // the request, parsed in place: victim_uids point here
  Pod pod;                            // the preemptor
  bool meta = false;                  // the request used NodeNameToMetaVictims
  // In the order of the body (Go writes a map's keys sorted). A deque: a candidate stays at its
  // address from the moment it is read, through moves of the PreemptionArgs.
  std::deque<PreemptionCandidate> candidates;
};

// Told of each candidate as soon as it is read, while the rest of the body is still being parsed
// (preempt decides them meanwhile). Called on the parsing thread, in the order of the body; the
// candidate stays at that address, unchanged, as long as the PreemptionArgs returned. A candidate
// told of may belong to a request whose parse then fails.
class CandidateListener {
 public:
  virtual ~CandidateListener() = default;
  virtual void Read(const PreemptionCandidate& candidate) = 0;
  // The parse failed: the candidates told of are about to be destroyed, and must not be read
  // once this returns.
  virtual void Abandon() = 0;
};

// How ParsePreemptionArgs reads NodeNameToMetaVictims: streamed from the parser (the default: no
// DOM for the bulk of the request), or from a DOM as NodeNameToVictims is (the reference the
// streamed reading is tested against).
enum class PreemptionRead { kStreamed, kDom };

// Parses an ExtenderPreemptionArgs body. Keys are matched case-insensitively, as Go's decoder
// does. Errors: InvalidArgument naming the field and what it held.
StatusOr<PreemptionArgs> ParsePreemptionArgs(std::string body, PreemptionRead mode = PreemptionRead::kStreamed,
                                             CandidateListener* listener = nullptr);

// The preemptor of an ExtenderPreemptionArgs body, read before the rest: the Pod if it is the
// body's first member (kube-scheduler writes it first), nullopt otherwise and on any error (the
// full parse reports it). ParsePreemptionArgs(body) decodes the same Pod when it succeeds.
std::optional<Pod> PeekPreemptor(const std::string& body);

// One node kept, as answered. Views into the request (PreemptionArgs) and the inventory snapshot
// it was decided on: both must outlive it (it lives until the answer is encoded).
struct MetaVictims {
  std::string_view node;
  std::vector<std::string_view> uids;  // in the order kube-scheduler should see them
  int64_t pdb_violations = 0;
};

// Returns the ExtenderPreemptionResult for `nodes` (written in node-name order, as Go writes a
// map).
std::string EncodePreemptionResult(std::span<const MetaVictims> nodes);

}  // namespace gpusched::extender
