// File: explain.cc
//
// `gpusched explain`'s command: flags and usage, then the explanation asked of a running gpusched
// (by pod file or namespace/name) or computed offline over snapshot files or the demo cluster.
#include "cli/explain.h"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/pod_file.h"
#include "cli/subcommand.h"
#include "gpusched/json/json.h"
#include "gpusched/kubeapi/api_client.h"

namespace gpusched::cli {
namespace {

constexpr std::string_view kExplainUsage = R"(usage: gpusched explain (--pod FILE | --name NS/NAME | --pod-group NS/NAME | --workload NS/NAME) [flags]

Says why a pod fits where it does, or does not fit anywhere: per node the mode and state, a
reason per GPU, the score and rank where it fits, and the cheapest eviction of lower-priority
pods that would make room (docs/explain.md). For a pod group (a gang, docs/gangs.md): its
members, and whether the pending ones fit together now, member by member where. For a Kueue
Workload: what gpusched's admission check decides on it now (docs/kueue.md).

  --pod FILE        the pod, as JSON or YAML (kubectl get pod NAME -o yaml); "-" reads stdin
  --name NS/NAME    with --server: a pod the server knows (seen in filter, or bound)
  --pod-group NS/NAME  a pod group (a Workload's: NS/WORKLOAD/PODGROUP), on the server or on
                    the snapshot files
  --replica KEY     with --pod-group: a Workload's podGroupReplicaKey
  --workload NS/NAME  a Kueue Workload (kueue.x-k8s.io), on the server or on the snapshot files:
                    Ready, Retry or Rejected, why, and where each of its pods would go
  --snapshot FILE   judge it against a cluster file (kubectl get nodes,pods -A -o json);
                    repeatable; default: the demo cluster
  --server URL      ask a running gpusched instead (http://127.0.0.1:8888)
  --json            print the JSON answer instead of the table
)";

struct ExplainArgs {
  std::string pod_file;
  std::string name;
  std::string group;
  std::string replica;
  std::string workload;
  std::vector<std::string> snapshots;
  std::string server;
  bool json = false;
};

StatusOr<ExplainArgs> ParseExplainArgs(int argc, char** argv) {
  ExplainArgs a;
  for (int i = 0; i < argc; ++i) {
    std::string_view flag = argv[i];
    auto value = [&]() -> StatusOr<std::string> {
      if (i + 1 >= argc) return InvalidArgumentError(fmt::format("{} needs a value", flag));
      return std::string(argv[++i]);
    };
    if (flag == "--json") {
      a.json = true;
    } else if (flag == "--pod") {
      GPUSCHED_ASSIGN_OR_RETURN(a.pod_file, value());
    } else if (flag == "--name") {
      GPUSCHED_ASSIGN_OR_RETURN(a.name, value());
    } else if (flag == "--pod-group") {
      GPUSCHED_ASSIGN_OR_RETURN(a.group, value());
    } else if (flag == "--workload") {
      GPUSCHED_ASSIGN_OR_RETURN(a.workload, value());
    } else if (flag == "--replica") {
      GPUSCHED_ASSIGN_OR_RETURN(a.replica, value());
    } else if (flag == "--server") {
      GPUSCHED_ASSIGN_OR_RETURN(a.server, value());
    } else if (flag == "--snapshot") {
      GPUSCHED_ASSIGN_OR_RETURN(std::string f, value());
      a.snapshots.push_back(std::move(f));
    } else {
      return InvalidArgumentError(fmt::format("unknown flag {}", flag));
    }
  }
  if (int(!a.pod_file.empty()) + int(!a.name.empty()) + int(!a.group.empty()) + int(!a.workload.empty()) != 1) {
    return InvalidArgumentError("give exactly one of --pod, --name, --pod-group and --workload");
  }
  if (!a.replica.empty() && a.group.empty()) return InvalidArgumentError("--replica needs --pod-group");
  if (!a.name.empty() && a.server.empty()) return InvalidArgumentError("--name needs --server (offline, give --pod)");
  if (!a.server.empty() && !a.snapshots.empty()) return InvalidArgumentError("--server and --snapshot exclude each other");
  return a;
}

StatusOr<std::string> AskServer(const ExplainArgs& a) {
  kubeapi::ApiConfig config;
  GPUSCHED_RETURN_IF_ERROR(kubeapi::ParseServerUrl(a.server, &config));
  GPUSCHED_ASSIGN_OR_RETURN(std::unique_ptr<kubeapi::ApiClient> client, kubeapi::ApiClient::Create(config));
  std::string query = a.json ? "" : "format=text";
  StatusOr<kubeapi::ApiResponse> r = InvalidArgumentError("");
  if (!a.group.empty()) {
    std::string replica = a.replica.empty() ? "" : "&replica=" + a.replica;
    r = client->Send("GET", fmt::format("/explain?podGroup={}{}{}{}", a.group, replica, query.empty() ? "" : "&", query));
  } else if (!a.workload.empty()) {
    r = client->Send("GET", fmt::format("/explain?workload={}{}{}", a.workload, query.empty() ? "" : "&", query));
  } else if (!a.name.empty()) {
    r = client->Send("GET", fmt::format("/explain?pod={}{}{}", a.name, query.empty() ? "" : "&", query));
  } else {
    GPUSCHED_ASSIGN_OR_RETURN(std::string pod, ReadPodFile(a.pod_file));
    r = client->Send("POST", query.empty() ? "/explain" : "/explain?" + query, pod);
  }
  if (!r.ok()) return r.status();
  if (r->status != 200) return FailedPreconditionError(fmt::format("{} answered {}: {}", a.server, r->status, r->body));
  return r->body;
}

StatusOr<std::string> ExplainOffline(const ExplainArgs& a) {
  GPUSCHED_ASSIGN_OR_RETURN(std::unique_ptr<OfflineCluster> cluster, OfflineCluster::Load(a.snapshots));
  if (!a.group.empty()) {
    GPUSCHED_ASSIGN_OR_RETURN(extender::GroupExplanation e, cluster->service().ExplainGroup(a.group, a.replica));
    return a.json ? extender::GroupExplanationJson(e) : extender::GroupExplanationText(e);
  }
  if (!a.workload.empty()) {
    GPUSCHED_ASSIGN_OR_RETURN(extender::WorkloadExplanation e, cluster->service().ExplainWorkload(a.workload));
    return a.json ? extender::WorkloadExplanationJson(e) : extender::WorkloadExplanationText(e);
  }
  GPUSCHED_ASSIGN_OR_RETURN(std::string pod, ReadPodFile(a.pod_file));
  GPUSCHED_ASSIGN_OR_RETURN(extender::Explanation e, cluster->service().Explain(pod));
  return a.json ? extender::ExplanationJson(e, cluster->service().helper()) : extender::ExplanationText(e);
}

}  // namespace

int RunExplain(int argc, char** argv) {
  return RunAnswering<ExplainArgs>("explain", kExplainUsage, argc, argv, ParseExplainArgs, [](const ExplainArgs& a) {
    return a.server.empty() ? ExplainOffline(a) : AskServer(a);
  });
}

}  // namespace gpusched::cli
