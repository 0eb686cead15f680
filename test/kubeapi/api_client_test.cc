// The API client against the in-process API server, over HTTP and HTTPS with a bearer token.
#include "gpusched/kubeapi/api_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "fake_apiserver.h"
#include "fake_clock.h"
#include "gpusched/common/token_bucket.h"
#include "tls_client.h"
#include "temp_dir.h"

namespace gpusched::kubeapi {
namespace api_client_test {

using testing::FakeApiServer;
using testing::FakeApiServerOptions;
using ::testing::HasSubstr;

ApiConfig PlainConfig(const FakeApiServer& server) {
  ApiConfig c;
  EXPECT_TRUE(ParseServerUrl(server.url(), &c).ok());
  return c;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class TlsApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = testing::TestTempDir("api-pki");
    ok_ = testing::MakeTestPki(dir_);
  }
  void SetUp() override { ASSERT_TRUE(ok_); }
  static std::string dir_;
  static bool ok_;
};
std::string TlsApi::dir_;
bool TlsApi::ok_ = false;

TEST_F(TlsApi, VerifiesTheServerAndSendsTheBearerToken) {
  FakeApiServer server(FakeApiServerOptions{.cert_file = dir_ + "/server.crt", .key_file = dir_ + "/server.key", .token = "s3cret"});
  server.Put("nodes", R"({"metadata":{"name":"n1"}})");
  ApiConfig c = PlainConfig(server);
  c.ca_pem = ReadAll(dir_ + "/ca.crt");
  c.token = "s3cret";
  auto client = ApiClient::Create(c);
  ASSERT_TRUE(client.ok()) << client.status().message();
  StatusOr<ApiResponse> r = (*client)->Send("GET", "/api/v1/nodes/n1");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_THAT(r->body, HasSubstr(R"("name":"n1")"));
  EXPECT_EQ(server.Requests().back().authorization, "Bearer s3cret");

  // A server whose certificate another CA signed is refused.
  ApiConfig rogue = c;
  rogue.ca_pem = ReadAll(dir_ + "/other-ca.crt");
  auto untrusting = ApiClient::Create(rogue);
  ASSERT_TRUE(untrusting.ok());
  StatusOr<ApiResponse> refused = (*untrusting)->Send("GET", "/api/v1/nodes/n1");
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(refused.status().message(), HasSubstr("TLS handshake"));
}

TEST_F(TlsApi, RereadsTheTokenFileAfterA401) {
  FakeApiServer server(FakeApiServerOptions{.cert_file = dir_ + "/server.crt", .key_file = dir_ + "/server.key", .token = "new"});
  std::string token_file = dir_ + "/token";
  std::ofstream(token_file) << "old\n";
  ApiConfig c = PlainConfig(server);
  c.ca_pem = ReadAll(dir_ + "/ca.crt");
  c.token_file = token_file;
  auto client = ApiClient::Create(c);
  ASSERT_TRUE(client.ok());
  EXPECT_EQ((*client)->Send("GET", "/api/v1/nodes")->status, 401);
  std::ofstream(token_file) << "new\n";  // the kubelet rotated the token
  EXPECT_EQ((*client)->Send("GET", "/api/v1/nodes")->status, 200);
}

TEST(ApiClient, ReusesConnectionsAndRetriesOneTheServerClosed) {
  FakeApiServer server;
  auto client = ApiClient::Create(PlainConfig(server));
  ASSERT_TRUE(client.ok());
  for (int i = 0; i < 5; ++i) EXPECT_EQ((*client)->Send("GET", "/api/v1/nodes")->status, 200);
  server.DropWatches();  // no effect on plain requests
  StatusOr<ApiResponse> missing = (*client)->Send("GET", "/api/v1/nodes/none");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
  EXPECT_THAT(missing->body, HasSubstr(R"("reason":"NotFound")"));
}

TEST(ApiClient, APatchThatMayHaveArrivedIsNeverSentTwice) {
  FakeApiServer server;
  server.Put("nodes", R"({"metadata":{"name":"n1"}})");
  auto client = ApiClient::Create(PlainConfig(server));
  ASSERT_TRUE(client.ok());
  ASSERT_EQ((*client)->Send("GET", "/api/v1/nodes")->status, 200);  // a kept-alive connection
  server.Inject({.method = "PATCH", .path_prefix = "/api/v1/nodes/n1", .status = 0, .apply_first = true});
  StatusOr<ApiResponse> r =
      (*client)->Send("PATCH", "/api/v1/nodes/n1", R"({"metadata":{"labels":{"x":"1"}}})", "application/merge-patch+json");
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  int patches = 0;
  for (const auto& req : server.Requests()) patches += req.method == "PATCH";
  EXPECT_EQ(patches, 1);
  EXPECT_THAT(*server.Get("nodes", "", "n1"), HasSubstr(R"("x":"1")"));  // it did arrive
}

TEST(ApiClient, AGetOnADeadConnectionIsSentAgainOnAFreshOne) {
  FakeApiServer server;
  auto client = ApiClient::Create(PlainConfig(server));
  ASSERT_TRUE(client.ok());
  ASSERT_EQ((*client)->Send("GET", "/api/v1/nodes")->status, 200);
  server.Inject({.method = "GET", .path_prefix = "/api/v1/nodes", .status = 0});
  StatusOr<ApiResponse> r = (*client)->Send("GET", "/api/v1/nodes");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(server.Requests().size(), 3u);
}

TEST(ApiClient, IdleConnectionsTheServerClosedAreNotReused) {
  FakeApiServer server;
  server.Put("nodes", R"({"metadata":{"name":"n1"}})");
  auto client = ApiClient::Create(PlainConfig(server));
  ASSERT_TRUE(client.ok());
  ASSERT_EQ((*client)->Send("GET", "/api/v1/nodes")->status, 200);
  server.CloseIdleConnections();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the FIN arrive
  StatusOr<ApiResponse> r =
      (*client)->Send("PATCH", "/api/v1/nodes/n1", R"({"metadata":{"labels":{"x":"2"}}})", "application/merge-patch+json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
}

TEST(ApiClient, AnUnreachableServerIsUnavailable) {
  ApiConfig c;
  ASSERT_TRUE(ParseServerUrl("http://127.0.0.1:1", &c).ok());
  auto client = ApiClient::Create(c, ApiClientOptions{.request_timeout = std::chrono::milliseconds(2000)});
  ASSERT_TRUE(client.ok());
  StatusOr<ApiResponse> r = (*client)->Send("GET", "/api/v1/nodes");
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr("connect http://127.0.0.1:1"));
}

TEST(ApiClient, StreamsAWatchInPiecesAndStopsOnCancel) {
  FakeApiServer server(FakeApiServerOptions{.watch_piece_max = 5});
  server.Put("nodes", R"({"metadata":{"name":"n1"}})");
  auto client = ApiClient::Create(PlainConfig(server));
  ASSERT_TRUE(client.ok());
  StreamCancel cancel;
  std::string received;
  size_t pieces = 0;
  std::thread canceller([&] {
    while (received.find("\"n2\"") == std::string::npos) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    cancel.Cancel();
  });
  std::thread writer([&] {
    while (server.open_watches() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    server.Put("nodes", R"({"metadata":{"name":"n2"}})");
  });
  StatusOr<ApiResponse> r = (*client)->Stream(
      "/api/v1/nodes?watch=1&resourceVersion=0", std::chrono::seconds(30),
      [&](std::string_view data) {
        received.append(data);
        ++pieces;
        return true;
      },
      &cancel);
  writer.join();
  canceller.join();
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  EXPECT_THAT(received, HasSubstr(R"({"type":"ADDED","object":{"metadata":{"name":"n1")"));
  EXPECT_GT(pieces, 10u);  // cut into pieces of at most 5 bytes
}

TEST(ApiClient, AStreamThatGoesSilentTimesOut) {
  FakeApiServer server;
  auto client = ApiClient::Create(PlainConfig(server));
  ASSERT_TRUE(client.ok());
  StatusOr<ApiResponse> r = (*client)->Stream("/api/v1/nodes?watch=1&resourceVersion=101", std::chrono::seconds(1),
                                              [](std::string_view) { return true; }, nullptr);
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
}

TEST(ApiClient, ANon200StreamReturnsTheStatusBody) {
  FakeApiServer server;
  server.CompactHistory();
  server.Put("nodes", R"({"metadata":{"name":"n1"}})");
  server.CompactHistory();
  auto client = ApiClient::Create(PlainConfig(server));
  ASSERT_TRUE(client.ok());
  StatusOr<ApiResponse> r = (*client)->Stream("/api/v1/nodes?watch=1&resourceVersion=5", std::chrono::seconds(5),
                                              [](std::string_view) { return true; }, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 410);
  EXPECT_THAT(r->body, HasSubstr("too old resource version"));
}

TEST(TokenBucket, AllowsTheBurstThenTheRate) {
  testing::FakeClock clock;
  TokenBucket bucket(10, 3, &clock);
  EXPECT_TRUE(bucket.TryTake());
  EXPECT_TRUE(bucket.TryTake());
  EXPECT_TRUE(bucket.TryTake());
  EXPECT_FALSE(bucket.TryTake());
  clock.Advance(std::chrono::milliseconds(100));
  EXPECT_TRUE(bucket.TryTake());
  EXPECT_FALSE(bucket.TryTake());
  EXPECT_EQ(bucket.Reserve(), std::chrono::milliseconds(100));
  clock.Advance(std::chrono::seconds(10));
  EXPECT_EQ(bucket.Reserve(), std::chrono::nanoseconds(0));
}

}  // namespace api_client_test
}  // namespace gpusched::kubeapi
