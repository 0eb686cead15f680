// File: cluster_sync.cc
//
// Keeping the inventory in sync: a reflector handler per kind turning lists and watch events into
// deltas, a DRA feed building each ClusterState outside the inventory's lock and in order,
// discovery of served resource.k8s.io versions, and the expiry loop.
#include "gpusched/kubeapi/cluster_sync.h"

#include <fmt/format.h>

#include <set>
#include <thread>

#include "gpusched/common/log.h"
#include "gpusched/json/json.h"
#include "gpusched/kubejson/dra_objects.h"
#include "gpusched/kubejson/objects.h"
#include "gpusched/kubejson/pod_groups.h"
#include "gpusched/kubeapi/kueue_feed.h"

namespace gpusched::kubeapi {

enum class ClusterSync::Kind {
  kNode, kPod, kPendingPod, kBudget, kPodGroup, kWorkload, kCoscheduling,
  kResourceSlice, kResourceClaim, kDeviceClass, kDeviceTaintRule, kNamespace
};

namespace {

void Skip(std::string_view kind, const Status& s) {
  log::Write(log::Level::kWarning, "object skipped", {{"kind", std::string(kind)}, {"error", s.message()}});
}

// The name (nodes) or uid (pods) of a deleted object, "" if it has none.
std::string MetadataField(const rapidjson::Value& v, std::string_view field) {
  std::string out;
  const rapidjson::Value* meta = v.IsObject() ? json::Find(v, "metadata") : nullptr;
  if (meta != nullptr && meta->IsObject()) (void)json::ReadString(*meta, field, "", &out);
  return out;
}

}  // namespace

// The DRA objects of the three DRA reflectors, decoded once per event. Each batch of changes is
// applied here and the new dra::ClusterState built here, outside the inventory's lock; the feed's
// own lock keeps states reaching the inventory in the order they were built.
class ClusterSync::DraFeed {
 public:
  explicit DraFeed(inventory::Inventory* inventory) : inventory_(inventory) {}

  void Apply(dra::DraDelta delta) GPUSCHED_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (!objects_.Apply(std::move(delta))) return;
    last_ = objects_.Build(last_.get());
    inventory_->Apply(ClusterDelta{.dra_state = last_});
  }

 private:
  inventory::Inventory* const inventory_;
  Mutex mu_;
  dra::DraObjectSet objects_ GPUSCHED_GUARDED_BY(mu_);
  dra::ClusterStatePtr last_ GPUSCHED_GUARDED_BY(mu_);  // the state built last: NodeVersions follow it
};

class ClusterSync::Handler : public ReflectorHandler {
 public:
  Handler(Kind kind, inventory::Inventory* inventory, DraFeed* feed) : kind_(kind), inventory_(inventory), feed_(feed) {}

  void Replace(const std::vector<const rapidjson::Value*>& items) override {
    Batch batch{.relist = true};
    if (kind_ == Kind::kNode) batch.cluster.all_nodes = true;
    if (kind_ == Kind::kPod) batch.cluster.all_pods = true;
    if (kind_ == Kind::kPendingPod) batch.cluster.all_pending = true;
    if (kind_ == Kind::kBudget) batch.cluster.all_budgets = true;
    if (std::optional<GroupApi> api = Group()) batch.cluster.relisted_groups.push_back(*api);
    if (IsDra()) batch.dra.relisted.push_back(DraKind());
    for (const rapidjson::Value* item : items) Add(*item, &batch);
    Finish(&batch);
  }

  void Apply(const std::vector<const WatchEvent*>& events) override {
    Batch batch;
    for (const WatchEvent* e : events) {
      if (e->type == WatchEventType::kDeleted) {
        Delete(e->object(), &batch);
      } else {
        Add(e->object(), &batch);
      }
    }
    Finish(&batch);
  }

 private:
  struct Batch {
    ClusterDelta cluster;
    dra::DraDelta dra;
    bool relist = false;  // a LIST: each object once, in no order that matters
  };

  bool IsDra() const {
    return kind_ != Kind::kNode && kind_ != Kind::kPod && kind_ != Kind::kPendingPod && kind_ != Kind::kBudget && !Group();
  }
  // The API of a pod-group kind, nullopt for the others.
  std::optional<GroupApi> Group() const {
    if (kind_ == Kind::kPodGroup) return GroupApi::kPodGroup;
    if (kind_ == Kind::kWorkload) return GroupApi::kWorkload;
    if (kind_ == Kind::kCoscheduling) return GroupApi::kCoscheduling;
    return std::nullopt;
  }
  // Events of one batch apply in order: an object's later event replaces what an earlier one
  // of the batch said of it.
  static void DropGroupsOf(const std::string& object, ClusterDelta* delta) {
    std::erase_if(delta->upsert_groups, [&](const PodGroup& g) { return inventory::GroupTable::ObjectKey(g) == object; });
    std::erase(delta->deleted_groups, object);
  }
  dra::ObjectKind DraKind() const {
    if (kind_ == Kind::kResourceClaim) return dra::ObjectKind::kResourceClaim;
    if (kind_ == Kind::kDeviceTaintRule) return dra::ObjectKind::kDeviceTaintRule;
    if (kind_ == Kind::kNamespace) return dra::ObjectKind::kNamespace;
    return kind_ == Kind::kDeviceClass ? dra::ObjectKind::kDeviceClass : dra::ObjectKind::kResourceSlice;
  }

  void Add(const rapidjson::Value& v, Batch* batch) {
    if (IsDra()) {
      dra::DraObject object = kubejson::DecodeDraObject(v, DraKind());
      if (object.key.empty()) return Skip(dra::ObjectKindName(DraKind()), InvalidArgumentError("metadata.name: missing"));
      if (!object.readable()) Skip(dra::ObjectKindName(DraKind()), InvalidArgumentError(object.error));
      batch->dra.upserts.push_back(std::move(object));
      return;
    }
    if (kind_ == Kind::kNode) {
      StatusOr<Node> node = kubejson::DecodeNode(v, "Node");
      if (!node.ok()) return Skip("Node", node.status());
      batch->cluster.upsert_nodes.push_back(std::move(node).value());
      return;
    }
    if (std::optional<GroupApi> api = Group()) {
      std::string_view what = *api == GroupApi::kWorkload ? "Workload" : "PodGroup";
      std::string object = GroupKey(*api, MetadataField(v, "namespace"), MetadataField(v, "name"));
      if (!batch->relist) DropGroupsOf(object, &batch->cluster);
      StatusOr<std::vector<PodGroup>> groups = kubejson::DecodePodGroups(v, *api, what);
      if (!groups.ok()) {
        batch->cluster.deleted_groups.push_back(std::move(object));  // what it said before no longer holds
        return Skip(what, groups.status());
      }
      // The object's groups are replaced by what it declares now, none included (a Workload
      // updated to declare no group).
      if (!batch->relist) batch->cluster.deleted_groups.push_back(object);
      for (PodGroup& g : *groups) batch->cluster.upsert_groups.push_back(std::move(g));
      return;
    }
    if (kind_ == Kind::kBudget) {
      StatusOr<DisruptionBudget> budget = kubejson::DecodeDisruptionBudget(v, "PodDisruptionBudget");
      if (!budget.ok()) return Skip("PodDisruptionBudget", budget.status());
      batch->cluster.upsert_budgets.push_back(std::move(budget).value());
      return;
    }
    StatusOr<Pod> pod = kubejson::DecodePod(v, "Pod");
    if (!pod.ok()) return Skip("Pod", pod.status());
    if (pod->uid.empty()) return Skip("Pod", InvalidArgumentError("Pod.metadata.uid: missing"));
    (kind_ == Kind::kPendingPod ? batch->cluster.upsert_pending : batch->cluster.upsert_pods).push_back(std::move(pod).value());
  }

  void Delete(const rapidjson::Value& v, Batch* batch) {
    if (IsDra()) {
      std::string key = kubejson::DraObjectKey(v);
      if (!key.empty()) batch->dra.deletes.emplace_back(DraKind(), std::move(key));
      return;
    }
    if (kind_ == Kind::kBudget) {
      std::string ns = MetadataField(v, "namespace"), name = MetadataField(v, "name");
      if (!name.empty()) batch->cluster.deleted_budgets.push_back(ns + "/" + name);
      return;
    }
    if (std::optional<GroupApi> api = Group()) {
      std::string name = MetadataField(v, "name");
      if (name.empty()) return;
      std::string object = GroupKey(*api, MetadataField(v, "namespace"), name);
      DropGroupsOf(object, &batch->cluster);
      batch->cluster.deleted_groups.push_back(std::move(object));
      return;
    }
    std::string id = MetadataField(v, kind_ == Kind::kNode ? "name" : "uid");
    if (id.empty()) return;
    std::vector<std::string>& deleted = kind_ == Kind::kNode      ? batch->cluster.deleted_nodes
                                        : kind_ == Kind::kPod     ? batch->cluster.deleted_pods
                                                                  : batch->cluster.deleted_pending;
    deleted.push_back(std::move(id));
  }

  void Finish(Batch* batch) {
    if (IsDra()) {
      feed_->Apply(std::move(batch->dra));
    } else {
      inventory_->Apply(std::move(batch->cluster));
    }
  }

  const Kind kind_;
  inventory::Inventory* const inventory_;
  DraFeed* const feed_;
};

namespace {

// The versions of API group `group` the cluster serves (GET /apis/<group>); none when it does not
// serve the group (404).
StatusOr<std::set<std::string>> ServedVersions(ApiClient* client, std::string_view group) {
  std::string path = fmt::format("/apis/{}", group);
  GPUSCHED_ASSIGN_OR_RETURN(ApiResponse r, client->Send("GET", path, {}, "application/json", std::chrono::seconds(10)));
  std::set<std::string> served;
  if (r.status == 404) return served;
  if (r.status != 200) return UnavailableError(fmt::format("GET {}: {} {}", path, r.status, StatusMessage(r)));
  rapidjson::Document doc;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(r.body, &doc));
  const rapidjson::Value* versions = doc.IsObject() ? json::Find(doc, "versions") : nullptr;
  for (rapidjson::SizeType i = 0; versions != nullptr && versions->IsArray() && i < versions->Size(); ++i) {
    std::string v;
    if ((*versions)[i].IsObject() && json::ReadString((*versions)[i], "version", "", &v).ok()) served.insert(v);
  }
  return served;
}

// The newest of `candidates` that `served` holds, or "".
std::string Newest(const std::set<std::string>& served, std::initializer_list<const char*> candidates) {
  for (const char* v : candidates) {
    if (served.contains(v)) return v;
  }
  return "";
}

// True if `group`/`version` serves `resource` (its APIResourceList names it); a 404 is no (a
// version the cluster does not serve after all).
StatusOr<bool> ServesResource(ApiClient* client, std::string_view group, const std::string& version, std::string_view resource) {
  std::string path = fmt::format("/apis/{}/{}", group, version);
  GPUSCHED_ASSIGN_OR_RETURN(ApiResponse r, client->Send("GET", path, {}, "application/json", std::chrono::seconds(10)));
  if (r.status == 404) return false;
  if (r.status != 200) return UnavailableError(fmt::format("GET {}: {} {}", path, r.status, StatusMessage(r)));
  rapidjson::Document doc;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(r.body, &doc));
  const rapidjson::Value* resources = doc.IsObject() ? json::Find(doc, "resources") : nullptr;
  for (rapidjson::SizeType i = 0; resources != nullptr && resources->IsArray() && i < resources->Size(); ++i) {
    std::string name;
    if ((*resources)[i].IsObject() && json::ReadString((*resources)[i], "name", "", &name).ok() && name == resource) return true;
  }
  return false;
}

// The version DeviceTaintRules are watched at: the newest serving them (v1 from 1.37, v1beta2 in
// 1.36 where the DRADeviceTaintRules gate is on, v1alpha3 before), "" when none does.
StatusOr<std::string> DiscoverTaintRuleVersion(ApiClient* client, const std::set<std::string>& served) {
  for (const char* v : {"v1", "v1beta2", "v1alpha3"}) {
    if (!served.contains(v)) continue;
    GPUSCHED_ASSIGN_OR_RETURN(bool serves, ServesResource(client, "resource.k8s.io", v, "devicetaintrules"));
    if (serves) return std::string(v);
  }
  return std::string();
}

// The newest of `versions` of `group` that serves `resource`, "" when none does (the cluster
// does not serve the group, or the feature gate is off).
StatusOr<std::string> DiscoverVersion(ApiClient* client, std::string_view group, std::initializer_list<const char*> versions,
                                      std::string_view resource) {
  GPUSCHED_ASSIGN_OR_RETURN(std::set<std::string> served, ServedVersions(client, group));
  for (const char* v : versions) {
    if (!served.contains(v)) continue;
    GPUSCHED_ASSIGN_OR_RETURN(bool serves, ServesResource(client, group, v, resource));
    if (serves) return std::string(v);
  }
  return std::string();
}

}  // namespace

ClusterSync::ClusterSync(ApiClient* client, inventory::Inventory* inventory, ClusterSyncOptions options)
    : client_(client), inventory_(inventory), options_(options), dra_feed_(std::make_unique<DraFeed>(inventory)) {
  AddReflector(Kind::kNode, {"nodes", "/api/v1/nodes", ""});
  AddReflector(Kind::kPod, {"pods", "/api/v1/pods", "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"});
  // Pending pods, for the nominations kube-scheduler sets after preempting (GPUs held for them).
  // A pod that binds leaves this selection: the watch reports it deleted, which ends its hold.
  AddReflector(Kind::kPendingPod, {"pendingpods", "/api/v1/pods", "spec.nodeName=,status.phase=Pending"});
  // PodDisruptionBudgets: preemption prefers victims whose eviction violates none.
  AddReflector(Kind::kBudget, {"poddisruptionbudgets", "/apis/policy/v1/poddisruptionbudgets", ""});
}

void ClusterSync::AddReflector(Kind kind, ResourceType type, bool optional) {
  optional_.push_back(optional);
  handlers_.push_back(std::make_unique<Handler>(kind, inventory_, dra_feed_.get()));
  reflectors_.push_back(std::make_unique<Reflector>(client_, std::move(type), handlers_.back().get(), options_.reflector));
}

ClusterSync::~ClusterSync() { Stop(); }

void ClusterSync::AddDraReflectors() {
  StatusOr<std::set<std::string>> served = ServedVersions(client_, "resource.k8s.io");
  for (int attempt = 1; !served.ok() && attempt < 3; ++attempt) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    served = ServedVersions(client_, "resource.k8s.io");
  }
  if (!served.ok()) {
    log::Warning("DRA version discovery failed, watching resource.k8s.io/v1: {}", served.status().message());
    served = std::set<std::string>{"v1"};
  }
  // The newest version the cluster serves: v1 from 1.34, v1beta2 in 1.33, v1beta1 in 1.32.
  dra_version_ = Newest(*served, {"v1", "v1beta2", "v1beta1"});
  if (dra_version_.empty()) {
    log::Info("the cluster does not serve resource.k8s.io: DRA objects are not watched");
    return;
  }
  log::Info("watching DRA objects at resource.k8s.io/{}", dra_version_);
  std::string base = "/apis/resource.k8s.io/" + dra_version_ + "/";
  AddReflector(Kind::kResourceSlice, {"resourceslices", base + "resourceslices", ""});
  AddReflector(Kind::kResourceClaim, {"resourceclaims", base + "resourceclaims", ""});
  AddReflector(Kind::kDeviceClass, {"deviceclasses", base + "deviceclasses", ""});
  // Namespaces: which allow adminAccess (label resource.kubernetes.io/admin-access=true).
  AddReflector(Kind::kNamespace, {"namespaces", "/api/v1/namespaces", ""});
  StatusOr<std::string> rules = DiscoverTaintRuleVersion(client_, *served);
  if (!rules.ok()) {
    log::Warning("DeviceTaintRule discovery failed, not watched (their taints are not merged): {}", rules.status().message());
  } else if (rules->empty()) {
    log::Info("the cluster serves no DeviceTaintRules (DRADeviceTaintRules off): not watched");
  } else {
    taint_rule_version_ = *rules;
    log::Info("watching DeviceTaintRules at resource.k8s.io/{}", taint_rule_version_);
    AddReflector(Kind::kDeviceTaintRule,
                 {"devicetaintrules", "/apis/resource.k8s.io/" + taint_rule_version_ + "/devicetaintrules", ""});
  }
}

void ClusterSync::AddGroupReflectors() {
  struct Source {
    Kind kind;
    const char* group;
    std::initializer_list<const char*> versions;
    const char* resource;
    std::string* version;
  };
  // scheduling.k8s.io's PodGroup (1.36, 1.37), its Workload of 1.35 (later Workloads hold only
  // templates), and scheduler-plugins' Coscheduling PodGroup.
  for (const Source& s : {Source{Kind::kPodGroup, "scheduling.k8s.io", {"v1beta1", "v1alpha2"}, "podgroups", &group_versions_.pod_group},
                          Source{Kind::kWorkload, "scheduling.k8s.io", {"v1alpha1"}, "workloads", &group_versions_.workload},
                          Source{Kind::kCoscheduling, "scheduling.x-k8s.io", {"v1alpha1"}, "podgroups", &group_versions_.coscheduling}}) {
    StatusOr<std::string> version = DiscoverVersion(client_, s.group, s.versions, s.resource);
    if (!version.ok()) {
      log::Warning("{}.{} discovery failed, not watched (their pods are placed one by one): {}", s.resource, s.group,
                   version.status().message());
      continue;
    }
    if (version->empty()) continue;
    *s.version = *version;
    log::Info("watching pod groups: {} at {}/{}", s.resource, s.group, *version);
    // Optional: a watch refused (403: the ClusterRole not updated) must not stop every pod.
    AddReflector(s.kind, {fmt::format("{}.{}", s.resource, s.group), fmt::format("/apis/{}/{}/{}", s.group, *version, s.resource), ""},
                 /*optional=*/true);
  }
}

void ClusterSync::AddOptionalReflector(ResourceType type, std::unique_ptr<ReflectorHandler> handler) {
  optional_.push_back(true);
  handlers_.push_back(std::move(handler));
  reflectors_.push_back(std::make_unique<Reflector>(client_, std::move(type), handlers_.back().get(), options_.reflector));
}

void ClusterSync::AddKueueReflectors() {
  StatusOr<std::string> version = DiscoverVersion(client_, "kueue.x-k8s.io", {"v1beta2", "v1beta1"}, "workloads");
  if (!version.ok()) {
    log::Warning("kueue.x-k8s.io discovery failed, not watched (the admission check decides nothing): {}", version.status().message());
    return;
  }
  if (version->empty()) return;
  kueue_version_ = *version;
  log::Info("watching Kueue's objects at kueue.x-k8s.io/{}", kueue_version_);
  struct Source {
    KueueFeed::Kind kind;
    const char* resource;
  };
  for (const Source& s : {Source{KueueFeed::Kind::kWorkload, "workloads"}, Source{KueueFeed::Kind::kResourceFlavor, "resourceflavors"},
                          Source{KueueFeed::Kind::kAdmissionCheck, "admissionchecks"},
                          Source{KueueFeed::Kind::kClusterQueue, "clusterqueues"}}) {
    // Optional: only the admission check depends on them.
    kueue_reflectors_.push_back(reflectors_.size());
    AddOptionalReflector({fmt::format("{}.kueue.x-k8s.io", s.resource), fmt::format("/apis/kueue.x-k8s.io/{}/{}", kueue_version_, s.resource), ""},
                         std::make_unique<KueueFeed>(s.kind, &inventory_->kueue()));
  }
  // The claim templates a Workload's pods name: their claims do not exist before the pods. Not
  // among the watches the check waits for: only Workloads that name a template depend on it (one
  // not read is Retry, with the reason).
  if (dra_version_.empty()) return;
  AddOptionalReflector({"resourceclaimtemplates", fmt::format("/apis/resource.k8s.io/{}/resourceclaimtemplates", dra_version_), ""},
                       std::make_unique<KueueFeed>(KueueFeed::Kind::kClaimTemplate, &inventory_->kueue()));
}

void ClusterSync::Start() {
  if (options_.watch_dra) AddDraReflectors();
  if (options_.watch_pod_groups) AddGroupReflectors();
  if (options_.watch_kueue) AddKueueReflectors();
  for (auto& r : reflectors_) r->Start();
  expirer_ = std::thread([this] {
    while (!SleepUnlessStopping(options_.expire_interval)) {
      // A stale view could expire bookings of pods it has not seen bound: wait for health.
      size_t released = healthy() ? inventory_->Expire() : 0;
      if (released > 0) log::Info("released {} expired booking(s)", released);
    }
  });
}

bool ClusterSync::SleepUnlessStopping(std::chrono::milliseconds interval) {
  auto deadline = std::chrono::steady_clock::now() + interval;
  MutexLock lock(&mu_);
  while (!stopping_) {
    auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return false;
    cv_.WaitFor(left);
  }
  return true;
}

void ClusterSync::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.SignalAll();
  for (auto& r : reflectors_) r->Stop();
  if (expirer_.joinable()) expirer_.join();
}

bool ClusterSync::synced() const {
  auto now = options_.reflector.clock->Now();
  for (size_t i = 0; i < reflectors_.size(); ++i) {
    if (reflectors_[i]->synced()) continue;
    if (!optional_[i]) return false;
    // An optional watch holds readiness back until its first LIST lands (a gang member filtered
    // before its PodGroup is read would be placed alone), through transient errors, but not once
    // it is refused (403: the ClusterRole not updated; it stays refused until a LIST passes) or
    // has failed for unhealthy_after.
    ReflectorStats s = reflectors_[i]->stats();
    bool given_up = s.refused || (s.failing_since && now - *s.failing_since > options_.unhealthy_after);
    if (!given_up) return false;
  }
  return true;
}

bool ClusterSync::healthy() const {
  if (!synced()) return false;
  auto now = options_.reflector.clock->Now();
  for (size_t i = 0; i < reflectors_.size(); ++i) {
    ReflectorStats s = reflectors_[i]->stats();
    if (!optional_[i] && s.failing_since && now - *s.failing_since > options_.unhealthy_after) return false;
  }
  return true;
}

bool ClusterSync::kueue_healthy() const {
  if (kueue_version_.empty() || !healthy()) return false;
  auto now = options_.reflector.clock->Now();
  for (size_t i : kueue_reflectors_) {
    ReflectorStats s = reflectors_[i]->stats();
    if (!s.synced || !s.served || (s.failing_since && now - *s.failing_since > options_.unhealthy_after)) return false;
  }
  return true;
}

bool ClusterSync::WaitSynced(std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!synced()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::vector<std::pair<std::string, ReflectorStats>> ClusterSync::stats() const {
  std::vector<std::pair<std::string, ReflectorStats>> out;
  for (const auto& r : reflectors_) out.emplace_back(r->type().name, r->stats());
  return out;
}

}  // namespace gpusched::kubeapi
