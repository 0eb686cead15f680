// File: objects.cc
//
// objects.h's object half: Pods (containers, requests and limits, claims, status, controller,
// priority), Nodes with gpusched's annotations, PodDisruptionBudgets, label selectors, and Lists
// read into ClusterObjects. The gpu-devices annotation: gpu_devices_json.cc.
#include "gpusched/kubejson/objects.h"

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cmath>

#include "gpusched/common/quantity.h"
#include "gpusched/common/time_format.h"
#include "gpusched/kubejson/dra_objects.h"
#include "gpusched/kubejson/node_bookings.h"
#include "gpusched/kubejson/node_holds.h"
#include "gpusched/kubejson/kueue_objects.h"
#include "gpusched/kubejson/pod_constraints.h"
#include "gpusched/kubejson/pod_groups.h"
#include "gpusched/model/names.h"
#include "gpusched/model/units.h"

namespace gpusched::kubejson {
namespace {

using rapidjson::Value;

// The text of a quantity member: the API server writes strings; a JSON number is read by its
// shortest decimal form, as Quantity.UnmarshalJSON reads the raw number.
StatusOr<std::string> QuantityText(const Value& v, std::string_view field) {
  if (v.IsString()) return std::string(json::View(v));
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  if (v.IsUint64()) return std::to_string(v.GetUint64());
  if (v.IsNumber()) {
    // A whole number too large for uint64 stays a plain number (DecimalSI), as its JSON text is.
    double d = v.GetDouble();
    return std::trunc(d) == d && std::fabs(d) < 1e300 ? fmt::format("{:.0f}", d) : fmt::format("{}", d);
  }
  return json::WrongType(field, "quantity string", v);
}

// Reads the three GPU resources from a ResourceList object. Extended resources are integers in
// their own unit; every spelling apimachinery accepts is read ("8k" is 8000 MiB of mgpu-memory).
Status ReadGpuResources(const Value& list, std::string_view path, GpuResources* out) {
  struct Field {
    std::string_view name;
    std::optional<int64_t> GpuResources::*dst;
    std::string_view unit;
  };
  static constexpr Field kFields[] = {{names::kNvidiaGpu, &GpuResources::nvidia_gpus, "GPUs"},
                                      {names::kMgpuCore, &GpuResources::mgpu_core_percent, "percent of one GPU"},
                                      {names::kMgpuMemory, &GpuResources::mgpu_memory_mib, "MiB"}};
  for (const Field& f : kFields) {
    const Value* v = json::Find(list, f.name);
    if (v == nullptr) continue;
    std::string field = fmt::format("{}[\"{}\"]", path, f.name);
    GPUSCHED_ASSIGN_OR_RETURN(std::string text, QuantityText(*v, field));
    StatusOr<int64_t> q = ParseQuantityWhole(text);
    if (!q.ok()) {
      return InvalidArgumentError(fmt::format("{}: {} ({} counts {}; extended resources are integers)", field,
                                              q.status().message(), f.name, f.unit));
    }
    if (*q < 0) return InvalidArgumentError(fmt::format("{}: \"{}\" is negative", field, text));
    if (*q > kMaxGpuQuantity) {
      return InvalidArgumentError(fmt::format("{}: \"{}\" is {} {}, above the largest quantity gpusched accepts ({})",
                                              field, text, *q, f.unit, kMaxGpuQuantity));
    }
    out->*f.dst = *q;
    // A spelling the API server would not have made of a plain number ("1Gi", "1e3") is kept for
    // reasons: it is likely a unit mistake. Its canonical decimal form ("8k") is not.
    if (text != std::to_string(*q) && text != FormatQuantity(*q)) {
      out->spelling.insert_or_assign(std::string(f.name), std::move(text));
    }
  }
  return OkStatus();
}

// Reads the entries of a ResourceList object but the three GPU resources (ReadGpuResources) in
// NodeResourcesFit's units (resource_list.h) into `out`, replacing what `out` holds for the same
// names. An entry that is not a quantity is left out: the API server writes none, and these
// amounts only refine preemption.
void ReadResourceList(const Value& list, ResourceList* out) {
  for (auto it = list.MemberBegin(); it != list.MemberEnd(); ++it) {
    std::string_view name = json::View(it->name);
    if (name == names::kNvidiaGpu || name == names::kMgpuCore || name == names::kMgpuMemory) continue;
    StatusOr<std::string> text = QuantityText(it->value, name);
    StatusOr<int64_t> milli = text.ok() ? ParseQuantityMilli(*text) : StatusOr<int64_t>(text.status());
    if (!milli.ok() || *milli < 0) continue;
    int64_t amount = name == "cpu" ? *milli : *milli / 1000 + (*milli % 1000 != 0 ? 1 : 0);
    out->Add(name, amount - out->Get(name));
  }
}

// Container requests for NodeResourcesFit: the limits stand in for requests that are missing,
// as the API server defaults them.
void ReadAllRequests(const Value& resources, Container* out) {
  if (const Value* limits = json::Find(resources, "limits"); limits != nullptr && limits->IsObject()) {
    ReadResourceList(*limits, &out->other_requests);
  }
  if (const Value* requests = json::Find(resources, "requests"); requests != nullptr && requests->IsObject()) {
    ReadResourceList(*requests, &out->other_requests);
  }
}

Status DecodeContainer(const Value& v, std::string_view path, bool init, Container* out) {
  if (!v.IsObject()) return json::WrongType(path, "object", v);
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(v, "name", path, &out->name));
  const Value* resources = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "resources", path, &resources));
  if (resources != nullptr) {
    std::string rpath = fmt::format("{}.resources", path);
    const Value* list = nullptr;
    GPUSCHED_RETURN_IF_ERROR(json::FindObject(*resources, "requests", rpath, &list));
    if (list != nullptr) GPUSCHED_RETURN_IF_ERROR(ReadGpuResources(*list, rpath + ".requests", &out->requests));
    GPUSCHED_RETURN_IF_ERROR(json::FindObject(*resources, "limits", rpath, &list));
    if (list != nullptr) GPUSCHED_RETURN_IF_ERROR(ReadGpuResources(*list, rpath + ".limits", &out->limits));
    ReadAllRequests(*resources, out);
  }
  if (init) {
    std::string restart;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(v, "restartPolicy", path, &restart));
    out->sidecar = restart == "Always";
  }
  return OkStatus();
}

Status DecodeContainers(const Value& spec, std::string_view key, std::string_view path, bool init,
                        std::vector<Container>* out) {
  const Value* list = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(spec, key, path, &list));
  if (list == nullptr) return OkStatus();
  out->reserve(list->Size());
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    Container c;
    GPUSCHED_RETURN_IF_ERROR(DecodeContainer((*list)[i], fmt::format("{}.{}[{}]", path, key, i), init, &c));
    out->push_back(std::move(c));
  }
  return OkStatus();
}

// Reads a map[string]string member; calls keep(key) to decide which entries to store.
template <typename Keep>
Status ReadStringMap(const Value& obj, std::string_view key, std::string_view path, Keep keep, AnnotationMap* out) {
  const Value* map = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(obj, key, path, &map));
  if (map == nullptr) return OkStatus();
  for (auto it = map->MemberBegin(); it != map->MemberEnd(); ++it) {
    std::string_view name = json::View(it->name);
    if (!keep(name)) continue;
    if (!it->value.IsString()) return json::WrongType(fmt::format("{}.{}[\"{}\"]", path, key, name), "string", it->value);
    out->emplace(std::string(name), std::string(json::View(it->value)));
  }
  return OkStatus();
}

PodPhase ParsePhase(std::string_view phase) {
  if (phase == "Running") return PodPhase::kRunning;
  if (phase == "Succeeded") return PodPhase::kSucceeded;
  if (phase == "Failed") return PodPhase::kFailed;
  if (phase == "Unknown") return PodPhase::kUnknown;
  return PodPhase::kPending;
}

// Reads spec.resourceClaims (Kubernetes 1.31 and later: the claim name or template name sits on
// the entry itself).
Status DecodePodClaims(const Value& spec, std::string_view spath, std::vector<PodClaimRef>* out) {
  const Value* claims = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(spec, "resourceClaims", spath, &claims));
  for (rapidjson::SizeType i = 0; claims != nullptr && i < claims->Size(); ++i) {
    const Value& c = (*claims)[i];
    std::string cpath = fmt::format("{}.resourceClaims[{}]", spath, i);
    if (!c.IsObject()) return json::WrongType(cpath, "object", c);
    PodClaimRef ref;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "name", cpath, &ref.name));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "resourceClaimName", cpath, &ref.claim_name));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "resourceClaimTemplateName", cpath, &ref.template_name));
    if (ref.name.empty()) return InvalidArgumentError(cpath + ".name: missing");
    if (json::Find(c, "source") != nullptr && ref.claim_name.empty() && ref.template_name.empty()) {
      return InvalidArgumentError(fmt::format(
          "{}.source: the claim reference of Kubernetes 1.30 and older (DRA resource.k8s.io/v1alpha2), which "
          "gpusched does not support; since 1.31 resourceClaimName or resourceClaimTemplateName sit on the entry",
          cpath));
    }
    if (ref.claim_name.empty() == ref.template_name.empty()) {
      return InvalidArgumentError(
          fmt::format("{}: exactly one of resourceClaimName and resourceClaimTemplateName must be set", cpath));
    }
    out->push_back(std::move(ref));
  }
  return OkStatus();
}

// Reads status.phase, the generated claim names of status.resourceClaimStatuses and the special
// claim of status.extendedResourceClaimStatus.
Status DecodePodStatus(const Value& status, std::string_view path, Pod* pod) {
  std::string phase;
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(status, "phase", path, &phase));
  pod->phase = ParsePhase(phase);
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(status, "nominatedNodeName", path, &pod->nominated_node));
  const Value* claim_statuses = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(status, "resourceClaimStatuses", path, &claim_statuses));
  for (rapidjson::SizeType i = 0; claim_statuses != nullptr && i < claim_statuses->Size(); ++i) {
    const Value& c = (*claim_statuses)[i];
    std::string cpath = fmt::format("{}.resourceClaimStatuses[{}]", path, i);
    if (!c.IsObject()) return json::WrongType(cpath, "object", c);
    std::string name, generated;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "name", cpath, &name));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "resourceClaimName", cpath, &generated));
    for (PodClaimRef& ref : pod->resource_claims) {
      if (ref.name == name) ref.generated = generated;
    }
  }
  const Value* extended = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(status, "extendedResourceClaimStatus", path, &extended));
  if (extended != nullptr) {
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*extended, "resourceClaimName", fmt::format("{}.extendedResourceClaimStatus", path),
                                              &pod->extended_resource_claim));
  }
  return OkStatus();
}

std::string Compact(const Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// Returns the uid a pod without one is recorded under: a bound pod must stay counted on its node
// even when it cannot be keyed by the API server's UID (a hand-written file).
std::string StandInUid(const Pod& pod) { return fmt::format("(no uid) {}/{}", pod.namespace_name, pod.name); }

// Reads obj.apiVersion into *out when it is a string (only pod groups need it: a missing or odd
// one is theirs to name).
void ReadApiVersion(const Value& obj, std::string* out) {
  const Value* v = json::Find(obj, "apiVersion");
  if (v != nullptr && v->IsString()) *out = v->GetString();
}

// Appends the pod groups of one PodGroup or Workload object. One of another API group
// (scheduling.volcano.sh, say) is not ours, and a Workload of 1.36 or later holds templates
// only: both are skipped.
void AppendPodGroups(const Value& item, std::string_view kind, std::string_view api_version, std::string_view path,
                     ClusterObjects* out) {
  std::optional<GroupApi> api = GroupApiOf(kind, api_version);
  if (!api) {
    bool ours = api_version.empty() || api_version.starts_with("scheduling.k8s.io/") || api_version.starts_with("scheduling.x-k8s.io/");
    if (kind == "PodGroup" && ours) {
      out->errors.push_back(fmt::format(
          "{}.apiVersion: \"{}\" is not one gpusched reads (PodGroup scheduling.k8s.io/v1beta1 or v1alpha2, Workload "
          "scheduling.k8s.io/v1alpha1, PodGroup scheduling.x-k8s.io/v1alpha1)",
          path, api_version));
    }
    return;
  }
  StatusOr<std::vector<PodGroup>> groups = DecodePodGroups(item, *api, path);
  if (!groups.ok()) return out->errors.push_back(groups.status().message());
  for (PodGroup& g : *groups) out->pod_groups.push_back(std::move(g));
}

// Appends one of Kueue's objects that the admission check reads (others of Kueue's are skipped).
void AppendKueueObject(const Value& item, std::string_view kind, std::string_view path, ClusterObjects* out) {
  auto keep = [&](auto decoded, auto* into) {
    if (!decoded.ok()) return out->errors.push_back(decoded.status().message());
    into->push_back(*std::move(decoded));
  };
  if (kind == "Workload") keep(DecodeKueueWorkload(item, path), &out->kueue.workloads);
  else if (kind == "ResourceFlavor") keep(DecodeResourceFlavor(item, path), &out->kueue.flavors);
  else if (kind == "AdmissionCheck") keep(DecodeAdmissionCheck(item, path), &out->kueue.checks);
  else if (kind == "ClusterQueue") keep(DecodeClusterQueue(item, path), &out->kueue.queues);
}

// Appends one object. An object that cannot be identified is listed in out->errors and skipped; a
// node or pod that can be is kept, with its spec_error when a field of it cannot be read.
void AppendObject(const Value& item, std::string_view kind, std::string_view api_version, std::string_view path,
                  ClusterObjects* out) {
  auto fail = [&](const Status& s) { out->errors.push_back(s.message()); };
  if (kind == "Node") {
    StatusOr<Node> node = DecodeNode(item, path);
    if (!node.ok()) return fail(node.status());
    out->nodes.push_back(std::move(node).value());
  } else if (kind == "Pod") {
    StatusOr<Pod> pod = DecodePod(item, path);
    if (!pod.ok()) return fail(pod.status());
    if (pod->uid.empty()) {
      // The ledger is keyed by UID: two pods without one would count as one.
      fail(InvalidArgumentError(fmt::format("{}.metadata.uid: missing (pod {}/{})", path, pod->namespace_name, pod->name)));
      if (!pod->bound() || pod->terminal()) return;
      pod->uid = StandInUid(*pod);
      if (pod->spec_error.empty()) pod->spec_error = fmt::format("{}.metadata.uid: missing", path);
    }
    out->pods.push_back(std::move(pod).value());
  } else if (kind == "PodDisruptionBudget") {
    StatusOr<DisruptionBudget> budget = DecodeDisruptionBudget(item, path);
    if (!budget.ok()) return fail(budget.status());
    out->budgets.push_back(std::move(budget).value());
  } else if (IsKueueApiVersion(api_version)) {
    AppendKueueObject(item, kind, path, out);
  } else if (kind == "ResourceClaimTemplate") {
    StatusOr<dra::ResourceClaim> made = DecodeClaimTemplate(item);
    if (!made.ok()) return fail(made.status());
    out->claim_templates.push_back(std::move(made).value());
  } else if (kind == "PodGroup" || kind == "Workload") {
    AppendPodGroups(item, kind, api_version, path, out);
  } else if (std::optional<dra::ObjectKind> dra_kind = DraKind(kind)) {
    dra::DraObject object = DecodeDraObject(item, *dra_kind);
    if (object.key.empty()) return fail(InvalidArgumentError(fmt::format("{}.metadata.name: missing", path)));
    out->dra_objects.push_back(std::move(object));
  }
}

}  // namespace

// spec.priority: an int32 (the API server rejects anything else); absent or null is 0.
Status ReadPriority(const Value& spec, const std::string& path, int32_t* out) {
  const Value* v = json::Find(spec, "priority");
  if (v == nullptr || v->IsNull()) return OkStatus();
  if (!v->IsInt()) {
    std::string text;
    json::AppendValue(&text, *v);
    return InvalidArgumentError(fmt::format("{}.priority: {} is not a 32-bit integer", path, text));
  }
  *out = v->GetInt();
  return OkStatus();
}

namespace {

// The UID of the owner reference with controller: true, or "" (none, or not readable: an owner
// only matters to a defrag move, which then treats the pod as one nothing recreates).
// The controlling owner of metadata.ownerReferences into pod->controller_uid and
// controller_kind; left empty when there is none.
void ReadController(const Value& meta, Pod* pod) {
  const Value* owners = json::Find(meta, "ownerReferences");
  if (owners == nullptr || !owners->IsArray()) return;
  for (const Value& o : owners->GetArray()) {
    const Value* controller = o.IsObject() ? json::Find(o, "controller") : nullptr;
    const Value* uid = o.IsObject() ? json::Find(o, "uid") : nullptr;
    if (controller != nullptr && controller->IsBool() && controller->GetBool() && uid != nullptr && uid->IsString()) {
      pod->controller_uid = uid->GetString();
      const Value* kind = json::Find(o, "kind");
      if (kind != nullptr && kind->IsString()) pod->controller_kind = kind->GetString();
      return;
    }
  }
}

// metadata.creationTimestamp (RFC 3339) into *out_ms; absent or null leaves it 0.
Status ReadCreated(const Value& meta, const std::string& path, int64_t* out_ms) {
  const Value* v = json::Find(meta, "creationTimestamp");
  if (v == nullptr || v->IsNull()) return OkStatus();
  std::optional<int64_t> ms = v->IsString() ? ParseRfc3339(v->GetString()) : std::nullopt;
  if (!ms) {
    std::string text;
    json::AppendValue(&text, *v);
    return InvalidArgumentError(fmt::format("{}.creationTimestamp: {} is not an RFC 3339 time", path, text));
  }
  *out_ms = *ms;
  return OkStatus();
}

}  // namespace

StatusOr<Pod> DecodePod(const Value& v, std::string_view path) {
  if (!v.IsObject()) return json::WrongType(path, "object", v);
  Pod pod;
  const Value* meta = nullptr;
  std::string mpath = fmt::format("{}.metadata", path);
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "metadata", path, &meta));
  if (meta != nullptr) {
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "name", mpath, &pod.name));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "namespace", mpath, &pod.namespace_name));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "uid", mpath, &pod.uid));
  }
  // From here on, a field that cannot be read marks the pod (Pod::spec_error), so that a bound
  // pod is still known, and counted, on its node.
  auto note = [&](const Status& s) {
    if (!s.ok() && pod.spec_error.empty()) pod.spec_error = s.message();
  };
  if (meta != nullptr) {
    note(json::ReadString(*meta, "resourceVersion", mpath, &pod.resource_version));
    note(ReadStringMap(*meta, "annotations", mpath, IsTrackedAnnotation, &pod.annotations));
    note(ReadStringMap(*meta, "labels", mpath, [](std::string_view) { return true; }, &pod.labels));
    const Value* deletion = json::Find(*meta, "deletionTimestamp");
    pod.terminating = deletion != nullptr && !deletion->IsNull();
    ReadController(*meta, &pod);
    note(ReadCreated(*meta, mpath, &pod.created_ms));
  }
  const Value* spec = nullptr;
  note(json::FindObject(v, "spec", path, &spec));
  if (spec != nullptr) {
    std::string spath = fmt::format("{}.spec", path);
    note(json::ReadString(*spec, "nodeName", spath, &pod.node_name));
    note(ReadPriority(*spec, spath, &pod.priority));
    std::string preemption_policy;
    note(json::ReadString(*spec, "preemptionPolicy", spath, &preemption_policy));
    pod.never_preempts = preemption_policy == "Never";
    const Value* gates = json::Find(*spec, "schedulingGates");
    pod.gated = gates != nullptr && gates->IsArray() && !gates->Empty();
    note(json::ReadString(*spec, "schedulerName", spath, &pod.scheduler_name));
    note(DecodeContainers(*spec, "containers", spath, false, &pod.containers));
    note(DecodeContainers(*spec, "initContainers", spath, true, &pod.init_containers));
    note(DecodePodClaims(*spec, spath, &pod.resource_claims));
    note(DecodePodConstraints(*spec, spath, &pod.constraints));
    note(ReadPodGroupRef(*spec, pod.labels, spath, &pod.group));
    if (const Value* overhead = json::Find(*spec, "overhead"); overhead != nullptr && overhead->IsObject()) {
      ReadResourceList(*overhead, &pod.overhead);
    }
    const Value* resources = json::Find(*spec, "resources");
    const Value* requests = resources != nullptr && resources->IsObject() ? json::Find(*resources, "requests") : nullptr;
    if (requests != nullptr && requests->IsObject()) ReadResourceList(*requests, &pod.pod_requests);
  }
  const Value* status = nullptr;
  note(json::FindObject(v, "status", path, &status));
  if (status != nullptr) note(DecodePodStatus(*status, fmt::format("{}.status", path), &pod));
  return pod;
}

// Reads a metav1.LabelSelector (matchLabels, matchExpressions) at `sel`.
Status ReadLabelSelector(const Value& selector, const std::string& sel, LabelSelector* out) {
  GPUSCHED_RETURN_IF_ERROR(ReadStringMap(selector, "matchLabels", sel, [](std::string_view) { return true; }, &out->match_labels));
  const Value* expressions = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(selector, "matchExpressions", sel, &expressions));
  for (rapidjson::SizeType i = 0; expressions != nullptr && i < expressions->Size(); ++i) {
    const Value& e = (*expressions)[i];
    std::string epath = fmt::format("{}.matchExpressions[{}]", sel, i);
    if (!e.IsObject()) return json::WrongType(epath, "object", e);
    LabelSelector::Requirement r;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(e, "key", epath, &r.key));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(e, "operator", epath, &r.op));
    if (r.op != "In" && r.op != "NotIn" && r.op != "Exists" && r.op != "DoesNotExist") {
      return InvalidArgumentError(fmt::format("{}.operator: \"{}\" is not In, NotIn, Exists or DoesNotExist", epath, r.op));
    }
    const Value* values = nullptr;
    GPUSCHED_RETURN_IF_ERROR(json::FindArray(e, "values", epath, &values));
    for (rapidjson::SizeType k = 0; values != nullptr && k < values->Size(); ++k) {
      if (!(*values)[k].IsString()) return json::WrongType(fmt::format("{}.values[{}]", epath, k), "string", (*values)[k]);
      r.values.emplace_back(json::View((*values)[k]));
    }
    out->expressions.push_back(std::move(r));
  }
  return OkStatus();
}

StatusOr<DisruptionBudget> DecodeDisruptionBudget(const Value& v, std::string_view path) {
  if (!v.IsObject()) return json::WrongType(path, "object", v);
  DisruptionBudget b;
  const Value* meta = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "metadata", path, &meta));
  std::string mpath = fmt::format("{}.metadata", path);
  if (meta == nullptr) return InvalidArgumentError(mpath + ": missing");
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "namespace", mpath, &b.namespace_name));
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "name", mpath, &b.name));
  if (b.name.empty()) return InvalidArgumentError(mpath + ".name: missing");
  const Value* spec = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "spec", path, &spec));
  const Value* selector = nullptr;
  std::string spath = fmt::format("{}.spec", path);
  if (spec != nullptr) GPUSCHED_RETURN_IF_ERROR(json::FindObject(*spec, "selector", spath, &selector));
  if (selector != nullptr) GPUSCHED_RETURN_IF_ERROR(ReadLabelSelector(*selector, spath + ".selector", &b.selector));
  b.selector_set = selector != nullptr;
  const Value* status = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "status", path, &status));
  if (status != nullptr) {
    std::string stpath = fmt::format("{}.status", path);
    int64_t allowed = 0;
    GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(*status, "disruptionsAllowed", stpath, &allowed));
    b.disruptions_allowed = static_cast<int32_t>(std::clamp<int64_t>(allowed, 0, INT32_MAX));
    const Value* disrupted = nullptr;
    GPUSCHED_RETURN_IF_ERROR(json::FindObject(*status, "disruptedPods", stpath, &disrupted));
    if (disrupted != nullptr) {
      for (auto it = disrupted->MemberBegin(); it != disrupted->MemberEnd(); ++it) b.disrupted_pods.emplace(json::View(it->name));
    }
  }
  return b;
}

StatusOr<Node> DecodeNode(const Value& v, std::string_view path) {
  if (!v.IsObject()) return json::WrongType(path, "object", v);
  Node node;
  const Value* meta = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "metadata", path, &meta));
  std::string mpath = fmt::format("{}.metadata", path);
  if (meta != nullptr) GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "name", mpath, &node.name));
  if (node.name.empty()) return InvalidArgumentError(mpath + ".name: missing");

  // From here on, a problem with the node's GPU fields marks the node, not the whole input.
  auto note = [&](const Status& s) {
    if (!s.ok() && node.spec_error.empty()) node.spec_error = s.message();
  };
  note(json::ReadString(*meta, "uid", mpath, &node.uid));
  note(json::ReadString(*meta, "resourceVersion", mpath, &node.resource_version));
  AnnotationMap& labels = node.labels;  // all of them: DRA node selectors match on any label
  note(ReadStringMap(*meta, "labels", mpath, [](std::string_view) { return true; }, &labels));
  if (auto it = labels.find(names::kScheduleModeLabel); it != labels.end()) node.mode_label = it->second;
  if (auto it = labels.find(names::kComputePolicy); it != labels.end()) node.compute_policy_label = it->second;
  if (auto it = labels.find("nvidia.com/gpu.product"); it != labels.end()) node.gpu_product = it->second;

  AnnotationMap annotations;
  note(ReadStringMap(
      *meta, "annotations", mpath,
      [](std::string_view k) {
        return k == names::kGpuDevicesAnnotation || k == names::kBookingsAnnotation || k == names::kHoldsAnnotation;
      },
      &annotations));
  // Each of gpusched's annotations read into its field. An unreadable one is noted (spec_error):
  // with what is booked, held or installed here unknown, the node takes no GPU pods.
  auto read = [&](std::string_view key, auto parse, auto* field) {
    auto it = annotations.find(key);
    if (it == annotations.end()) return;
    auto parsed = parse(it->second);
    if (parsed.ok()) {
      *field = std::move(parsed).value();
    } else {
      note(parsed.status().WithContext(fmt::format("annotation {}", key)));
    }
  };
  read(names::kBookingsAnnotation, [&](const std::string& v) { return ParseNodeBookings(v, node.name); }, &node.bookings);
  read(names::kHoldsAnnotation, [&](const std::string& v) { return ParseNodeHolds(v, node.name); }, &node.holds);
  read(names::kGpuDevicesAnnotation, [](const std::string& v) { return ParseGpuDevices(v); }, &node.published_gpus);

  note(DecodeNodeSchedulability(v, std::string(path), &node.schedulability));
  const Value* status = nullptr;
  note(json::FindObject(v, "status", path, &status));
  const Value* allocatable = nullptr;
  if (status != nullptr) note(json::FindObject(*status, "allocatable", fmt::format("{}.status", path), &allocatable));
  if (allocatable != nullptr) {
    GpuResources r;
    note(ReadGpuResources(*allocatable, fmt::format("{}.status.allocatable", path), &r));
    node.allocatable.nvidia_gpus = r.nvidia_gpus.value_or(0);
    node.allocatable.mgpu_core_percent = r.mgpu_core_percent.value_or(0);
    node.allocatable.mgpu_memory_mib = r.mgpu_memory_mib.value_or(0);
    ReadResourceList(*allocatable, &node.other_allocatable);
  }
  return node;
}

StatusOr<std::vector<std::string>> ObjectsOfKind(std::string_view text, std::string_view kind) {
  rapidjson::Document doc;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(text, &doc));
  if (!doc.IsObject()) return json::WrongType("document", "object", doc);
  std::string doc_kind;
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(doc, "kind", "document", &doc_kind));
  std::vector<std::string> out;
  const Value* items = json::Find(doc, "items");
  if (items == nullptr) {
    if (doc_kind == kind) out.push_back(Compact(doc));
    return out;
  }
  if (!items->IsArray()) return json::WrongType("items", "array", *items);
  std::string list_kind = doc_kind.ends_with("List") && doc_kind != "List" ? doc_kind.substr(0, doc_kind.size() - 4) : "";
  for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
    const Value& item = (*items)[i];
    if (!item.IsObject()) return json::WrongType(fmt::format("items[{}]", i), "object", item);
    std::string k = list_kind;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(item, "kind", fmt::format("items[{}]", i), &k));
    if (k == kind) out.push_back(Compact(item));
  }
  return out;
}

Status AppendClusterJson(std::string_view text, ClusterObjects* out) {
  rapidjson::Document doc;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(text, &doc));
  if (!doc.IsObject()) return json::WrongType("document", "object", doc);
  std::string kind, api_version;
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(doc, "kind", "document", &kind));
  ReadApiVersion(doc, &api_version);
  const Value* items = json::Find(doc, "items");
  if (kind.ends_with("List") || (kind.empty() && items != nullptr)) {
    if (items == nullptr) return OkStatus();
    if (!items->IsArray()) return json::WrongType("items", "array", *items);
    std::string item_kind = kind == "List" ? "" : kind.substr(0, kind.size() - 4);
    for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
      const Value& item = (*items)[i];
      std::string path = fmt::format("items[{}]", i);
      if (!item.IsObject()) {
        out->errors.push_back(json::WrongType(path, "object", item).message());
        continue;
      }
      std::string k = item_kind;
      std::string v = item_kind.empty() ? "" : api_version;  // a typed list's items share its version
      Status s = json::ReadString(item, "kind", path, &k);
      ReadApiVersion(item, &v);
      if (s.ok() && k.empty()) s = InvalidArgumentError(path + ".kind: missing");
      if (!s.ok()) {
        out->errors.push_back(s.message());
        continue;
      }
      AppendObject(item, k, v, fmt::format("{} ({})", path, k), out);
    }
    return OkStatus();
  }
  if (kind.empty()) return InvalidArgumentError("document.kind: missing");
  AppendObject(doc, kind, api_version, kind, out);
  return OkStatus();
}

}  // namespace gpusched::kubejson
