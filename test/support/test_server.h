// File: test_server.h
//
// A real gpusched server on 127.0.0.1, port 0, over an inventory loaded from List JSON: the same
// pieces `gpusched serve` wires together.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "gpusched/kubejson/dra_objects.h"
#include "gpusched/extender/service.h"
#include "gpusched/http/router.h"
#include "gpusched/http/server.h"
#include "gpusched/inventory/inventory.h"

namespace gpusched::testing {

class TestServer {
 public:
  // Loads `list_json` (a Kubernetes List) and starts serving. Aborts the test on failure.
  // `with` gets the server's telemetry.
  explicit TestServer(const std::string& list_json, extender::ServiceOptions options = {}, std::string prefix = "",
                      http::ServerOptions server_options = {}, extender::ServiceCollaborators with = {});
  ~TestServer();

  uint16_t port() const { return server_->port(); }
  inventory::Inventory& inventory() { return inventory_; }
  extender::Telemetry& telemetry() { return telemetry_; }
  http::Server& server() { return *server_; }
  // Replaces the cluster view, as a re-read snapshot file would.
  void Reload(const std::string& list_json);

 private:
  inventory::Inventory inventory_;
  extender::Telemetry telemetry_{&inventory_};
  std::atomic<bool> ready_{true};
  std::unique_ptr<extender::Service> service_;
  std::unique_ptr<http::Router> router_;
  std::unique_ptr<http::Server> server_;
};

}  // namespace gpusched::testing
