// deploy/ and scheduler-config/: every document parses, names only kinds, fields, resources and
// verbs that exist (KubeSchedulerConfigurations also with the right types), and the pieces agree
// with each other and with what gpusched really does.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/sha.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cluster_json.h"
#include "dra_json.h"
#include "fake_apiserver.h"
#include "gpusched/config/config.h"
#include "gpusched/kubeapi/api_config.h"
#include "gpusched/kubeapi/node_agent_api.h"
#include "gpusched/common/time_format.h"
#include "live_replica.h"

namespace gpusched {
namespace manifests_test {

using ::testing::HasSubstr;

const std::string kRoot = GPUSCHED_SOURCE_DIR;
const std::vector<std::string> kVariants = {"cache", "mtls", "dra-owner"};

std::string Read(const std::string& relative) {
  std::ifstream in(kRoot + "/" + relative, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<YAML::Node> Documents(const std::string& relative) {
  std::vector<YAML::Node> out;
  for (YAML::Node& d : YAML::LoadAll(Read(relative))) {
    if (d && !d.IsNull()) out.push_back(d);
  }
  return out;
}

// Every YAML file under `dir` (relative to the source root), sorted.
std::vector<std::string> YamlFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(kRoot + "/" + dir)) {
    if (e.path().extension() == ".yaml") out.push_back(std::filesystem::relative(e.path(), kRoot).string());
  }
  std::sort(out.begin(), out.end());
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
  restartPolicy: ~
  command: ~
  args: ~
  env: [{name: ~, value: ~, valueFrom: {fieldRef: {fieldPath: ~}}}]
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
  hostPID: ~
  runtimeClassName: ~
  automountServiceAccountToken: ~
  priorityClassName: ~
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
  initContainers: [*container]
  containers: [*container]
  volumes:
  - name: ~
    configMap: {name: ~, items: "*"}
    secret: {secretName: ~, items: "*"}
    hostPath: {path: ~, type: ~}
    projected:
      sources:
      - serviceAccountToken: {path: ~, expirationSeconds: ~, audience: ~}
        configMap: {name: ~, items: [{key: ~, path: ~}]}
        downwardAPI: {items: [{path: ~, fieldRef: {fieldPath: ~}}]}
rule: &rule {apiGroups: ~, resources: ~, resourceNames: ~, verbs: ~}
ref: &ref {apiGroup: ~, kind: ~, name: ~}
subject: &subject {kind: ~, name: ~, namespace: ~, apiGroup: ~}
resourcerule: &resourcerule {apiGroups: ~, apiVersions: ~, operations: ~, resources: ~, resourceNames: ~, scope: ~}
kinds:
  v1/ServiceAccount: {apiVersion: ~, kind: ~, metadata: *meta, automountServiceAccountToken: ~}
  v1/Secret: {apiVersion: ~, kind: ~, metadata: *meta, type: ~, data: "*", stringData: "*"}
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
      strategy: {type: ~, rollingUpdate: {maxSurge: ~, maxUnavailable: ~}}
      template: {metadata: *meta, spec: *podspec}
  apps/v1/DaemonSet:
    apiVersion: ~
    kind: ~
    metadata: *meta
    spec:
      selector: *selector
      updateStrategy: {type: ~, rollingUpdate: {maxUnavailable: ~, maxSurge: ~}}
      template: {metadata: *meta, spec: *podspec}
  policy/v1/PodDisruptionBudget:
    apiVersion: ~
    kind: ~
    metadata: *meta
    spec: {minAvailable: ~, maxUnavailable: ~, selector: *selector}
  networking.k8s.io/v1/NetworkPolicy:
    apiVersion: ~
    kind: ~
    metadata: *meta
    spec:
      podSelector: *selector
      policyTypes: ~
      ingress: [{ports: [{protocol: ~, port: ~, endPort: ~}], from: "*"}]
      egress: "*"
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
      rules: [*resourcerule]
      matchConditions: [{name: ~, expression: ~}]
      objectSelector: *selector
      namespaceSelector: *selector
      clientConfig:
        url: ~
        caBundle: ~
        service: {namespace: ~, name: ~, path: ~, port: ~}
  # staging/src/k8s.io/api/admissionregistration/v1/types.go (GA in 1.30)
  admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy:
    apiVersion: ~
    kind: ~
    metadata: *meta
    spec:
      paramKind: {apiVersion: ~, kind: ~}
      matchConstraints:
        namespaceSelector: *selector
        objectSelector: *selector
        resourceRules: [*resourcerule]
        excludeResourceRules: [*resourcerule]
        matchPolicy: ~
      validations: [{expression: ~, message: ~, reason: ~, messageExpression: ~}]
      failurePolicy: ~
      auditAnnotations: [{key: ~, valueExpression: ~}]
      matchConditions: [{name: ~, expression: ~}]
      variables: [{name: ~, expression: ~}]
  admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding:
    apiVersion: ~
    kind: ~
    metadata: *meta
    spec: {policyName: ~, paramRef: "*", matchResources: "*", validationActions: ~}
  cert-manager.io/v1/Issuer: {apiVersion: ~, kind: ~, metadata: *meta, spec: {selfSigned: "*", ca: {secretName: ~}}}
  cert-manager.io/v1/Certificate:
    apiVersion: ~
    kind: ~
    metadata: *meta
    spec: {secretName: ~, dnsNames: ~, commonName: ~, duration: ~, renewBefore: ~, isCA: ~, issuerRef: {kind: ~, name: ~, group: ~}}
  kueue.x-k8s.io/v1beta2/AdmissionCheck:
    apiVersion: ~
    kind: ~
    metadata: *meta
    spec: {controllerName: ~, parameters: {apiGroup: ~, kind: ~, name: ~}}
  kueue.x-k8s.io/v1beta2/ResourceFlavor:
    apiVersion: ~
    kind: ~
    metadata: *meta
    spec: {nodeLabels: "*", nodeTaints: "*", tolerations: "*", topologyName: ~}
  kueue.x-k8s.io/v1beta2/ClusterQueue:
    apiVersion: ~
    kind: ~
    metadata: *meta
    spec:
      namespaceSelector: *selector
      cohortName: ~
      queueingStrategy: ~
      stopPolicy: ~
      preemption: "*"
      flavorFungibility: "*"
      fairSharing: "*"
      resourceGroups:
      - coveredResources: ~
        flavors: [{name: ~, resources: [{name: ~, nominalQuota: ~, borrowingLimit: ~, lendingLimit: ~}]}]
      admissionChecksStrategy: {admissionChecks: [{name: ~, onFlavors: ~}]}
  kueue.x-k8s.io/v1beta2/LocalQueue: {apiVersion: ~, kind: ~, metadata: *meta, spec: {clusterQueue: ~, stopPolicy: ~}}
  kustomize.config.k8s.io/v1beta1/Kustomization:
    {apiVersion: ~, kind: ~, resources: ~, namespace: ~, images: [{name: ~, newName: ~, newTag: ~, digest: ~}], patches: [{path: ~}]}
)";

// KubeSchedulerConfiguration v1, field by field with its Go type, from
// staging/src/k8s.io/kube-scheduler/config/v1/types.go and the component-base
// LeaderElectionConfiguration / ClientConnectionConfiguration it embeds. Types: bool, int (int32
// and int64), float (float32), string, duration (metav1.Duration: "10s"), bytes ([]byte: base64),
// "*" (runtime.RawExtension: any object); a list holds its elements' schema.
constexpr const char* kSchedulerSchema = R"(
pluginset: &pluginset {enabled: [{name: string, weight: int}], disabled: [{name: string, weight: int}]}
config:
  apiVersion: string
  kind: string
  parallelism: int
  leaderElection:
    leaderElect: bool
    leaseDuration: duration
    renewDeadline: duration
    retryPeriod: duration
    resourceLock: string
    resourceName: string
    resourceNamespace: string
  clientConnection: {kubeconfig: string, acceptContentTypes: string, contentType: string, qps: float, burst: int}
  enableProfiling: bool
  enableContentionProfiling: bool
  percentageOfNodesToScore: int
  podInitialBackoffSeconds: int
  podMaxBackoffSeconds: int
  delayCacheUntilActive: bool
  profiles:
  - schedulerName: string
    percentageOfNodesToScore: int
    plugins:
      preEnqueue: *pluginset
      queueSort: *pluginset
      preFilter: *pluginset
      filter: *pluginset
      postFilter: *pluginset
      preScore: *pluginset
      score: *pluginset
      reserve: *pluginset
      permit: *pluginset
      preBind: *pluginset
      bind: *pluginset
      postBind: *pluginset
      multiPoint: *pluginset
    pluginConfig: [{name: string, args: "*"}]
  extenders:
  - urlPrefix: string
    filterVerb: string
    preemptVerb: string
    prioritizeVerb: string
    weight: int
    bindVerb: string
    enableHTTPS: bool
    tlsConfig:
      {insecure: bool, serverName: string, certFile: string, keyFile: string, caFile: string, certData: bytes,
       keyData: bytes, caData: bytes}
    httpTimeout: duration
    nodeCacheCapable: bool
    managedResources: [{name: string, ignoredByScheduler: bool}]
    ignorable: bool
)";

// Returns the first field of `doc` that `schema` does not have, or whose value has the wrong type.
std::string SchedulerFieldProblem(const YAML::Node& doc, const YAML::Node& schema, const std::string& path) {
  if (schema.IsScalar()) {
    std::string type = schema.as<std::string>();
    if (type == "*") return "";
    if (!doc.IsScalar()) return path + " (want a " + type + ")";
    std::string v = doc.as<std::string>();
    static const std::map<std::string, std::regex> kTypes = {
        {"bool", std::regex("true|false")},
        {"int", std::regex("-?[0-9]+")},
        {"float", std::regex("-?[0-9]+(\\.[0-9]+)?")},
        {"string", std::regex("[\\s\\S]*")},
        {"duration", std::regex("([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+")},
        {"bytes", std::regex("[A-Za-z0-9+/]*=*")}};
    return std::regex_match(v, kTypes.at(type)) ? "" : fmt::format("{}: \"{}\" is not a {}", path, v, type);
  }
  if (schema.IsSequence()) {
    if (!doc.IsSequence()) return path + " (want a list)";
    for (size_t i = 0; i < doc.size(); ++i) {
      std::string bad = SchedulerFieldProblem(doc[i], schema[0], fmt::format("{}[{}]", path, i));
      if (!bad.empty()) return bad;
    }
    return "";
  }
  if (!doc.IsMap()) return path + " (want a mapping)";
  for (const auto& kv : doc) {
    std::string key = kv.first.as<std::string>();
    if (!schema[key].IsDefined()) return path + "." + key + " (no such field)";
    std::string bad = SchedulerFieldProblem(kv.second, schema[key], path + "." + key);
    if (!bad.empty()) return bad;
  }
  return "";
}

std::string CheckSchedulerConfig(const YAML::Node& doc) {
  static const YAML::Node schema = YAML::Load(kSchedulerSchema)["config"];
  return SchedulerFieldProblem(doc, schema, "KubeSchedulerConfiguration");
}

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
  if (api == "kubescheduler.config.k8s.io/v1" && kind == "KubeSchedulerConfiguration") return CheckSchedulerConfig(doc);
  YAML::Node s = schema["kinds"][api + "/" + kind];
  if (!s.IsDefined()) return fmt::format("unknown kind {}/{}", api, kind);
  return UnknownField(doc, s, kind);
}

// The resources each API group serves, and the verbs RBAC knows.
const std::map<std::string, std::set<std::string>> kResources = {
    {"", {"pods", "pods/binding", "pods/status", "pods/eviction", "bindings", "nodes", "namespaces", "events", "configmaps", "secrets", "services"}},
    {"events.k8s.io", {"events"}},
    {"coordination.k8s.io", {"leases"}},
    {"policy", {"poddisruptionbudgets"}},
    {"scheduling.k8s.io", {"priorityclasses", "podgroups", "workloads"}},
    {"scheduling.x-k8s.io", {"podgroups"}},
    {"kueue.x-k8s.io",
     {"workloads", "workloads/status", "admissionchecks", "admissionchecks/status", "resourceflavors", "clusterqueues", "localqueues"}},
    {"resource.k8s.io",
     {"resourceslices", "resourceclaims", "resourceclaims/status", "resourceclaims/binding", "deviceclasses", "resourceclaimtemplates",
      "devicetaintrules"}},
};
const std::set<std::string> kVerbs = {"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"};

// Every Kubernetes object shipped: deploy/ (all variants) and the KubeSchedulerConfigurations of
// scheduler-config/ (its gpusched*.yaml are gpusched's own configuration, checked below).
std::vector<YAML::Node> AllManifests() {
  std::vector<std::string> files = YamlFiles("deploy");
  for (const std::string& f : YamlFiles("scheduler-config")) {
    if (f.find("kube-scheduler-config") != std::string::npos) files.push_back(f);
  }
  std::vector<YAML::Node> out;
  for (const std::string& f : files) {
    std::vector<YAML::Node> docs = Documents(f);
    EXPECT_FALSE(docs.empty()) << f;
    // kube-scheduler reads one document from --config: one configuration per file.
    if (f.starts_with("scheduler-config/")) {
      EXPECT_EQ(docs.size(), 1u) << f;
    }
    out.insert(out.end(), docs.begin(), docs.end());
  }
  return out;
}

// The documents of one variant: deploy/common plus deploy/<variant>, as its kustomization lists.
std::vector<YAML::Node> VariantManifests(const std::string& variant) {
  std::vector<YAML::Node> out;
  for (const std::string& dir : {std::string("deploy/common"), "deploy/" + variant}) {
    YAML::Node k = Documents(dir + "/kustomization.yaml")[0];
    for (const YAML::Node& r : k["resources"]) {
      std::string name = r.as<std::string>();
      if (name == "../common") continue;
      std::vector<YAML::Node> docs = Documents(dir + "/" + name);
      EXPECT_FALSE(docs.empty()) << dir << "/" << name;
      out.insert(out.end(), docs.begin(), docs.end());
    }
  }
  return out;
}

const YAML::Node* Find(const std::vector<YAML::Node>& docs, const std::string& kind, const std::string& name) {
  for (const YAML::Node& d : docs) {
    if (d["kind"].as<std::string>("") == kind && d["metadata"]["name"].as<std::string>("") == name) return &d;
  }
  return nullptr;
}

std::string Sha256(const std::string& bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  std::string out;
  for (unsigned char c : digest) out += fmt::format("{:02x}", c);
  return out;
}

TEST(Manifests, EveryDocumentNamesOnlyKindsAndFieldsThatExist) {
  std::vector<YAML::Node> docs = AllManifests();
  EXPECT_GE(docs.size(), 30u);
  for (const YAML::Node& d : docs) EXPECT_EQ(Check(d), "") << YAML::Dump(d).substr(0, 200);
  // The schema checks themselves catch a misspelt field and a wrong type.
  std::vector<YAML::Node> cache = VariantManifests("cache");
  YAML::Node bad = YAML::Clone(*Find(cache, "Deployment", "gpu-scheduler"));
  bad["spec"]["template"]["spec"]["containers"][0]["readinessProbes"] = "x";
  EXPECT_EQ(Check(bad), "Deployment.spec.template.spec.containers[0].readinessProbes");
  YAML::Node ks = YAML::Load(Read("scheduler-config/kube-scheduler-config.yaml"));
  YAML::Node typo = YAML::Clone(ks);
  typo["extenders"][0]["nodeCacheCapabel"] = true;
  EXPECT_EQ(Check(typo), "KubeSchedulerConfiguration.extenders[0].nodeCacheCapabel (no such field)");
  YAML::Node wrong = YAML::Clone(ks);
  wrong["extenders"][0]["httpTimeout"] = 10;
  EXPECT_EQ(Check(wrong), "KubeSchedulerConfiguration.extenders[0].httpTimeout: \"10\" is not a duration");
  wrong = YAML::Clone(ks);
  wrong["leaderElection"]["leaderElect"] = "yes";
  EXPECT_EQ(Check(wrong), "KubeSchedulerConfiguration.leaderElection.leaderElect: \"yes\" is not a bool");
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

// Every KubeSchedulerConfiguration shipped elects its leader on a lease of its own: without
// leaderElection.resourceName it would default to kube-scheduler and fight the default scheduler.
TEST(Manifests, EverySchedulerConfigHasItsOwnLeaseAndNoManagedResources) {
  int configs = 0;
  for (const YAML::Node& d : AllManifests()) {
    if (d["kind"].as<std::string>("") != "KubeSchedulerConfiguration") continue;
    ++configs;
    EXPECT_TRUE(d["leaderElection"]["leaderElect"].as<bool>());
    EXPECT_EQ(d["leaderElection"]["resourceName"].as<std::string>(""), "gpu-scheduler");
    EXPECT_EQ(d["leaderElection"]["resourceNamespace"].as<std::string>(""), "kube-system");
    for (const YAML::Node& e : d["extenders"]) {
      EXPECT_FALSE(e["managedResources"]) << "claims-only pods would never reach gpusched";
      EXPECT_TRUE(e["filterVerb"] && e["prioritizeVerb"] && e["bindVerb"]);
      EXPECT_EQ(e["preemptVerb"].as<std::string>(""), "preempt") << "GPU-aware victims";
      EXPECT_FALSE(e["ignorable"].as<bool>());
    }
  }
  EXPECT_EQ(configs, 4);
}

// gpusched's own configurations parse with gpusched's parser.
TEST(Manifests, TheDocumentedGpuschedConfigsParse) {
  std::vector<std::string> parsed;
  for (const std::string& f : YamlFiles("scheduler-config")) {
    if (f.find("gpusched") == std::string::npos) continue;
    StatusOr<config::Config> c = config::ParseConfig(Read(f));
    EXPECT_TRUE(c.ok()) << f << ": " << c.status().message();
    parsed.push_back(std::filesystem::path(f).filename().string());
  }
  std::sort(parsed.begin(), parsed.end());
  EXPECT_EQ(parsed, (std::vector<std::string>{"gpusched-mtls.yaml", "gpusched.yaml"}));
}

// Each variant: the ConfigMap embeds its scheduler-config file verbatim; kube-scheduler's
// extender is this gpusched (address, path, TLS); the Deployment mounts what the configurations
// name, carries the ConfigMap's checksum, runs gpusched as a native sidecar gated on /readyz, and
// the two containers hold different identities.
TEST(Manifests, EachVariantsPiecesAgree) {
  const std::map<std::string, std::string> files = {{"cache", "kube-scheduler-config.yaml"},
                                                    {"mtls", "kube-scheduler-config-mtls.yaml"},
                                                    {"dra-owner", "kube-scheduler-config-dra-owner.yaml"}};
  for (const std::string& v : kVariants) {
    SCOPED_TRACE(v);
    std::vector<YAML::Node> docs = VariantManifests(v);
    const YAML::Node* cm = Find(docs, "ConfigMap", "gpu-scheduler-config");
    ASSERT_NE(cm, nullptr);
    std::string ks_text = (*cm)["data"]["kube-scheduler-config.yaml"].as<std::string>();
    EXPECT_EQ(ks_text, Read("scheduler-config/" + files.at(v)));
    YAML::Node ks = YAML::Load(ks_text);
    StatusOr<config::Config> c = config::ParseConfig((*cm)["data"]["gpusched.yaml"].as<std::string>());
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_TRUE(c->cluster.in_cluster);
    EXPECT_EQ(c->dra_owner, v == "dra-owner");
    const YAML::Node& e = ks["extenders"][0];
    bool tls = !c->server.tls_cert_file.empty();
    EXPECT_EQ(e["urlPrefix"].as<std::string>(), fmt::format("{}://{}:{}{}", tls ? "https" : "http", c->server.host,
                                                             c->server.port, c->path_prefix));
    EXPECT_EQ(c->server.host, "127.0.0.1");  // verbs on loopback: the same pod's kube-scheduler only
    EXPECT_EQ(tls, v == "mtls");
    EXPECT_EQ(e["enableHTTPS"].as<bool>(false), tls);
    EXPECT_NE(c->server.port, 8443) << "the webhook listener's port";
    EXPECT_GT(e["weight"].as<int>(), 0);  // required with prioritizeVerb
    EXPECT_TRUE(e["nodeCacheCapable"].as<bool>());

    const YAML::Node& deployment = *Find(docs, "Deployment", "gpu-scheduler");
    EXPECT_EQ(deployment["spec"]["template"]["metadata"]["annotations"]["gpusched.io/config-sha256"].as<std::string>(),
              Sha256(Read("deploy/" + v + "/configmap.yaml")));
    EXPECT_GE(deployment["spec"]["replicas"].as<int>(), 2);
    EXPECT_EQ(deployment["spec"]["strategy"]["rollingUpdate"]["maxSurge"].as<int>(), 0);
    const YAML::Node& pod = deployment["spec"]["template"]["spec"];
    EXPECT_FALSE(pod["automountServiceAccountToken"].as<bool>(true));
    const YAML::Node* sa = Find(docs, "ServiceAccount", pod["serviceAccountName"].as<std::string>());
    ASSERT_NE(sa, nullptr);
    std::map<std::string, YAML::Node> volumes;
    for (const YAML::Node& vol : pod["volumes"]) volumes[vol["name"].as<std::string>()] = vol;
    // Mount path of `volume` in `container`, or "".
    auto mount = [&](const YAML::Node& container, const std::string& volume) {
      for (const YAML::Node& m : container["volumeMounts"]) {
        if (m["name"].as<std::string>() == volume) {
          EXPECT_FALSE(m["subPath"]) << volume << ": a subPath mount never sees updates";
          return m["mountPath"].as<std::string>();
        }
      }
      return std::string();
    };
    // gpusched: a native sidecar that kube-scheduler waits for, with the pod's token alone.
    ASSERT_EQ(pod["initContainers"].size(), 1u);
    const YAML::Node& gpusched = pod["initContainers"][0];
    EXPECT_EQ(gpusched["restartPolicy"].as<std::string>(), "Always");
    EXPECT_EQ(gpusched["startupProbe"]["httpGet"]["path"].as<std::string>(), "/readyz");
    EXPECT_THAT(c->webhook.listen, ::testing::EndsWith(":" + gpusched["startupProbe"]["httpGet"]["port"].as<std::string>()));
    EXPECT_EQ(gpusched["image"].as<std::string>().substr(0, 8), "gpusched");  // kustomization images: sets it
    std::string config_dir = mount(gpusched, "config");
    EXPECT_THAT(gpusched["args"][1].as<std::string>(), HasSubstr(config_dir + "/gpusched.yaml"));
    EXPECT_EQ(c->webhook.cert_file, mount(gpusched, "webhook-tls") + "/tls.crt");
    EXPECT_EQ(mount(gpusched, "gpusched-token"), "/var/run/secrets/kubernetes.io/serviceaccount");
    EXPECT_TRUE(volumes["gpusched-token"]["projected"].IsDefined());
    if (tls) {
      EXPECT_EQ(c->server.tls_cert_file, mount(gpusched, "extender-mtls") + "/tls.crt");
      EXPECT_EQ(c->server.client_ca_file, mount(gpusched, "extender-mtls") + "/ca.crt");
    }
    // kube-scheduler: its config and its own identity.
    ASSERT_EQ(pod["containers"].size(), 1u);
    const YAML::Node& scheduler = pod["containers"][0];
    EXPECT_EQ(mount(scheduler, "gpusched-token"), "") << "kube-scheduler must not hold gpusched's token";
    std::string ks_dir = mount(scheduler, "config");
    EXPECT_EQ(scheduler["command"][1].as<std::string>(), "--config=" + ks_dir + "/kube-scheduler-config.yaml");
    EXPECT_EQ(ks["clientConnection"]["kubeconfig"].as<std::string>(), ks_dir + "/kube-scheduler.kubeconfig");
    YAML::Node kubeconfig = YAML::Load((*cm)["data"]["kube-scheduler.kubeconfig"].as<std::string>());
    std::string token_dir = mount(scheduler, "kube-scheduler-token");
    EXPECT_EQ(kubeconfig["users"][0]["user"]["tokenFile"].as<std::string>(), token_dir + "/token");
    EXPECT_EQ(kubeconfig["clusters"][0]["cluster"]["certificate-authority"].as<std::string>(), token_dir + "/ca.crt");
    std::string secret = volumes["kube-scheduler-token"]["secret"]["secretName"].as<std::string>();
    const YAML::Node* token = Find(docs, "Secret", secret);
    ASSERT_NE(token, nullptr);
    EXPECT_EQ((*token)["type"].as<std::string>(), "kubernetes.io/service-account-token");
    std::string scheduler_sa = (*token)["metadata"]["annotations"]["kubernetes.io/service-account.name"].as<std::string>();
    EXPECT_NE(scheduler_sa, pod["serviceAccountName"].as<std::string>());
    if (tls) {
      std::string dir = mount(scheduler, "kube-scheduler-mtls");
      EXPECT_EQ(e["tlsConfig"]["certFile"].as<std::string>(), dir + "/client.crt");
      EXPECT_EQ(e["tlsConfig"]["caFile"].as<std::string>(), dir + "/ca.crt");
    }
    // The webhook's Service reaches the webhook listener on the pods.
    const YAML::Node* svc = Find(docs, "Service", "gpusched-webhook");
    ASSERT_NE(svc, nullptr);
    EXPECT_EQ((*svc)["spec"]["selector"]["app"].as<std::string>(),
              deployment["spec"]["template"]["metadata"]["labels"]["app"].as<std::string>());
    EXPECT_THAT(c->webhook.listen, ::testing::EndsWith(":" + (*svc)["spec"]["ports"][0]["targetPort"].as<std::string>()));
    const YAML::Node* hook = Find(docs, "ValidatingWebhookConfiguration", "gpusched-node-mode-guard");
    ASSERT_NE(hook, nullptr);
    EXPECT_EQ((*hook)["webhooks"][0]["clientConfig"]["service"]["path"].as<std::string>(), "/validate/node");
    EXPECT_EQ((*hook)["webhooks"][0]["failurePolicy"].as<std::string>(), "Fail");
    // The owner role is bound in the owner variant only.
    EXPECT_EQ(Find(docs, "ClusterRoleBinding", "gpusched-dra-owner") != nullptr, v == "dra-owner");
  }
}

// The admission policy that narrows gpusched's node patches names gpusched's ServiceAccount.
TEST(Manifests, NodePatchesAreLimitedToTheBookingsAndHoldsAnnotations) {
  std::vector<YAML::Node> docs = VariantManifests("cache");
  const YAML::Node* policy = Find(docs, "ValidatingAdmissionPolicy", "gpusched-node-bookings-only");
  ASSERT_NE(policy, nullptr);
  const YAML::Node& pod = (*Find(docs, "Deployment", "gpu-scheduler"))["spec"]["template"]["spec"];
  EXPECT_THAT((*policy)["spec"]["matchConditions"][0]["expression"].as<std::string>(),
              HasSubstr(fmt::format("system:serviceaccount:kube-system:{}", pod["serviceAccountName"].as<std::string>())));
  EXPECT_THAT((*policy)["spec"]["validations"][0]["expression"].as<std::string>(), HasSubstr("variables.own"));
  const YAML::Node* binding = Find(docs, "ValidatingAdmissionPolicyBinding", "gpusched-node-bookings-only");
  ASSERT_NE(binding, nullptr);
  EXPECT_EQ((*binding)["spec"]["policyName"].as<std::string>(), "gpusched-node-bookings-only");
}

// The Dockerfile builds with exactly the packages scripts/deps.sh installs for the build, each
// pinned to a version; the runtime image has no shell or package manager (distroless) and exposes
// only the webhook listener.
TEST(Manifests, TheDockerfilePinsTheDepsScriptsPackages) {
  std::string docker = Read("Dockerfile");
  std::string deps = Read("scripts/deps.sh");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(deps, m, std::regex("packages=\\(([^)]*)\\)")));
  std::set<std::string> build_packages;
  std::istringstream words(m[1].str());
  for (std::string w; words >> w;) build_packages.insert(w);
  std::set<std::string> pinned;
  std::regex pin("([a-z0-9.+-]+)=([0-9][^ \\\n]*)");
  for (auto it = std::sregex_iterator(docker.begin(), docker.end(), pin); it != std::sregex_iterator(); ++it) {
    pinned.insert((*it)[1].str());
  }
  // The deps script also installs test-only packages (gtest, benchmark, curl, openssl, ...).
  for (const char* p : {"g++", "cmake", "ninja-build", "pkg-config", "libboost1.81-dev", "rapidjson-dev", "libfmt-dev",
                        "libyaml-cpp-dev", "libssl-dev", "libre2-dev", "libnghttp2-dev"}) {
    EXPECT_TRUE(build_packages.contains(p)) << p << " is not in scripts/deps.sh";
    EXPECT_TRUE(pinned.contains(p)) << p << " is not pinned in the Dockerfile";
  }
  EXPECT_THAT(docker, HasSubstr("FROM gcr.io/distroless/cc-debian12"));
  EXPECT_THAT(docker, HasSubstr("EXPOSE 8443\n"));
  EXPECT_THAT(docker, ::testing::Not(HasSubstr("EXPOSE 8888")));
}

// Every request gpusched makes, as an RBAC (group, resource, verb); the ClusterRole must grant
// exactly these.
using Permission = std::tuple<std::string, std::string, std::string>;

// API discovery (GET /apis/<group>) is a non-resource URL every authenticated user may read
// (the default ClusterRole system:discovery); no role of ours grants it.
// Discovery (GET /apis/<group> and /apis/<group>/<version>): every authenticated user may read it.
bool IsDiscovery(const testing::RecordedRequest& r) {
  std::string path = r.target.substr(0, r.target.find('?'));
  if (r.method != "GET" || !path.starts_with("/apis/")) return false;
  size_t group_end = path.find('/', 6);
  return group_end == std::string::npos || path.find('/', group_end + 1) == std::string::npos;
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
  if (i + 2 < seg.size() && seg[i] == "namespaces") i += 2;  // namespaces/NS/resource; "namespaces" alone is the resource
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
  for (const YAML::Node& d : Documents("deploy/common/rbac.yaml")) {
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
  // A pod of nvidia.com/gpu served through DRA: its special claim is created, and deleted again
  // when the pod's status cannot name it; the retry binds.
  std::string whole = api.Put("pods", testing::PodJson{.name = "w", .namespace_name = "ml", .uid = "w", .containers = {testing::WholeGpus("main", 1)}}.ToJson());
  replica.service->Filter(testing::ArgsWithNames(whole, {"dra-a"}));
  api.FailNext("PATCH", "/api/v1/namespaces/ml/pods/w/status", 500);
  EXPECT_THAT(replica.service->Bind(testing::BindJson("w", "ml", "w", "dra-a")), HasSubstr("recording claim"));
  // kube-scheduler retries after a backoff; by then the watch has shown the claim deleted.
  ASSERT_TRUE(testing::Eventually([&] {
    for (const auto& [key, claim] : replica.inventory->Snapshot()->dra().claims()) {
      if (key.second.starts_with("w-extended-resources-")) return false;
    }
    return true;
  }));
  EXPECT_THAT(replica.service->Bind(testing::BindJson("w", "ml", "w", "dra-a")), HasSubstr(R"("Error":"")"));
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

// The agent's ClusterRole: exactly the calls of its publishing and drift check; the policy then
// limits its Node writes to its own Node's gpu-devices annotation.
TEST(Manifests, TheAgentRoleGrantsExactlyWhatItsCallsUse) {
  std::set<Permission> granted;
  for (const YAML::Node& d : Documents("deploy/agent/rbac.yaml")) {
    if (d["kind"].as<std::string>() != "ClusterRole") continue;
    for (const YAML::Node& rule : d["rules"]) {
      for (const YAML::Node& g : rule["apiGroups"]) {
        for (const YAML::Node& r : rule["resources"]) {
          for (const YAML::Node& v : rule["verbs"]) granted.insert({g.as<std::string>(), r.as<std::string>(), v.as<std::string>()});
        }
      }
    }
  }
  testing::FakeApiServer api;
  api.Put("nodes", testing::NvidiaNode("gpu-0", 1).ToJson());
  kubeapi::ApiConfig config;
  ASSERT_TRUE(kubeapi::ParseServerUrl(api.url(), &config).ok());
  std::unique_ptr<kubeapi::ApiClient> client = kubeapi::ApiClient::Create(config).value();
  EXPECT_TRUE(kubeapi::PublishGpuDevices(client.get(), "gpu-0", "[]").value());
  EXPECT_FALSE(kubeapi::PublishGpuDevices(client.get(), "gpu-0", "[]").value());
  EXPECT_TRUE(kubeapi::PodsOnNode(client.get(), "gpu-0").ok());
  api.Put("resourceclaims", testing::Claim("train", testing::ClaimSpec(1, "")));
  Pod claim_pod{.namespace_name = "ml", .name = "p", .resource_claims = {PodClaimRef{.name = "gpus", .claim_name = "train"}}};
  EXPECT_EQ(kubeapi::ClaimsOfPods(client.get(), {claim_pod}).value().size(), 1u);
  EXPECT_TRUE(kubeapi::SlicesOnNode(client.get(), "gpu-0").ok());
  EXPECT_TRUE(kubeapi::PostNodeEvent(client.get(), "gpu-0", "GPUAccountingDrift", "test").ok());
  std::set<Permission> used;
  for (const testing::RecordedRequest& r : api.Requests()) used.insert(PermissionOf(r));
  EXPECT_EQ(used, granted);
  // The policy binds the agent's writes to the node in its token.
  std::vector<YAML::Node> docs = Documents("deploy/agent/admission-policy.yaml");
  const YAML::Node* policy = Find(docs, "ValidatingAdmissionPolicy", "gpusched-agent-own-node");
  ASSERT_NE(policy, nullptr);
  EXPECT_THAT(YAML::Dump(*policy), HasSubstr("authentication.kubernetes.io/node-name"));
  EXPECT_THAT(YAML::Dump(*policy), HasSubstr("system:serviceaccount:kube-system:gpusched-agent"));
  // Its Events, too: about its own Node only, and only the drift reason the agent posts.
  const YAML::Node* events = Find(docs, "ValidatingAdmissionPolicy", "gpusched-agent-own-events");
  ASSERT_NE(events, nullptr);
  EXPECT_EQ((*events)["spec"]["matchConstraints"]["resourceRules"][0]["resources"][0].as<std::string>(), "events");
  EXPECT_THAT(YAML::Dump(*events), HasSubstr("object.involvedObject.name == variables.boundNode"));
  EXPECT_THAT(YAML::Dump(*events), HasSubstr("object.reason == 'GPUAccountingDrift'"));
  ASSERT_NE(Find(docs, "ValidatingAdmissionPolicyBinding", "gpusched-agent-own-events"), nullptr);
  std::string posted;
  for (const testing::RecordedRequest& r : api.Requests()) {
    if (r.method == "POST" && r.target.find("/events") != std::string::npos) posted = r.body;
  }
  EXPECT_THAT(posted, HasSubstr(R"("involvedObject":{"apiVersion":"v1","kind":"Node","name":"gpu-0"})"));
  EXPECT_THAT(posted, HasSubstr(R"("reason":"GPUAccountingDrift")"));
}

// The MIG overlay patches the agent's own container (by the names the base uses) with the MIG
// monitor capability, and only that: the base drops every capability.
TEST(Manifests, TheMigOverlayAddsTheMonitorCapabilityToTheAgentContainer) {
  YAML::Node k = Documents("deploy/agent-mig/kustomization.yaml")[0];
  EXPECT_EQ(k["resources"][0].as<std::string>(), "../agent");
  YAML::Node patch = Documents("deploy/agent-mig/" + k["patches"][0]["path"].as<std::string>())[0];
  std::vector<YAML::Node> agent = Documents("deploy/agent/daemonset.yaml");
  const YAML::Node* base = Find(agent, "DaemonSet", patch["metadata"]["name"].as<std::string>());
  ASSERT_NE(base, nullptr);
  EXPECT_EQ((*base)["metadata"]["namespace"].as<std::string>(), patch["metadata"]["namespace"].as<std::string>());
  YAML::Node container = patch["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(container["name"].as<std::string>(), (*base)["spec"]["template"]["spec"]["containers"][0]["name"].as<std::string>());
  EXPECT_EQ(container["env"][0]["name"].as<std::string>(), "NVIDIA_MIG_MONITOR_DEVICES");
  EXPECT_EQ(container["securityContext"]["capabilities"]["add"].size(), 1u);
  EXPECT_EQ(container["securityContext"]["capabilities"]["add"][0].as<std::string>(), "SYS_ADMIN");
  EXPECT_EQ(container["securityContext"]["capabilities"]["drop"][0].as<std::string>(), "ALL");
}

TEST(Manifests, TheClusterRoleGrantsExactlyWhatGpuschedUses) {
  std::set<Permission> granted;
  for (const YAML::Node& d : Documents("deploy/common/rbac.yaml")) {
    std::string kind = d["kind"].as<std::string>(), name = d["metadata"]["name"].as<std::string>();
    // gpusched's ClusterRole, and its Role for the leader's Lease (kube-system).
    if (!(kind == "ClusterRole" && name == "gpusched") && !(kind == "Role" && name == "gpusched-leader-lease")) continue;
    for (const YAML::Node& rule : d["rules"]) {
      for (const YAML::Node& g : rule["apiGroups"]) {
        for (const YAML::Node& r : rule["resources"]) {
          for (const YAML::Node& v : rule["verbs"]) granted.insert({g.as<std::string>(), r.as<std::string>(), v.as<std::string>()});
        }
      }
    }
  }
  ASSERT_FALSE(granted.empty());

  // Exercise every path: sync (pod groups of every API served), a bind whose node booking
  // conflicts once, a refused bind, an event, an applied defrag move, a gang member nominated to
  // its slot (gang.nominate).
  testing::FakeApiServer api({.pod_group_version = "v1beta1", .workload_version = "v1alpha1", .coscheduling_version = "v1alpha1",
                              .kueue_version = "v1beta2"});
  api.Put("nodes", testing::NvidiaNode("w1", 1).ToJson());
  api.Put("nodes", testing::NvidiaNode("w2", 2).ToJson());
  api.Put("nodes", testing::NvidiaNode("w3", 2).ToJson());
  for (const char* name : {"r2", "r3"}) {
    api.Put("pods", testing::PodJson{.name = name, .namespace_name = "ml", .uid = std::string("u-") + name,
                                     .node = std::string("w") + name[1], .phase = "Running",
                                     .containers = {testing::WholeGpus("c", 1)}, .controller_uid = "rs"}
                        .ToJson());
  }
  std::string two = testing::PodJson{.name = "two", .namespace_name = "ml", .uid = "u-two", .containers = {testing::WholeGpus("c", 2)}}.ToJson();
  std::string pod = testing::PodJson{.name = "p", .namespace_name = "ml", .uid = "u-p", .containers = {testing::WholeGpus("c", 1)}}.ToJson();
  std::string big = testing::PodJson{.name = "big", .namespace_name = "ml", .uid = "u-big", .containers = {testing::WholeGpus("c", 4)}}.ToJson();
  std::string shared = testing::PodJson{.name = "s", .namespace_name = "ml", .uid = "u-s", .containers = {testing::Mgpu("c", 20, 1024)}}.ToJson();
  api.Put("pods", pod);
  api.Put("nodes", testing::MgpuNode("m1", 1, 16384).ToJson());
  api.Put("pods", shared);
  api.Put("nodes", testing::NvidiaNode("w4", 1).ToJson());  // the gang's
  api.Put("podgroups", R"({"metadata":{"name":"g","namespace":"ml"},"spec":{"schedulingPolicy":{"gang":{"minCount":1}}}})");
  std::string member = testing::PodJson{.name = "g0", .namespace_name = "ml", .uid = "u-g0", .phase = "Pending", .containers = {testing::WholeGpus("c", 1)},
                                        .spec_extra = R"("schedulingGroup":{"podGroupName":"g"})"}
                           .ToJson();
  api.Put("pods", member);
  // Kueue: gpusched's AdmissionCheck (set Active), a flavor, a ClusterQueue, and a Workload whose
  // check is Pending (decided: the status written), on the replica whose pod holds the Lease.
  api.Put("admissionchecks", R"({"metadata":{"name":"gpu-placement"},"spec":{"controllerName":"gpusched.io/gpu-placement"}})");
  testing::NodeJson k1 = testing::NvidiaNode("k1", 1);  // the Workload's flavor's node
  k1.extra_labels["pool"] = "kueue";
  api.Put("nodes", k1.ToJson());
  api.Put("resourceflavors", R"({"metadata":{"name":"default"},"spec":{"nodeLabels":{"pool":"kueue"}}})");
  api.Put("clusterqueues", R"({"metadata":{"name":"cq"},"spec":{"admissionChecksStrategy":{"admissionChecks":[{"name":"gpu-placement"}]}}})");
  api.Put("workloads.kueue.x-k8s.io", R"({"metadata":{"name":"wl","namespace":"ml"},"spec":{"queueName":"q","podSets":[{"name":"main",
    "count":1,"template":{"spec":{"containers":[{"name":"c","image":"x","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}]},
    "status":{"conditions":[{"type":"QuotaReserved","status":"True","reason":"QuotaReserved","message":"","lastTransitionTime":"2026-12-05T00:00:00Z"}],
    "admission":{"clusterQueue":"cq","podSetAssignments":[{"name":"main","flavors":{"nvidia.com/gpu":"default"},"count":1}]},
    "admissionChecks":[{"name":"gpu-placement","state":"Pending","message":"","lastTransitionTime":"2026-12-05T00:00:00Z"}]}})");
  api.Put("leases", fmt::format(R"({{"metadata":{{"name":"gpu-scheduler","namespace":"kube-system"}},"spec":{{"holderIdentity":"gpusched-0_1",)"
                                R"("leaseDurationSeconds":15,"renewTime":"{}"}}}})", FormatRfc3339(RealClock().WallMs())));
  testing::LiveReplica replica(api.url(), extender::ServiceOptions{.gang_nominate = true}, inventory::InventoryOptions{},
                               kubeapi::ApiBinderOptions{}, false, extender::ServiceCollaborators{},
                               kubeapi::ApiKueueWriterOptions{.identity = "gpusched-0"});
  ASSERT_TRUE(replica.sync->WaitSynced(std::chrono::seconds(10)));
  // nodes, pods, pending pods, budgets, DRA x3, DeviceTaintRules, namespaces, pod groups x3, Kueue x4,
  // ResourceClaimTemplates
  ASSERT_TRUE(testing::Eventually([&] { return api.open_watches() == 17; }));
  ASSERT_TRUE(testing::Eventually([&] { return replica.inventory->kueue().State()->FindWorkload("ml/wl") != nullptr; }));
  EXPECT_EQ(replica.service->SweepKueue(), 1u);
  ASSERT_THAT(*api.Get("workloads.kueue.x-k8s.io", "ml", "wl"), HasSubstr(R"("state":"Ready")"));
  replica.service->Filter(testing::ArgsWithNames(pod, {"w1"}));
  replica.service->Filter(testing::ArgsWithNames(shared, {"m1"}));
  api.FailNext("PATCH", "/api/v1/nodes/w1", 409);
  EXPECT_THAT(replica.service->Bind(testing::BindJson("p", "ml", "u-p", "w1")), HasSubstr(R"("Error":"")"));
  EXPECT_THAT(replica.service->Bind(testing::BindJson("s", "ml", "u-s", "m1")), HasSubstr(R"("Error":"")"));
  replica.service->Filter(testing::ArgsWithNames(big, {"w1"}));
  ASSERT_TRUE(replica.events->WaitIdle(std::chrono::seconds(10)));
  EXPECT_THAT(*testing::AppliedPlan(*replica.service, two), HasSubstr(R"("evicted":true)"));
  ASSERT_TRUE(testing::Eventually([&] { return !replica.inventory->Snapshot()->MembersOf("PodGroup/ml/g").pending.empty(); }));
  replica.service->Filter(testing::ArgsWithNames(member, {"w4"}));  // plans the gang
  replica.service->SweepGangs();                                          // nominates its member
  ASSERT_THAT(*api.Get("pods", "ml", "g0"), HasSubstr("nominatedNodeName"));

  std::set<Permission> used;
  for (const testing::RecordedRequest& r : api.Requests()) {
    if (!IsDiscovery(r)) used.insert(PermissionOf(r));
  }
  // Every node PATCH changes only annotations the admission policy lets gpusched change.
  std::string own;
  for (const YAML::Node& d : Documents("deploy/common/admission-policy.yaml")) {
    if (d["kind"].as<std::string>() != "ValidatingAdmissionPolicy") continue;
    for (const YAML::Node& v : d["spec"]["variables"]) {
      if (v["name"].as<std::string>() == "own") own = v["expression"].as<std::string>();
    }
  }
  std::set<std::string> patched;
  for (const testing::RecordedRequest& r : api.Requests()) {
    if (r.method != "PATCH" || !r.target.starts_with("/api/v1/nodes/")) continue;
    std::smatch keys;
    std::regex annotation(R"re("annotations":\{"([^"]+)":)re");
    ASSERT_TRUE(std::regex_search(r.body, keys, annotation)) << r.body;
    patched.insert(keys[1]);
    EXPECT_THAT(own, HasSubstr("'" + keys[1].str() + "'")) << r.body;
  }
  EXPECT_EQ(patched, (std::set<std::string>{"gpusched.io/bookings", "gpusched.io/holds"}));
  for (const Permission& p : used) {
    EXPECT_TRUE(granted.contains(p)) << "used but not granted: " << std::get<0>(p) << " " << std::get<1>(p) << " " << std::get<2>(p);
  }
  for (const Permission& p : granted) {
    EXPECT_TRUE(used.contains(p)) << "granted but never used: " << std::get<0>(p) << " " << std::get<1>(p) << " "
                                  << std::get<2>(p);
  }
}

}  // namespace manifests_test
}  // namespace gpusched
