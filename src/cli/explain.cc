#include "cli/explain.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "demo/demo_cluster.h"
#include "gpusched/extender/service.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/json/json.h"
#include "gpusched/kubeapi/api_client.h"
#include "gpusched/kubejson/objects.h"
#include "gpusched/kubejson/snapshot_source.h"

namespace gpusched::cli {
namespace {

constexpr std::string_view kUsage = R"(usage: gpusched explain (--pod FILE | --name NAMESPACE/NAME) [flags]

Says why a pod fits where it does, or does not fit anywhere: per node the mode and state, a
reason per GPU, the score and rank where it fits, and the cheapest eviction of lower-priority
pods that would make room (README: Preemption and explain).

  --pod FILE        the pod, as JSON or YAML (kubectl get pod NAME -o yaml); "-" reads stdin
  --name NS/NAME    with --server: a pod the server knows (seen in filter, or bound)
  --snapshot FILE   judge it against a cluster file (kubectl get nodes,pods -A -o json);
                    repeatable; default: the demo cluster
  --server URL      ask a running gpusched instead (http://127.0.0.1:8888)
  --json            print the JSON answer instead of the table
)";

struct Args {
  std::string pod_file;
  std::string name;
  std::vector<std::string> snapshots;
  std::string server;
  bool json = false;
};

StatusOr<Args> ParseArgs(int argc, char** argv) {
  Args a;
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
    } else if (flag == "--server") {
      GPUSCHED_ASSIGN_OR_RETURN(a.server, value());
    } else if (flag == "--snapshot") {
      GPUSCHED_ASSIGN_OR_RETURN(std::string f, value());
      a.snapshots.push_back(std::move(f));
    } else {
      return InvalidArgumentError(fmt::format("unknown flag {}", flag));
    }
  }
  if (a.pod_file.empty() == a.name.empty()) return InvalidArgumentError("give exactly one of --pod and --name");
  if (!a.name.empty() && a.server.empty()) return InvalidArgumentError("--name needs --server (offline, give --pod)");
  if (!a.server.empty() && !a.snapshots.empty()) return InvalidArgumentError("--server and --snapshot exclude each other");
  return a;
}

// A YAML value as JSON: plain scalars that read as numbers, booleans or null become those (as
// the API server would have typed them); quoted ones stay strings.
void AppendYamlAsJson(const YAML::Node& n, std::string* out) {
  if (n.IsMap()) {
    out->push_back('{');
    bool first = true;
    for (const auto& kv : n) {
      if (!first) out->push_back(',');
      first = false;
      json::AppendString(out, kv.first.as<std::string>());
      out->push_back(':');
      AppendYamlAsJson(kv.second, out);
    }
    out->push_back('}');
  } else if (n.IsSequence()) {
    out->push_back('[');
    for (size_t i = 0; i < n.size(); ++i) {
      if (i > 0) out->push_back(',');
      AppendYamlAsJson(n[i], out);
    }
    out->push_back(']');
  } else if (n.IsNull()) {
    out->append("null");
  } else {
    std::string s = n.Scalar();
    int64_t number = 0;
    bool plain = n.Tag() == "?";
    if (plain && (s == "true" || s == "false")) {
      out->append(s);
    } else if (plain && YAML::convert<int64_t>::decode(n, number)) {
      out->append(std::to_string(number));
    } else {
      json::AppendString(out, s);
    }
  }
}

StatusOr<std::string> ReadPod(const std::string& file) {
  std::stringstream text;
  if (file == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(file);
    if (!in) return NotFoundError(fmt::format("--pod {}: cannot be read", file));
    text << in.rdbuf();
  }
  std::string s = text.str();
  size_t start = s.find_first_not_of(" \t\r\n");
  if (start != std::string::npos && s[start] == '{') return s;
  try {
    std::string out;
    AppendYamlAsJson(YAML::Load(s), &out);
    return out;
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(fmt::format("--pod {}: neither JSON nor YAML: {}", file, e.what()));
  }
}

StatusOr<std::string> AskServer(const Args& a) {
  kubeapi::ApiConfig config;
  GPUSCHED_RETURN_IF_ERROR(kubeapi::ParseServerUrl(a.server, &config));
  GPUSCHED_ASSIGN_OR_RETURN(std::unique_ptr<kubeapi::ApiClient> client, kubeapi::ApiClient::Create(config));
  std::string query = a.json ? "" : "format=text";
  StatusOr<kubeapi::ApiResponse> r = InvalidArgumentError("");
  if (!a.name.empty()) {
    r = client->Send("GET", fmt::format("/explain?pod={}{}{}", a.name, query.empty() ? "" : "&", query));
  } else {
    GPUSCHED_ASSIGN_OR_RETURN(std::string pod, ReadPod(a.pod_file));
    r = client->Send("POST", query.empty() ? "/explain" : "/explain?" + query, pod);
  }
  if (!r.ok()) return r.status();
  if (r->status != 200) return FailedPreconditionError(fmt::format("{} answered {}: {}", a.server, r->status, r->body));
  return r->body;
}

StatusOr<std::string> ExplainOffline(const Args& a) {
  ClusterObjects objects;
  if (a.snapshots.empty()) {
    GPUSCHED_RETURN_IF_ERROR(kubejson::AppendClusterJson(demo::DemoClusterJson(), &objects));
  } else {
    GPUSCHED_ASSIGN_OR_RETURN(objects, kubejson::LoadSnapshotFiles(a.snapshots));
  }
  inventory::Inventory inventory;
  inventory.ReplaceCluster(std::move(objects));
  extender::Service service(&inventory, extender::ServiceOptions{});
  GPUSCHED_ASSIGN_OR_RETURN(std::string pod, ReadPod(a.pod_file));
  return service.Explain(pod, !a.json);
}

}  // namespace

int RunExplain(int argc, char** argv) {
  if (argc > 0 && (std::string_view(argv[0]) == "--help" || std::string_view(argv[0]) == "-h")) {
    std::fputs(kUsage.data(), stdout);
    return 0;
  }
  StatusOr<Args> args = ParseArgs(argc, argv);
  if (!args.ok()) {
    std::fprintf(stderr, "gpusched explain: %s\n%s", args.status().message().c_str(), kUsage.data());
    return 2;
  }
  StatusOr<std::string> answer = args->server.empty() ? ExplainOffline(*args) : AskServer(*args);
  if (!answer.ok()) {
    std::fprintf(stderr, "gpusched explain: %s\n", answer.status().message().c_str());
    return 1;
  }
  std::fputs(answer->c_str(), stdout);
  return 0;
}

}  // namespace gpusched::cli
