// File: nomination_table.h
//
// Pending pods kube-scheduler nominated to a node after preempting there
// (status.nominatedNodeName), by UID. Every one counts against its node's other resources for
// pods of lower or equal priority (NodeState::nominated); one that asks for GPUs holds them
// there too, until it binds, leaves, is nominated elsewhere, or its hold outlives the nomination
// TTL, counted from when the last pod of lower priority terminating on the node (its victims) is
// gone. The inventory decides who may be nominated; this table keeps them and their age.
//
// Thread-compatible: part of the ReservationBook, whose owner serializes every access.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "gpusched/inventory/expiry.h"
#include "gpusched/model/node_uses.h"
#include "gpusched/model/pod.h"

namespace gpusched::inventory {

class NominationTable {
 public:

  using Clock = std::chrono::steady_clock;
  // `ttl`: how long a GPU hold lasts once the nominated pod's victims are gone.
  explicit NominationTable(Clock::duration ttl) : ttl_(ttl) {}
  struct Nomination {
    Pod pod;
    // Until when its GPU hold lasts: the TTL from when it was nominated, or last saw its victims
    // leaving.
    Expiry hold;
    bool gpus = false;        // it holds GPUs on its node
    PodUse use;               // what it asks besides GPUs and its host ports (labels), for NodeState::nominated
  };

  // Keeps `pod` (pending, nominated to pod.nominated_node) as nominated at `now`; `gpus`: it
  // holds GPUs there. A nomination that asks for the same on the same node keeps its age and
  // touches nothing; otherwise its old and new nodes go to `touched`.
  void Nominate(Pod&& pod, bool gpus, Clock::time_point now, std::set<std::string>* touched);
  // Ends pod `uid`'s nomination, if any; its node goes to `touched`.
  void End(std::string_view uid, std::set<std::string>* touched);
  // Ends every nomination whose pod is not in `listed` (a relist of the pending pods).
  void EndUnlisted(const std::set<std::string_view>& listed, std::set<std::string>* touched);
  // Ends the GPU holds whose Expiry passed at `now`; `leaving(node, priority)` says whether pods
  // of lower priority are still terminating there, which starts the hold's TTL again. The pods
  // still count against their nodes' other resources. Their nodes go to `touched`.
  void ExpireHolds(Clock::time_point now, const std::function<bool(std::string_view node, int32_t priority)>& leaving,
                   std::set<std::string>* touched);

  const std::map<std::string, Nomination, std::less<>>& all() const { return nominations_; }

 private:
  const Clock::duration ttl_;
  std::map<std::string, Nomination, std::less<>> nominations_;
};

}  // namespace gpusched::inventory
