#include "test_server.h"

#include <gtest/gtest.h>

#include "gpusched/kubejson/objects.h"

namespace gpusched::testing {

TestServer::TestServer(const std::string& list_json, extender::ServiceOptions options, std::string prefix,
                       http::ServerOptions server_options, extender::ServiceCollaborators with)
    : inventory_(inventory::InventoryOptions{.scheduler_name = options.scheduler_name}) {  // as serve sets it
  Reload(list_json);
  with.telemetry = &telemetry_;
  service_ = std::make_unique<extender::Service>(&inventory_, options, std::move(with));
  router_ = std::make_unique<http::Router>(service_.get(), &inventory_, &ready_, std::move(prefix), &telemetry_);
  server_options.host = "127.0.0.1";
  server_options.port = 0;
  server_ = std::make_unique<http::Server>(server_options, router_.get());
  Status s = server_->Start();
  if (!s.ok()) ADD_FAILURE() << s.ToString();
}

TestServer::~TestServer() { server_->Stop(); }

void TestServer::Reload(const std::string& list_json) {
  ClusterObjects objects;
  Status s = kubejson::AppendClusterJson(list_json, &objects);
  if (!s.ok()) ADD_FAILURE() << "cluster JSON: " << s.ToString();
  inventory_.ReplaceCluster(std::move(objects));
}

}  // namespace gpusched::testing
