// deploy/ and scheduler-config/: every document parses, names only kinds, fields, resources and
// verbs that exist, and the pieces agree with each other and with what gpusched really does.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cluster_json.h"
#include "dra_json.h"
#include "fake_apiserver.h"
#include "gpusched/config/config.h"
#include "live_replica.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

const std::string kRoot = GPUSCHED_SOURCE_DIR;

std::vector<YAML::Node> Documents(const std::string& relative) {
  std::ifstream in(kRoot + "/" + relative);
  std::stringstream s;
  s << in.rdbuf();
  std::vector<YAML::Node> out;
  for (YAML::Node& d : YAML::LoadAll(s.str())) {
    if (d && !d.IsNull()) out.push_back(d);
  }
  return out;
}

// The fields of the Kubernetes objects the manifests use, as the API reference names them.
// A leaf (~) takes any scalar or list of scalars; "*" takes anything (labels, free maps); a list
// holds the schema of its elements.
constexpr const char* kSchema = R"(
meta: &meta {name: ~, namespace: ~, labels: "*", annotations: "*", generateName: ~}
selector: &selector {matchLabels: "*", matchExpressions: "*"}
probe: &probe
  httpGet: {path: ~, port: ~, scheme: ~, host: ~}
  initialDelaySeconds: ~
  periodSeconds: ~
  timeoutSeconds: ~
  failureThreshold: ~
  successThreshold: ~
container: &container
  name: ~
  image: ~
  imagePullPolicy: ~
  command: ~
  args: ~
  env: [{name: ~, value: ~}]
  ports: [{name: ~, containerPort: ~, protocol: ~}]
  livenessProbe: *probe
  readinessProbe: *probe
  startupProbe: *probe
  resources: {requests: "*", limits: "*"}
  securityContext:
    allowPrivilegeEscalation: ~
    readOnlyRootFilesystem: ~
    runAsNonRoot: ~
    runAsUser: ~
    capabilities: {drop: ~, add: ~}
  volumeMounts: [{name: ~, mountPath: ~, subPath: ~, readOnly: ~}]
podspec: &podspec
  serviceAccountName: ~
  priorityClassName: ~
  automountServiceAccountToken: ~
  terminationGracePeriodSeconds: ~
  nodeSelector: "*"
  tolerations: "*"
  securityContext:
    runAsNonRoot: ~
    runAsUser: ~
    runAsGroup: ~
    fsGroup: ~
    seccompProfile: {type: ~}
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: *selector, topologyKey: ~}]
      preferredDuringSchedulingIgnoredDuringExecution: "*"
  containers: [*container]
  volumes:
  - name: ~
    configMap: {name: ~, items: "*"}
    secret: {secretName: ~, items: "*"}
rule: &rule {apiGroups: ~, resources: ~, resourceNames: ~, verbs: ~}
ref: &ref {apiGroup: ~, kind: ~, name: ~}
subject: &subject {kind: ~, name: ~, namespace: ~, apiGroup: ~}
kinds:
  v1/ServiceAccount: {apiVersion: ~, kind: ~, metadata: *meta}
  v1/ConfigMap: {apiVersion: ~, kind: ~, metadata: *meta, data: "*"}
  v1/Service:
    apiVersion: ~
    kind: ~
    metadata: *meta
    spec: {selector: "*", type: ~, ports: [{name: ~, port: ~, targetPort: ~, protocol: ~}]}
  rbac.authorization.k8s.io/v1/ClusterRole: {apiVersion: ~, kind: ~, metadata: *meta, rules: [*rule]}
  rbac.authorization.k8s.io/v1/Role: {apiVersion: ~, kind: ~, metadata: *meta, rules: [*rule]}
  rbac.authorization.k8s.io/v1/ClusterRoleBinding: {apiVersion: ~, kind: ~, metadata: *meta, roleRef: *ref, subjects: [*subject]}
  rbac.authorization.k8s.io/v1/RoleBinding: {apiVersion: ~, kind: ~, metadata: *meta, roleRef: *ref, subjects: [*subject]}
  apps/v1/Deployment:
    apiVersion: ~
    kind: ~
    metadata: *meta
    spec:
      replicas: ~
      revisionHistoryLimit: ~
      selector: *selector
      strategy: "*"
      template: {metadata: *meta, spec: *podspec}
  policy/v1/PodDisruptionBudget:
    apiVersion: ~
    kind: ~
    metadata: *meta
    spec: {minAvailable: ~, maxUnavailable: ~, selector: *selector}
  admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration:
    apiVersion: ~
    kind: ~
    metadata: *meta
    webhooks:
    - name: ~
      admissionReviewVersions: ~
      sideEffects: ~
      failurePolicy: ~
      timeoutSeconds: ~
      matchPolicy: ~
      rules: [{apiGroups: ~, apiVersions: ~, operations: ~, resources: ~, scope: ~}]
      matchConditions: [{name: ~, expression: ~}]
      objectSelector: *selector
      namespaceSelector: *selector
      clientConfig:
        url: ~
        caBundle: ~
        service: {namespace: ~, name: ~, path: ~, port: ~}
  kustomize.config.k8s.io/v1beta1/Kustomization: {apiVersion: ~, kind: ~, resources: ~, namespace: ~}
  kubescheduler.config.k8s.io/v1/KubeSchedulerConfiguration:
    apiVersion: ~
    kind: ~
    parallelism: ~
    percentageOfNodesToScore: ~
    podInitialBackoffSeconds: ~
    podMaxBackoffSeconds: ~
    clientConnection: {kubeconfig: ~, acceptContentTypes: ~, contentType: ~, qps: ~, burst: ~}
    leaderElection:
      leaderElect: ~
      leaseDuration: ~
      renewDeadline: ~
      retryPeriod: ~
      resourceLock: ~
      resourceName: ~
      resourceNamespace: ~
    profiles: [{schedulerName: ~, percentageOfNodesToScore: ~, plugins: "*", pluginConfig: "*"}]
    extenders:
    - urlPrefix: ~
      filterVerb: ~
      preemptVerb: ~
      prioritizeVerb: ~
      weight: ~
      bindVerb: ~
      enableHTTPS: ~
      tlsConfig: {insecure: ~, serverName: ~, certFile: ~, keyFile: ~, caFile: ~, certData: ~, keyData: ~, caData: ~}
      httpTimeout: ~
      nodeCacheCapable: ~
      managedResources: [{name: ~, ignoredByScheduler: ~}]
      ignorable: ~
)";

// Returns the first field of `doc` that `schema` does not have, as a path, or "".
std::string UnknownField(const YAML::Node& doc, const YAML::Node& schema, const std::string& path) {
  if (schema.IsScalar() && schema.as<std::string>() == "*") return "";
  if (!schema || schema.IsNull()) {
    if (doc.IsMap()) return path + " (want a value, got a mapping)";
    return "";
  }
  if (schema.IsSequence()) {
    if (!doc.IsSequence()) return path + " (want a list)";
    for (size_t i = 0; i < doc.size(); ++i) {
      std::string bad = UnknownField(doc[i], schema[0], fmt::format("{}[{}]", path, i));
      if (!bad.empty()) return bad;
    }
    return "";
  }
  if (!doc.IsMap()) return path + " (want a mapping)";
  for (const auto& kv : doc) {
    std::string key = kv.first.as<std::string>();
    if (!schema[key].IsDefined()) return path + "." + key;
    std::string bad = UnknownField(kv.second, schema[key], path + "." + key);
    if (!bad.empty()) return bad;
  }
  return "";
}

std::string Check(const YAML::Node& doc) {
  static const YAML::Node schema = YAML::Load(kSchema);
  std::string api = doc["apiVersion"].as<std::string>("");
  std::string kind = doc["kind"].as<std::string>("");
  YAML::Node s = schema["kinds"][api + "/" + kind];
  if (!s.IsDefined()) return fmt::format("unknown kind {}/{}", api, kind);
  return UnknownField(doc, s, kind);
}

// The resources each API group serves, and the verbs RBAC knows.
const std::map<std::string, std::set<std::string>> kResources = {
    {"", {"pods", "pods/binding", "bindings", "nodes", "events", "configmaps", "secrets", "services"}},
    {"events.k8s.io", {"events"}},
    {"coordination.k8s.io", {"leases"}},
    {"resource.k8s.io",
     {"resourceslices", "resourceclaims", "resourceclaims/status", "resourceclaims/binding", "deviceclasses", "resourceclaimtemplates"}},
};
const std::set<std::string> kVerbs = {"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"};

std::vector<YAML::Node> AllManifests() {
  std::vector<YAML::Node> out;
  for (const char* f : {"deploy/rbac.yaml", "deploy/configmap.yaml", "deploy/deployment.yaml",
                        "deploy/validating-webhook.yaml", "deploy/kustomization.yaml",
                        "scheduler-config/kube-scheduler-config.yaml",
                        "scheduler-config/kube-scheduler-config-dra-owner.yaml"}) {
    std::vector<YAML::Node> docs = Documents(f);
    EXPECT_FALSE(docs.empty()) << f;
    out.insert(out.end(), docs.begin(), docs.end());
  }
  return out;
}

const YAML::Node* Find(const std::vector<YAML::Node>& docs, const std::string& kind, const std::string& name) {
  for (const YAML::Node& d : docs) {
    if (d["kind"].as<std::string>("") == kind && d["metadata"]["name"].as<std::string>("") == name) return &d;
  }
  return nullptr;
}

TEST(Manifests, EveryDocumentNamesOnlyKindsAndFieldsThatExist) {
  std::vector<YAML::Node> docs = AllManifests();
  EXPECT_GE(docs.size(), 14u);
  for (const YAML::Node& d : docs) EXPECT_EQ(Check(d), "") << YAML::Dump(d).substr(0, 200);
  // The schema check itself catches a misspelt field.
  YAML::Node bad = YAML::Clone(*Find(docs, "Deployment", "gpu-scheduler"));
  bad["spec"]["template"]["spec"]["containers"][0]["readinessProbes"] = "x";
  EXPECT_EQ(Check(bad), "Deployment.spec.template.spec.containers[0].readinessProbes");
}

TEST(Manifests, RbacNamesRealResourcesAndVerbs) {
  for (const YAML::Node& d : AllManifests()) {
    if (!d["rules"]) continue;
    for (const YAML::Node& rule : d["rules"]) {
      for (const YAML::Node& group : rule["apiGroups"]) {
        ASSERT_TRUE(kResources.contains(group.as<std::string>())) << group;
        for (const YAML::Node& r : rule["resources"]) {
          EXPECT_TRUE(kResources.at(group.as<std::string>()).contains(r.as<std::string>())) << group << " " << r;
        }
      }
      for (const YAML::Node& v : rule["verbs"]) EXPECT_TRUE(kVerbs.contains(v.as<std::string>())) << v;
    }
  }
}

TEST(Manifests, TheConfigsAgreeWithEachOtherAndParse) {
  std::vector<YAML::Node> docs = AllManifests();
  const YAML::Node* cm = Find(docs, "ConfigMap", "gpu-scheduler-config");
  ASSERT_NE(cm, nullptr);
  // gpusched's own configuration is read by gpusched's own parser.
  StatusOr<config::Config> c = config::ParseConfig((*cm)["data"]["gpusched.yaml"].as<std::string>());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->cluster.in_cluster);
  // kube-scheduler's configuration: valid fields, and the extender is this gpusched.
  YAML::Node ks = YAML::Load((*cm)["data"]["kube-scheduler-config.yaml"].as<std::string>());
  EXPECT_EQ(Check(ks), "");
  auto check_extender = [](const YAML::Node& k, const config::Config& gpusched) {
    const YAML::Node& e = k["extenders"][0];
    EXPECT_EQ(e["urlPrefix"].as<std::string>(),
              fmt::format("http://{}:{}{}", gpusched.server.host, gpusched.server.port, gpusched.path_prefix));
    EXPECT_GT(e["weight"].as<int>(), 0);  // required with prioritizeVerb
    EXPECT_TRUE(e["nodeCacheCapable"].as<bool>());
    EXPECT_FALSE(e["ignorable"].as<bool>());
    EXPECT_EQ(k["leaderElection"]["resourceName"].as<std::string>(), "gpu-scheduler");
  };
  check_extender(ks, *c);
  for (const YAML::Node& d : Documents("scheduler-config/kube-scheduler-config.yaml")) {
    int binders = 0;
    for (const YAML::Node& e : d["extenders"]) binders += e["bindVerb"] ? 1 : 0;
    EXPECT_LE(binders, 1);
    EXPECT_EQ(d["profiles"][0]["percentageOfNodesToScore"].as<int>(), 100);
  }
  // The documented gpusched.yaml parses too.
  std::ifstream in(kRoot + "/scheduler-config/gpusched.yaml");
  std::stringstream s;
  s << in.rdbuf();
  StatusOr<config::Config> documented = config::ParseConfig(s.str());
  ASSERT_TRUE(documented.ok()) << documented.status().message();
  check_extender(Documents("scheduler-config/kube-scheduler-config.yaml")[0], *documented);

  // The Deployment mounts what the configs name, as the ServiceAccount the RBAC grants.
  const YAML::Node& pod = (*Find(docs, "Deployment", "gpu-scheduler"))["spec"]["template"]["spec"];
  EXPECT_NE(Find(docs, "ServiceAccount", pod["serviceAccountName"].as<std::string>()), nullptr);
  EXPECT_EQ(pod["volumes"][0]["configMap"]["name"].as<std::string>(), "gpu-scheduler-config");
  EXPECT_GE((*Find(docs, "Deployment", "gpu-scheduler"))["spec"]["replicas"].as<int>(), 2);
  std::string tls_dir = pod["containers"][1]["volumeMounts"][1]["mountPath"].as<std::string>();
  EXPECT_EQ(c->webhook.cert_file, tls_dir + "/tls.crt");
  // The webhook's Service reaches the webhook listener on the pods.
  const YAML::Node* svc = Find(docs, "Service", "gpusched-webhook");
  ASSERT_NE(svc, nullptr);
  EXPECT_EQ((*svc)["spec"]["selector"]["app"].as<std::string>(),
            (*Find(docs, "Deployment", "gpu-scheduler"))["spec"]["template"]["metadata"]["labels"]["app"].as<std::string>());
  EXPECT_THAT(c->webhook.listen, ::testing::EndsWith(":" + (*svc)["spec"]["ports"][0]["targetPort"].as<std::string>()));
  const YAML::Node* hook = Find(docs, "ValidatingWebhookConfiguration", "gpusched-node-mode-guard");
  ASSERT_NE(hook, nullptr);
  EXPECT_EQ((*hook)["webhooks"][0]["clientConfig"]["service"]["path"].as<std::string>(), "/validate/node");
}

// Every request gpusched makes, as an RBAC (group, resource, verb); the ClusterRole must grant
// exactly these.
using Permission = std::tuple<std::string, std::string, std::string>;

// API discovery (GET /apis/<group>) is a non-resource URL every authenticated user may read
// (the default ClusterRole system:discovery); no role of ours grants it.
bool IsDiscovery(const testing::RecordedRequest& r) {
  std::string path = r.target.substr(0, r.target.find('?'));
  return r.method == "GET" && path.starts_with("/apis/") && path.find('/', 6) == std::string::npos;
}

Permission PermissionOf(const testing::RecordedRequest& r) {
  std::string path = r.target.substr(0, r.target.find('?'));
  bool watch = r.target.find("watch=1") != std::string::npos;
  std::vector<std::string> seg;
  for (size_t at = 1; at < path.size();) {
    size_t slash = path.find('/', at);
    if (slash == std::string::npos) slash = path.size();
    seg.push_back(path.substr(at, slash - at));
    at = slash + 1;
  }
  size_t i = seg[0] == "api" ? 2 : 3;
  std::string group = seg[0] == "api" ? "" : seg[1];
  if (i < seg.size() && seg[i] == "namespaces") i += 2;
  std::string resource = seg[i];
  bool named = i + 1 < seg.size();
  if (i + 2 < seg.size()) resource += "/" + seg[i + 2];
  std::string verb = r.method == "GET" ? (watch ? "watch" : named ? "get" : "list")
                     : r.method == "POST" ? "create"
                     : r.method == "PATCH" ? "patch"
                     : r.method == "PUT"   ? "update"
                                           : "delete";
  return {group, resource, verb};
}

std::set<Permission> Granted(const std::string& role) {
  std::set<Permission> granted;
  for (const YAML::Node& d : Documents("deploy/rbac.yaml")) {
    if (d["kind"].as<std::string>() != "ClusterRole" || d["metadata"]["name"].as<std::string>() != role) continue;
    for (const YAML::Node& rule : d["rules"]) {
      for (const YAML::Node& g : rule["apiGroups"]) {
        for (const YAML::Node& r : rule["resources"]) {
          for (const YAML::Node& v : rule["verbs"]) granted.insert({g.as<std::string>(), r.as<std::string>(), v.as<std::string>()});
        }
      }
    }
  }
  return granted;
}

TEST(Manifests, TheDraOwnerRoleGrantsExactlyWhatOwnerModeAddsToTheBaseRole) {
  std::set<Permission> base = Granted("gpusched");
  std::set<Permission> owner = Granted("gpusched-dra-owner");
  ASSERT_FALSE(owner.empty());
  testing::FakeApiServer api;
  api.Put("nodes", testing::DraNode("dra-a"));
  api.Put("resourceslices", testing::GpuSlice("dra-a", 2));
  api.Put("deviceclasses", std::string(testing::kGpuClass));
  api.Put("resourceclaims", testing::Claim("train", testing::ClaimSpec(1, "")));
  std::string pod = api.Put("pods", testing::ClaimPod("trainer", "train"));
  testing::LiveReplica replica(api.url(), {}, {}, {}, /*dra_owner=*/true);
  ASSERT_TRUE(replica.sync->WaitSynced(std::chrono::seconds(10)));
  ASSERT_TRUE(testing::Eventually([&] { return replica.inventory->Snapshot()->dra().FindClaim("ml", "train") != nullptr; }));
  replica.service->Filter(testing::ArgsWithNames(pod, {"dra-a"}));
  EXPECT_THAT(replica.service->Bind(testing::BindJson("trainer", "ml", "trainer", "dra-a")), HasSubstr(R"("Error":"")"));
  std::set<Permission> used;
  for (const testing::RecordedRequest& r : api.Requests()) {
    if (!IsDiscovery(r)) used.insert(PermissionOf(r));
  }
  for (const Permission& p : used) {
    EXPECT_TRUE(base.contains(p) || owner.contains(p)) << "used but not granted: " << std::get<1>(p) << " " << std::get<2>(p);
  }
  for (const Permission& p : owner) {
    if (std::get<1>(p) == "resourceclaims/binding") continue;  // checked by the API server, never requested
    EXPECT_TRUE(used.contains(p)) << "granted but never used: " << std::get<1>(p) << " " << std::get<2>(p);
  }
}

TEST(Manifests, TheClusterRoleGrantsExactlyWhatGpuschedUses) {
  std::set<Permission> granted;
  for (const YAML::Node& d : Documents("deploy/rbac.yaml")) {
    if (d["kind"].as<std::string>() != "ClusterRole" || d["metadata"]["name"].as<std::string>() != "gpusched") continue;
    for (const YAML::Node& rule : d["rules"]) {
      for (const YAML::Node& g : rule["apiGroups"]) {
        for (const YAML::Node& r : rule["resources"]) {
          for (const YAML::Node& v : rule["verbs"]) granted.insert({g.as<std::string>(), r.as<std::string>(), v.as<std::string>()});
        }
      }
    }
  }
  ASSERT_FALSE(granted.empty());

  // Exercise every path: sync, a bind whose node booking conflicts once, a refused bind, an event.
  testing::FakeApiServer api;
  api.Put("nodes", testing::NvidiaNode("w1", 1).ToJson());
  std::string pod = testing::PodJson{.name = "p", .namespace_name = "ml", .uid = "u-p", .containers = {testing::WholeGpus("c", 1)}}.ToJson();
  std::string big = testing::PodJson{.name = "big", .namespace_name = "ml", .uid = "u-big", .containers = {testing::WholeGpus("c", 4)}}.ToJson();
  std::string shared = testing::PodJson{.name = "s", .namespace_name = "ml", .uid = "u-s", .containers = {testing::Mgpu("c", 20, 1024)}}.ToJson();
  api.Put("pods", pod);
  api.Put("nodes", testing::MgpuNode("m1", 1, 16384).ToJson());
  api.Put("pods", shared);
  testing::LiveReplica replica(api.url());
  ASSERT_TRUE(replica.sync->WaitSynced(std::chrono::seconds(10)));
  ASSERT_TRUE(testing::Eventually([&] { return api.open_watches() == 5; }));
  replica.service->Filter(testing::ArgsWithNames(pod, {"w1"}));
  replica.service->Filter(testing::ArgsWithNames(shared, {"m1"}));
  api.FailNext("PATCH", "/api/v1/nodes/w1", 409);
  EXPECT_THAT(replica.service->Bind(testing::BindJson("p", "ml", "u-p", "w1")), HasSubstr(R"("Error":"")"));
  EXPECT_THAT(replica.service->Bind(testing::BindJson("s", "ml", "u-s", "m1")), HasSubstr(R"("Error":"")"));
  replica.service->Filter(testing::ArgsWithNames(big, {"w1"}));
  ASSERT_TRUE(replica.events->WaitIdle(std::chrono::seconds(10)));

  std::set<Permission> used;
  for (const testing::RecordedRequest& r : api.Requests()) {
    if (!IsDiscovery(r)) used.insert(PermissionOf(r));
  }
  for (const Permission& p : used) {
    EXPECT_TRUE(granted.contains(p)) << "used but not granted: " << std::get<0>(p) << " " << std::get<1>(p) << " " << std::get<2>(p);
  }
  for (const Permission& p : granted) {
    EXPECT_TRUE(used.contains(p)) << "granted but never used: " << std::get<0>(p) << " " << std::get<1>(p) << " "
                                  << std::get<2>(p);
  }
}

}  // namespace
}  // namespace gpusched
