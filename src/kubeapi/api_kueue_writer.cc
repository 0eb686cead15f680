// File: api_kueue_writer.cc
//
// api_kueue_writer.h: the Lease read, a Workload's check state and an AdmissionCheck's Active
// condition written with resourceVersion preconditions.
#include "gpusched/kubeapi/api_kueue_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "gpusched/common/time_format.h"
#include "gpusched/json/json.h"
#include "gpusched/json/writer.h"

namespace gpusched::kubeapi {
namespace {

std::string ReadString(const rapidjson::Value& obj, std::string_view key) {
  const rapidjson::Value* v = obj.IsObject() ? json::Find(obj, key) : nullptr;
  return v != nullptr && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : "";
}

// Writes a map of strings as an object member `key` (nothing when empty).
void WriteMap(json::Writer& w, std::string_view key, const Labels& map) {
  if (map.empty()) return;
  w.Key(key).StartObject();
  for (const auto& [k, v] : map) w.Member(k, v);
  w.EndObject();
}

// gpusched's entry of status.admissionChecks as `update` makes it: the entry read (`before`, null
// when there is none) with state, message, lastTransitionTime (when the state changes),
// requeueAfterSeconds and podSetUpdates set; every other field as read (Kueue's retryCount).
void WriteEntry(json::Writer& w, const std::string& check, const extender::CheckUpdate& update, const rapidjson::Value* before,
                int64_t now_ms) {
  std::string state(kueue::CheckStateName(update.state));
  std::string since = before != nullptr ? ReadString(*before, "lastTransitionTime") : "";
  if (before == nullptr || ReadString(*before, "state") != state || since.empty()) since = FormatRfc3339(now_ms);
  w.StartObject().Member("name", check).Member("state", state).Member("lastTransitionTime", since).Member("message", update.message);
  static constexpr std::array<std::string_view, 6> kSet = {"name", "state", "lastTransitionTime", "message", "requeueAfterSeconds",
                                                          "podSetUpdates"};
  for (auto it = before != nullptr && before->IsObject() ? before->MemberBegin() : rapidjson::Value::ConstMemberIterator();
       before != nullptr && before->IsObject() && it != before->MemberEnd(); ++it) {
    std::string_view key(it->name.GetString(), it->name.GetStringLength());
    if (std::find(kSet.begin(), kSet.end(), key) == kSet.end()) w.Key(key).Value(it->value);
  }
  if (update.requeue_after_s) w.Key("requeueAfterSeconds").Int(*update.requeue_after_s);
  if (!update.updates.empty()) {
    w.Key("podSetUpdates").StartArray();
    for (const extender::PodSetUpdate& u : update.updates) {
      w.StartObject().Member("name", u.name);
      WriteMap(w, "annotations", u.annotations);
      WriteMap(w, "nodeSelector", u.node_selector);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

}  // namespace

StatusOr<std::string> ApiKueueWriter::Call(std::string_view method, const std::string& path, std::string_view body,
                                           std::string_view what) {
  StatusOr<ApiResponse> r = client_->Send(method, path, body, method == "PATCH" ? kMergePatch : "application/json",
                                          options_.request_timeout);
  if (!r.ok()) return UnavailableError(fmt::format("{}: {}", what, r.status().message()));
  if (r->status == 200) return std::move(r->body);
  std::string why = fmt::format("{}: {} {}", what, r->status, StatusMessage(*r));
  if (r->status == 404 || r->status == 409) return AbortedError(why);
  if (r->status >= 400 && r->status < 500 && r->status != 408 && r->status != 429) return FailedPreconditionError(why);
  return UnavailableError(why);
}

bool ApiKueueWriter::Leading() {
  auto now = options_.clock->Now();
  {
    MutexLock lock(&mu_);
    if (asked_ && now - *asked_ < kLeaderCacheFor) return leading_;
  }
  bool leading = ReadLease();
  MutexLock lock(&mu_);
  asked_ = now;
  leading_ = leading;
  return leading;
}

bool ApiKueueWriter::ReadLease() {
  std::string path = fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases/{}", options_.lease_namespace, options_.lease_name);
  StatusOr<std::string> body = Call("GET", path, {}, "reading the leader's Lease");
  rapidjson::Document lease;
  if (!body.ok() || !json::Parse(*body, &lease).ok() || !lease.IsObject()) return false;
  const rapidjson::Value* spec = json::Find(lease, "spec");
  if (spec == nullptr || !spec->IsObject()) return false;
  std::string holder = ReadString(*spec, "holderIdentity");
  if (options_.identity.empty() || (holder != options_.identity && !holder.starts_with(options_.identity + "_"))) return false;
  std::optional<int64_t> renewed = ParseRfc3339(ReadString(*spec, "renewTime"));
  const rapidjson::Value* duration = json::Find(*spec, "leaseDurationSeconds");
  if (!renewed || duration == nullptr || !duration->IsInt64()) return false;
  return *renewed + duration->GetInt64() * 1000 > options_.clock->WallMs();
}

Status ApiKueueWriter::SetCheckState(const kueue::Workload& w, const std::string& check, const extender::CheckUpdate& update) {
  std::string base = fmt::format("/apis/kueue.x-k8s.io/{}/namespaces/{}/workloads/{}", options_.version, w.namespace_name, w.name);
  std::string what = fmt::format("setting check {} of Workload {}/{} {}", check, w.namespace_name, w.name, kueue::CheckStateName(update.state));
  GPUSCHED_ASSIGN_OR_RETURN(std::string body, Call("GET", base, {}, what));
  rapidjson::Document now;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(body, &now));
  const rapidjson::Value* meta = now.IsObject() ? json::Find(now, "metadata") : nullptr;
  std::string rv = meta != nullptr ? ReadString(*meta, "resourceVersion") : "";
  if (rv != w.resource_version) return AbortedError(fmt::format("{}: changed since judged (resourceVersion {}, judged {})", what, rv, w.resource_version));
  const rapidjson::Value* status = json::Find(now, "status");
  const rapidjson::Value* checks = status != nullptr && status->IsObject() ? json::Find(*status, "admissionChecks") : nullptr;
  json::Writer patch;
  patch.StartObject().Key("metadata").StartObject().Member("resourceVersion", rv).EndObject();
  patch.Key("status").StartObject().Key("admissionChecks").StartArray();
  bool found = false;
  for (rapidjson::SizeType i = 0; checks != nullptr && checks->IsArray() && i < checks->Size(); ++i) {
    const rapidjson::Value& entry = (*checks)[i];
    if (ReadString(entry, "name") != check) {
      patch.Value(entry);
      continue;
    }
    found = true;
    WriteEntry(patch, check, update, &entry, options_.clock->WallMs());
  }
  if (!found) return AbortedError(fmt::format("{}: the Workload's status has no entry for the check", what));
  patch.EndArray().EndObject().EndObject();
  return Call("PATCH", base + "/status", patch.Take(), what).status();
}

Status ApiKueueWriter::Activate(const kueue::AdmissionCheck& check) {
  std::string path = fmt::format("/apis/kueue.x-k8s.io/{}/admissionchecks/{}", options_.version, check.name);
  std::string what = fmt::format("setting AdmissionCheck {} Active", check.name);
  GPUSCHED_ASSIGN_OR_RETURN(std::string body, Call("GET", path, {}, what));
  rapidjson::Document now;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(body, &now));
  const rapidjson::Value* meta = now.IsObject() ? json::Find(now, "metadata") : nullptr;
  json::Writer patch;
  patch.StartObject().Key("metadata").StartObject().Member("resourceVersion", meta != nullptr ? ReadString(*meta, "resourceVersion") : "");
  patch.EndObject().Key("status").StartObject().Key("conditions").StartArray().StartObject();
  patch.Member("type", "Active").Member("status", "True").Member("reason", "Active");
  patch.Member("message", "gpusched judges Workloads' GPU placement").Member("lastTransitionTime", FormatRfc3339(options_.clock->WallMs()));
  patch.EndObject().EndArray().EndObject().EndObject();
  return Call("PATCH", path + "/status", patch.Take(), what).status();
}

}  // namespace gpusched::kubeapi
