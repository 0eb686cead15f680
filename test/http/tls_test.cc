// HTTPS and mTLS on a real socket, with certificates made by the openssl command line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "cluster_json.h"
#include "test_server.h"
#include "tls_client.h"
#include "temp_dir.h"

namespace gpusched::testing {
namespace tls_test {

using ::testing::HasSubstr;

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = TestTempDir("tls");
    ok_ = MakeTestPki(dir_);
  }
  void SetUp() override { ASSERT_TRUE(ok_) << "openssl could not make the test certificates"; }

  static http::ServerOptions Tls(bool mtls) {
    http::ServerOptions o{.tls_cert_file = dir_ + "/server.crt", .tls_key_file = dir_ + "/server.key"};
    if (mtls) o.client_ca_file = dir_ + "/ca.crt";
    return o;
  }
  static std::string Path(const std::string& f) { return dir_ + "/" + f; }

  static std::string Cluster() { return ListJson({NvidiaNode("n1", 8).ToJson()}); }

  static inline std::string dir_;
  static inline bool ok_ = false;
};

TEST_F(TlsTest, ServesHttpsVerifiedAgainstItsCa) {
  TestServer server(Cluster(), {}, "", Tls(false));
  TlsReply r = TlsGet(server.port(), "/healthz", {.ca_file = Path("ca.crt")});
  ASSERT_TRUE(r.handshake_ok) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok\n");
  EXPECT_THAT(r.peer_subject, HasSubstr("CN=gpusched-test"));
}

TEST_F(TlsTest, MtlsRefusesClientsWithoutACertificate) {
  TestServer server(Cluster(), {}, "", Tls(true));
  TlsReply r = TlsGet(server.port(), "/healthz", {.ca_file = Path("ca.crt")});
  EXPECT_EQ(r.status, 0);
  EXPECT_FALSE(r.error.empty());
  // The refusal is counted.
  for (int i = 0; i < 100 && server.telemetry().http_refused.With({"tls_handshake"}).Value() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(server.telemetry().http_refused.With({"tls_handshake"}).Value(), 1u);
}

TEST_F(TlsTest, MtlsRefusesCertificatesOfAnotherCa) {
  TestServer server(Cluster(), {}, "", Tls(true));
  TlsReply r = TlsGet(server.port(), "/healthz",
                      {.ca_file = Path("ca.crt"), .cert_file = Path("rogue.crt"), .key_file = Path("rogue.key")});
  EXPECT_EQ(r.status, 0);
  EXPECT_FALSE(r.error.empty());
}

TEST_F(TlsTest, MtlsAcceptsAClientSignedByTheCa) {
  TestServer server(Cluster(), {}, "", Tls(true));
  TlsReply r = TlsGet(server.port(), "/healthz",
                      {.ca_file = Path("ca.crt"), .cert_file = Path("client.crt"), .key_file = Path("client.key")});
  ASSERT_TRUE(r.handshake_ok) << r.error;
  EXPECT_EQ(r.status, 200);
}

TEST_F(TlsTest, AlpnNeverAdvertisesH2) {
  TestServer server(Cluster(), {}, "", Tls(false));
  TlsReply both = TlsGet(server.port(), "/healthz", {.ca_file = Path("ca.crt"), .alpn = {"h2", "http/1.1"}});
  ASSERT_TRUE(both.handshake_ok) << both.error;
  EXPECT_EQ(both.alpn, "http/1.1");
  EXPECT_EQ(both.status, 200);
  TlsReply h2 = TlsGet(server.port(), "/healthz", {.ca_file = Path("ca.crt"), .alpn = {"h2"}});
  ASSERT_TRUE(h2.handshake_ok) << h2.error;
  EXPECT_EQ(h2.alpn, "");  // no protocol agreed: Go falls back to HTTP/1.1
  EXPECT_EQ(h2.status, 200);
}

TEST_F(TlsTest, ReloadsTheCertificateWhenTheFilesChange) {
  std::string dir = Path("reload");
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(MakeTestPki(dir, "first"));
  http::ServerOptions o{.tls_cert_file = dir + "/server.crt", .tls_key_file = dir + "/server.key",
                        .tls_reload_interval = std::chrono::seconds(1)};
  TestServer server(Cluster(), {}, "", o);
  EXPECT_THAT(TlsGet(server.port(), "/healthz", {}).peer_subject, HasSubstr("CN=first"));
  std::string next = Path("next");
  std::filesystem::create_directories(next);
  ASSERT_TRUE(MakeTestPki(next, "second"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // mtimes must differ
  std::filesystem::copy_file(next + "/server.key", dir + "/server.key", std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(next + "/server.crt", dir + "/server.crt", std::filesystem::copy_options::overwrite_existing);
  std::string subject;
  for (int i = 0; i < 60 && subject.find("CN=second") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    subject = TlsGet(server.port(), "/healthz", {}).peer_subject;
  }
  EXPECT_THAT(subject, HasSubstr("CN=second"));
}

TEST_F(TlsTest, BadFilesAreNamedAtStart) {
  inventory::Inventory inventory;
  extender::Service service(&inventory, {});
  std::atomic<bool> ready{true};
  http::Router router(&service, &inventory, &ready, "");
  http::ServerOptions o = Tls(false);
  o.port = 0;
  o.tls_key_file = Path("missing.key");
  http::Server server(o, &router);
  Status s = server.Start();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("--tls-key " + Path("missing.key")));
}

}  // namespace tls_test
}  // namespace gpusched::testing
