// File: kueue_feed.cc
//
// kueue_feed.h: Kueue's objects from a reflector into the KueueTable.
#include "gpusched/kubeapi/kueue_feed.h"

#include "gpusched/common/log.h"
#include "gpusched/kubejson/dra_objects.h"
#include "gpusched/kubejson/kueue_objects.h"

namespace gpusched::kubeapi {
namespace {

std::string Meta(const rapidjson::Value& v, std::string_view field) {
  const rapidjson::Value* meta = v.IsObject() ? json::Find(v, "metadata") : nullptr;
  const rapidjson::Value* f = meta != nullptr && meta->IsObject() ? json::Find(*meta, field) : nullptr;
  return f != nullptr && f->IsString() ? std::string(f->GetString(), f->GetStringLength()) : "";
}

// Drops every earlier upsert of `key` from `objects` (a later event of one read wins).
template <typename Object, typename Key>
void DropEarlier(std::vector<Object>* objects, const std::string& key, Key key_of) {
  std::erase_if(*objects, [&](const Object& o) { return key_of(o) == key; });
}

}  // namespace

void KueueFeed::Replace(const std::vector<const rapidjson::Value*>& items) {
  inventory::KueueDelta delta;
  delta.relisted = {.workloads = kind_ == Kind::kWorkload, .flavors = kind_ == Kind::kResourceFlavor,
                    .checks = kind_ == Kind::kAdmissionCheck, .queues = kind_ == Kind::kClusterQueue,
                    .claim_templates = kind_ == Kind::kClaimTemplate};
  for (const rapidjson::Value* item : items) Add(*item, &delta);
  table_->Apply(std::move(delta));
}

void KueueFeed::Apply(const std::vector<const WatchEvent*>& events) {
  inventory::KueueDelta delta;
  for (const WatchEvent* e : events) {
    if (e->type == WatchEventType::kDeleted) {
      Delete(e->object(), &delta);
    } else {
      Delete(e->object(), &delta);  // what it said before goes, also when it cannot be read now
      Add(e->object(), &delta);
    }
  }
  table_->Apply(std::move(delta));
}

void KueueFeed::Add(const rapidjson::Value& v, inventory::KueueDelta* delta) const {
  auto keep = [&](auto decoded, auto* into, std::string_view kind) {
    if (!decoded.ok()) {
      log::Write(log::Level::kWarning, "object skipped", {{"kind", std::string(kind)}, {"error", decoded.status().message()}});
      return;
    }
    into->push_back(*std::move(decoded));
  };
  switch (kind_) {
    case Kind::kWorkload: return keep(kubejson::DecodeKueueWorkload(v, "Workload"), &delta->upserts.workloads, "Workload");
    case Kind::kResourceFlavor: return keep(kubejson::DecodeResourceFlavor(v, "ResourceFlavor"), &delta->upserts.flavors, "ResourceFlavor");
    case Kind::kAdmissionCheck: return keep(kubejson::DecodeAdmissionCheck(v, "AdmissionCheck"), &delta->upserts.checks, "AdmissionCheck");
    case Kind::kClusterQueue: return keep(kubejson::DecodeClusterQueue(v, "ClusterQueue"), &delta->upserts.queues, "ClusterQueue");
    case Kind::kClaimTemplate: return keep(kubejson::DecodeClaimTemplate(v), &delta->claim_templates, "ResourceClaimTemplate");
  }
}

void KueueFeed::Delete(const rapidjson::Value& v, inventory::KueueDelta* delta) const {
  std::string name = Meta(v, "name");
  if (name.empty()) return;
  auto by_name = [](const auto& o) { return o.name; };
  switch (kind_) {
    case Kind::kWorkload: {
      std::string key = Meta(v, "namespace") + "/" + name;
      DropEarlier(&delta->upserts.workloads, key, [](const kueue::Workload& w) { return w.namespace_name + "/" + w.name; });
      delta->deleted_workloads.push_back(std::move(key));
      return;
    }
    case Kind::kResourceFlavor:
      DropEarlier(&delta->upserts.flavors, name, by_name);
      delta->deleted_flavors.push_back(std::move(name));
      return;
    case Kind::kAdmissionCheck:
      DropEarlier(&delta->upserts.checks, name, by_name);
      delta->deleted_checks.push_back(std::move(name));
      return;
    case Kind::kClusterQueue:
      DropEarlier(&delta->upserts.queues, name, by_name);
      delta->deleted_queues.push_back(std::move(name));
      return;
    case Kind::kClaimTemplate: {
      std::string key = Meta(v, "namespace") + "/" + name;
      DropEarlier(&delta->claim_templates, key, [](const dra::ResourceClaim& c) { return c.namespace_name + "/" + c.name; });
      delta->deleted_claim_templates.push_back(std::move(key));
      return;
    }
  }
}

}  // namespace gpusched::kubeapi
