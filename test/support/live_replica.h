// File: live_replica.h
//
// One gpusched replica wired to an API server the way `gpusched serve --kubeconfig` wires it:
// an inventory kept in sync by watches, the live binder, evictor, hold publisher, nominator and
// event recorder behind the extender's service. For tests that drive the service in process.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include "eventually.h"
#include "gpusched/kubejson/dra_objects.h"
#include "gpusched/extender/service.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubeapi/api_binder.h"
#include "gpusched/kubeapi/api_evictor.h"
#include "gpusched/kubeapi/api_hold_publisher.h"
#include "gpusched/kubeapi/api_kueue_writer.h"
#include "gpusched/kubeapi/api_pod_nominator.h"
#include "gpusched/kubeapi/api_claim_writer.h"
#include "gpusched/kubeapi/api_client.h"
#include "gpusched/kubeapi/cluster_sync.h"
#include "gpusched/kubeapi/event_recorder.h"

namespace gpusched::testing {

struct LiveReplica {
  // `with` gets the replica's binder, events and (with dra_owner) claim writer.
  explicit LiveReplica(const std::string& url, extender::ServiceOptions service_options = {},
                       inventory::InventoryOptions inventory_options = {}, kubeapi::ApiBinderOptions binder_options = {},
                       bool dra_owner = false, extender::ServiceCollaborators with = {},
                       std::optional<kubeapi::ApiKueueWriterOptions> kueue = std::nullopt,
                       kubeapi::ApiClientOptions client_options = {}) {
    kubeapi::ApiConfig config;
    if (!kubeapi::ParseServerUrl(url, &config).ok()) std::abort();
    client = std::move(kubeapi::ApiClient::Create(config, client_options)).value();
    inventory = std::make_unique<inventory::Inventory>(inventory_options);
    sync = std::make_unique<kubeapi::ClusterSync>(
        client.get(), inventory.get(),
        kubeapi::ClusterSyncOptions{.reflector = {.backoff_initial = std::chrono::milliseconds(10),
                                               .backoff_max = std::chrono::milliseconds(100)}});
    binder = std::make_unique<kubeapi::ApiBinder>(client.get(), inventory.get(), binder_options);
    evictor = std::make_unique<kubeapi::ApiEvictor>(client.get());
    hold_publisher = std::make_unique<kubeapi::ApiHoldPublisher>(client.get(), inventory.get());
    nominator = std::make_unique<kubeapi::ApiPodNominator>(client.get());
    events = std::make_unique<kubeapi::EventRecorder>(client.get(), kubeapi::EventRecorderOptions{.host = "test-host"});
    if (dra_owner) {
      claim_writer = std::make_unique<kubeapi::ApiClaimWriter>(client.get());
      with.claim_writer = claim_writer.get();
    }
    if (kueue) {
      kueue_writer = std::make_unique<kubeapi::ApiKueueWriter>(client.get(), *kueue);
      with.kueue_writer = kueue_writer.get();
    }
    with.binder = binder.get();
    with.evictor = evictor.get();
    with.hold_publisher = hold_publisher.get();
    with.nominator = nominator.get();
    with.events = events.get();
    service = std::make_unique<extender::Service>(inventory.get(), service_options, std::move(with));
    sync->Start();
  }
  ~LiveReplica() { sync->Stop(); }

  std::unique_ptr<kubeapi::ApiClient> client;
  std::unique_ptr<inventory::Inventory> inventory;
  std::unique_ptr<kubeapi::ClusterSync> sync;
  std::unique_ptr<kubeapi::ApiBinder> binder;
  std::unique_ptr<kubeapi::ApiEvictor> evictor;
  std::unique_ptr<kubeapi::ApiHoldPublisher> hold_publisher;
  std::unique_ptr<kubeapi::ApiPodNominator> nominator;
  std::unique_ptr<kubeapi::ApiClaimWriter> claim_writer;
  std::unique_ptr<kubeapi::EventRecorder> events;
  std::unique_ptr<kubeapi::ApiKueueWriter> kueue_writer;  // with `kueue`: the admission check writes
  std::unique_ptr<extender::Service> service;
};

// The defrag plan (at most 8 moves) that makes room for the pod in `body`, applied by `service`,
// as POST /debug/defrag?apply=true answers it (defrag.h's JSON).
inline StatusOr<std::string> AppliedPlan(const extender::Service& service, std::string_view body,
                                         extender::UnjudgedPolicy unjudged = extender::UnjudgedPolicy::kRefuse) {
  StatusOr<extender::DefragResult> result = service.Defrag(body, 0, 8, {.apply = true, .unjudged = unjudged});
  if (!result.ok()) return result.status();
  return extender::DefragJson(*result);
}

}  // namespace gpusched::testing
