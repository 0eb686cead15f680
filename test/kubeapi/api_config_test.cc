#include "gpusched/kubeapi/api_config.h"
#include "temp_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace gpusched::kubeapi {
namespace api_config_test {

using ::testing::HasSubstr;

std::string TempDir(const std::string& name) {
  return testing::TestTempDir(name);
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(ServerUrl, SplitsHostPortAndScheme) {
  ApiConfig c;
  ASSERT_TRUE(ParseServerUrl("https://10.0.0.1:6443", &c).ok());
  EXPECT_EQ(c.host, "10.0.0.1");
  EXPECT_EQ(c.port, "6443");
  EXPECT_TRUE(c.tls);
  ASSERT_TRUE(ParseServerUrl("https://[fd00::1]:6443/", &c).ok());
  EXPECT_EQ(c.host, "fd00::1");
  EXPECT_EQ(c.Url(), "https://[fd00::1]:6443");
  ASSERT_TRUE(ParseServerUrl("http://api.example.com", &c).ok());
  EXPECT_EQ(c.port, "80");
  EXPECT_FALSE(c.tls);
  EXPECT_THAT(ParseServerUrl("ftp://x", &c).message(), HasSubstr("want https://host[:port]"));
  EXPECT_THAT(ParseServerUrl("https://x:99999", &c).message(), HasSubstr("bad port"));
  EXPECT_THAT(ParseServerUrl("https://x/k8s/clusters/c-1", &c).message(), HasSubstr("a path after the host"));
}

TEST(Base64, DecodesWithPaddingAndLineBreaksAndRejectsJunk) {
  EXPECT_EQ(*DecodeBase64("aGVsbG8="), "hello");
  EXPECT_EQ(*DecodeBase64("aGVs\nbG8h"), "hello!");
  EXPECT_EQ(*DecodeBase64(""), "");
  EXPECT_THAT(DecodeBase64("aGV$").status().message(), HasSubstr("unexpected '$'"));
  EXPECT_THAT(DecodeBase64("a").status().message(), HasSubstr("truncated"));
}

TEST(InCluster, ReadsTheServiceAccountAndEnvironment) {
  std::string dir = TempDir("sa");
  Write(dir + "/ca.crt", "-----BEGIN CERTIFICATE-----\n...\n");
  Write(dir + "/token", "tok\n");
  Write(dir + "/namespace", "kube-system\n");
  std::map<std::string, std::string> env = {{"KUBERNETES_SERVICE_HOST", "fd00::1"}, {"KUBERNETES_SERVICE_PORT", "443"}};
  auto getenv = [&](const char* name) -> std::optional<std::string> {
    auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  StatusOr<ApiConfig> c = InClusterConfig(getenv, dir);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->Url(), "https://[fd00::1]:443");
  EXPECT_EQ(c->token_file, dir + "/token");
  EXPECT_EQ(c->namespace_name, "kube-system");
  EXPECT_THAT(c->ca_pem, HasSubstr("BEGIN CERTIFICATE"));

  env.erase("KUBERNETES_SERVICE_PORT");
  EXPECT_EQ(InClusterConfig(getenv, dir).status().code(), StatusCode::kFailedPrecondition);
  env["KUBERNETES_SERVICE_PORT"] = "443";
  std::filesystem::remove(dir + "/token");
  EXPECT_THAT(InClusterConfig(getenv, dir).status().message(), HasSubstr("in-cluster token: cannot read"));
}

TEST(Kubeconfig, ReadsTheCurrentContextWithInlineAndFileCredentials) {
  std::string dir = TempDir("kc");
  Write(dir + "/client.key", "KEY");
  std::string yaml = R"(
apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod-cluster
  cluster:
    server: https://api.prod:6443
    certificate-authority-data: Q0FQRU0=
    tls-server-name: kubernetes.default
- name: dev-cluster
  cluster: {server: "http://127.0.0.1:8080"}
users:
- name: admin
  user:
    client-certificate-data: Q0VSVA==
    client-key: client.key
- name: robot
  user: {token: abc}
contexts:
- name: prod
  context: {cluster: prod-cluster, user: admin, namespace: gpu}
- name: dev
  context: {cluster: dev-cluster, user: robot}
)";
  StatusOr<ApiConfig> prod = ParseKubeconfig(yaml, dir);
  ASSERT_TRUE(prod.ok()) << prod.status().message();
  EXPECT_EQ(prod->Url(), "https://api.prod:6443");
  EXPECT_EQ(prod->ca_pem, "CAPEM");
  EXPECT_EQ(prod->server_name, "kubernetes.default");
  EXPECT_EQ(prod->client_cert_pem, "CERT");
  EXPECT_EQ(prod->client_key_pem, "KEY");
  EXPECT_EQ(prod->namespace_name, "gpu");
  StatusOr<ApiConfig> dev = ParseKubeconfig(yaml, dir, "dev");
  ASSERT_TRUE(dev.ok());
  EXPECT_EQ(dev->Url(), "http://127.0.0.1:8080");
  EXPECT_EQ(dev->token, "abc");
}

TEST(Kubeconfig, NamesWhatIsMissingOrUnsupported) {
  EXPECT_THAT(ParseKubeconfig("contexts: []\n", ".").status().message(), HasSubstr("current-context: missing"));
  EXPECT_THAT(ParseKubeconfig("current-context: x\ncontexts: []\n", ".").status().message(),
              HasSubstr("contexts: no entry named \"x\""));
  std::string exec = R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://a"}}]
users: [{name: u, user: {exec: {command: aws}}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)";
  EXPECT_THAT(ParseKubeconfig(exec, ".").status().message(), HasSubstr("users[u].exec: not supported"));
  EXPECT_THAT(LoadKubeconfig("/nonexistent/kubeconfig").status().message(), HasSubstr("cannot read /nonexistent"));
  EXPECT_THAT(ParseKubeconfig("{[", ".").status().message(), HasSubstr("kubeconfig:"));
}

}  // namespace api_config_test
}  // namespace gpusched::kubeapi
