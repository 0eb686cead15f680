// File: kueue_table.cc
//
// kueue_table.h: Kueue's objects kept by key, replaced or changed as a whole new state.
#include "gpusched/inventory/kueue_table.h"

namespace gpusched::inventory {
namespace {

std::string WorkloadKey(const kueue::Workload& w) { return w.namespace_name + "/" + w.name; }

// Applies one kind's upserts and deletions to `into`; with `relisted`, those not upserted go.
template <typename Object, typename Key>
void ApplyKind(std::vector<Object>&& upserts, const std::vector<std::string>& deleted, bool relisted, Key key,
               std::map<std::string, Object, std::less<>>* into) {
  if (relisted) into->clear();
  for (const std::string& k : deleted) into->erase(k);
  for (Object& o : upserts) {
    std::string k = key(o);
    into->insert_or_assign(std::move(k), std::move(o));
  }
}

}  // namespace

const kueue::Workload* KueueState::FindWorkload(std::string_view key) const {
  auto it = workloads.find(key);
  return it == workloads.end() ? nullptr : &it->second;
}

void KueueTable::Replace(kueue::Objects objects, std::vector<dra::ResourceClaim> claim_templates) {
  Apply(KueueDelta{.upserts = std::move(objects),
                   .claim_templates = std::move(claim_templates),
                   .relisted = {.workloads = true, .flavors = true, .checks = true, .queues = true, .claim_templates = true}});
}

void KueueTable::Apply(KueueDelta delta) {
  MutexLock lock(&mu_);
  auto next = std::make_shared<KueueState>(*state_);
  ++next->version;
  auto by_name = [](const auto& o) { return o.name; };
  ApplyKind(std::move(delta.upserts.workloads), delta.deleted_workloads, delta.relisted.workloads, WorkloadKey, &next->workloads);
  ApplyKind(std::move(delta.upserts.flavors), delta.deleted_flavors, delta.relisted.flavors, by_name, &next->flavors);
  ApplyKind(std::move(delta.upserts.checks), delta.deleted_checks, delta.relisted.checks, by_name, &next->checks);
  ApplyKind(std::move(delta.upserts.queues), delta.deleted_queues, delta.relisted.queues, by_name, &next->queues);
  ApplyKind(std::move(delta.claim_templates), delta.deleted_claim_templates, delta.relisted.claim_templates,
            [](const dra::ResourceClaim& c) { return c.namespace_name + "/" + c.name; }, &next->claim_templates);
  state_ = std::move(next);
}

std::shared_ptr<const KueueState> KueueTable::State() const {
  MutexLock lock(&mu_);
  return state_;
}

}  // namespace gpusched::inventory
