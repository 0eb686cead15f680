// File: defrag.cc
//
// `gpusched defrag`'s command: flags and usage, then the plan asked of a running gpusched (POST
// /debug/defrag) or made offline over snapshot files or the demo cluster.
#include "cli/defrag.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "cli/pod_file.h"
#include "cli/subcommand.h"
#include "gpusched/kubeapi/api_client.h"

namespace gpusched::cli {
namespace {

constexpr std::string_view kDefragUsage = R"(usage: gpusched defrag (--pod FILE | --pod-group NS/NAME | --target-frag PCT) [flags]

Plans pod moves (evict from one node, land on another) that make room for a pending pod, for
every pending member of a pod group at once (all or nothing: docs/gangs.md), or lower the
cluster's GPU fragmentation (FGD's measure, in percent of GPU compute) to a target:
the fewest moves, then the least disruption. Pods whose PodDisruptionBudget allows no
disruption never move; switching or invalid nodes are never used. A dry run unless --apply
(docs/defrag.md).

  --pod FILE         the pending pod, as JSON or YAML; "-" reads stdin
  --pod-group NS/NAME  instead: every pending member of this pod group (PodGroup, Workload's
                     group as NS/WORKLOAD/GROUP, or Coscheduling group)
  --replica KEY      with --pod-group: a Workload's podGroupReplicaKey
  --target-frag PCT  instead: lower fragmentation to PCT percent
  --max-moves N      at most N moves (default 8)
  --snapshot FILE    plan on a cluster file (kubectl get nodes,pods,pdb -A -o json); repeatable,
                     so that `kubectl get pdb -A -o json` can come as a file of its own;
                     default: the demo cluster
  --server URL       ask a running gpusched instead (http://127.0.0.1:8888)
  --format F         table (default) or json
  --apply            with --server: make the moves (POST /debug/defrag?apply=true): hold the GPUs
                     each moved pod's replacement gets, evict it through the Eviction API, one at
                     a time, stopping at the first failure (docs/defrag.md)
  --accept-unjudged  with --apply: make the moves even when the pod has constraints gpusched does
                     not judge (the plan's notJudged: pod affinity, topology spread, volumes);
                     kube-scheduler may still refuse it on the node made free
)";

struct DefragArgs {
  std::string pod_file;
  std::string group;
  std::string replica;
  std::optional<double> target;
  int max_moves = 8;
  std::vector<std::string> snapshots;
  std::string server;
  bool json = false;
  bool apply = false;
  bool accept_unjudged = false;
};

StatusOr<double> Number(std::string_view flag, const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) return InvalidArgumentError(fmt::format("{} \"{}\": want a number", flag, text));
  return v;
}

Status ParseFlag(std::string_view flag, const std::string& v, DefragArgs* a) {
  if (flag == "--pod") {
    a->pod_file = v;
  } else if (flag == "--pod-group") {
    a->group = v;
  } else if (flag == "--replica") {
    a->replica = v;
  } else if (flag == "--target-frag") {
    GPUSCHED_ASSIGN_OR_RETURN(double t, Number(flag, v));
    if (t < 0) return InvalidArgumentError(fmt::format("--target-frag {}: want a percentage >= 0", v));
    a->target = t;
  } else if (flag == "--max-moves") {
    GPUSCHED_ASSIGN_OR_RETURN(double n, Number(flag, v));
    if (n < 0 || n > 1000 || n != static_cast<int>(n)) return InvalidArgumentError(fmt::format("--max-moves {}: want 0 to 1000", v));
    a->max_moves = static_cast<int>(n);
  } else if (flag == "--snapshot") {
    a->snapshots.push_back(v);
  } else if (flag == "--server") {
    a->server = v;
  } else if (flag == "--format") {
    if (v != "table" && v != "json") return InvalidArgumentError(fmt::format("--format {}: want table or json", v));
    a->json = v == "json";
  } else {
    return InvalidArgumentError(fmt::format("unknown flag {}", flag));
  }
  return OkStatus();
}

StatusOr<DefragArgs> ParseDefragArgs(int argc, char** argv) {
  DefragArgs a;
  for (int i = 0; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (flag == "--apply" || flag == "--accept-unjudged") {
      (flag == "--apply" ? a.apply : a.accept_unjudged) = true;
      continue;
    }
    if (i + 1 >= argc) return InvalidArgumentError(fmt::format("{} needs a value", flag));
    GPUSCHED_RETURN_IF_ERROR(ParseFlag(flag, argv[++i], &a));
  }
  if (int{!a.pod_file.empty()} + int{!a.group.empty()} + int{a.target.has_value()} != 1) {
    return InvalidArgumentError("give exactly one of --pod, --pod-group and --target-frag");
  }
  if (!a.replica.empty() && a.group.empty()) return InvalidArgumentError("--replica needs --pod-group");
  if (!a.server.empty() && !a.snapshots.empty()) return InvalidArgumentError("--server and --snapshot exclude each other");
  if (a.apply && a.server.empty()) return InvalidArgumentError("--apply needs --server: moves are made by the running gpusched");
  if (a.accept_unjudged && !a.apply) return InvalidArgumentError("--accept-unjudged needs --apply");
  return a;
}

StatusOr<std::string> AskServer(const DefragArgs& a, const std::string& pod) {
  kubeapi::ApiConfig config;
  GPUSCHED_RETURN_IF_ERROR(kubeapi::ParseServerUrl(a.server, &config));
  GPUSCHED_ASSIGN_OR_RETURN(std::unique_ptr<kubeapi::ApiClient> client, kubeapi::ApiClient::Create(config));
  std::string query = fmt::format("maxMoves={}{}{}{}", a.max_moves, a.json ? "" : "&format=text", a.apply ? "&apply=true" : "",
                                  a.accept_unjudged ? "&acceptUnjudged=true" : "");
  if (a.target) query += fmt::format("&targetFrag={}", *a.target);
  if (!a.group.empty()) query += "&podGroup=" + a.group;
  if (!a.replica.empty()) query += "&replica=" + a.replica;
  GPUSCHED_ASSIGN_OR_RETURN(kubeapi::ApiResponse r, client->Send("POST", "/debug/defrag?" + query, pod));
  if (r.status != 200) return FailedPreconditionError(fmt::format("{} answered {}: {}", a.server, r.status, r.body));
  return r.body;
}

StatusOr<std::string> Plan(const DefragArgs& a) {
  std::string pod;
  if (!a.pod_file.empty()) {
    GPUSCHED_ASSIGN_OR_RETURN(pod, ReadPodFile(a.pod_file));
  }
  if (!a.server.empty()) return AskServer(a, pod);
  GPUSCHED_ASSIGN_OR_RETURN(std::unique_ptr<OfflineCluster> cluster, OfflineCluster::Load(a.snapshots));
  if (!a.group.empty()) {
    GPUSCHED_ASSIGN_OR_RETURN(extender::GroupDefragResult g, cluster->service().DefragGroup(a.group, a.replica, a.max_moves));
    return a.json ? extender::GroupDefragJson(g) : extender::GroupDefragText(g);
  }
  GPUSCHED_ASSIGN_OR_RETURN(extender::DefragResult r, cluster->service().Defrag(pod, a.target.value_or(0), a.max_moves));
  return a.json ? extender::DefragJson(r) : extender::DefragText(r);
}

}  // namespace

int RunDefrag(int argc, char** argv) { return RunAnswering<DefragArgs>("defrag", kDefragUsage, argc, argv, ParseDefragArgs, Plan); }

}  // namespace gpusched::cli
