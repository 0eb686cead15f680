// The main job as users run it: the gpusched binary, started as a child process.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "cluster_json.h"
#include "http_client.h"
#include "serve_process.h"
#include "temp_dir.h"

namespace gpusched::testing {
namespace serve_test {

using ::testing::HasSubstr;

std::string TempFile(const std::string& name, const std::string& content) {
  std::filesystem::path dir = TestTempDir("serve-test");
  std::filesystem::path path = dir / name;
  std::ofstream(path) << content;
  return path.string();
}

TEST(ServeCommand, ServesTheDemoClusterAndStopsOnSigterm) {
  ServeProcess p({"serve", "--listen", "127.0.0.1:0"});
  uint16_t port = p.WaitForPort();
  ASSERT_NE(port, 0) << p.Stderr();
  HttpClient client(port);
  EXPECT_EQ(client.Get("/readyz").status, 200);
  HttpReply inv = client.Get("/debug/inventory");
  EXPECT_THAT(inv.body, HasSubstr("\"name\": \"gpu-switch-01\""));
  EXPECT_THAT(inv.body, HasSubstr("\"state\": \"switching\""));
  EXPECT_THAT(inv.body, HasSubstr("\"state\": \"invalid\""));
  p.Signal(SIGTERM);
  EXPECT_EQ(p.WaitExit(), 0);
  EXPECT_THAT(p.Stderr(), HasSubstr("stopping"));
}

TEST(ServeCommand, SigtermLetsRequestsInFlightFinish) {
  ServeProcess p({"serve", "--listen", "127.0.0.1:0"});
  uint16_t port = p.WaitForPort();
  ASSERT_NE(port, 0) << p.Stderr();
  std::string body = ArgsWithNames(PodJson{.name = "w", .uid = "uid-w", .containers = {WholeGpus("c", 1)}}.ToJson(),
                                   {"gpu-a100-01", "gpu-a100-02"});
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  std::string head = fmt::format("POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n", body.size());
  std::string first = head + body.substr(0, body.size() / 2);
  ASSERT_EQ(::send(fd, first.data(), first.size(), MSG_NOSIGNAL), static_cast<ssize_t>(first.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the request is in flight
  p.Signal(SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // New connections are no longer accepted...
  HttpClient late(port);
  EXPECT_NE(late.Get("/healthz").status, 200);
  // ... but the request in flight completes.
  std::string rest = body.substr(body.size() / 2);
  ASSERT_EQ(::send(fd, rest.data(), rest.size(), MSG_NOSIGNAL), static_cast<ssize_t>(rest.size()));
  std::string reply;
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) reply.append(buf, static_cast<size_t>(n));
  ::close(fd);
  EXPECT_THAT(reply, HasSubstr("HTTP/1.1 200 OK"));
  EXPECT_THAT(reply, HasSubstr(R"("NodeNames":["gpu-a100-01","gpu-a100-02"])"));
  EXPECT_THAT(reply, HasSubstr("Connection: close"));
  EXPECT_EQ(p.WaitExit(), 0);
  EXPECT_THAT(p.Stderr(), HasSubstr("stopped"));
}

TEST(ServeCommand, RereadsTheSnapshotOnSighup) {
  std::string pod = PodJson{.name = "old", .uid = "uid-old", .node = "n1", .phase = "Running",
                            .containers = {WholeGpus("c", 2)}}.ToJson();
  std::string file = TempFile("cluster.json", ListJson({NvidiaNode("n1", 8, "nvidia").ToJson(), pod}));
  ServeProcess p({"serve", "--listen", "127.0.0.1:0", "--snapshot", file, "--path-prefix", "/gpu"});
  uint16_t port = p.WaitForPort();
  ASSERT_NE(port, 0) << p.Stderr();
  HttpClient client(port);
  std::string body = ArgsWithNames(PodJson{.name = "m", .uid = "uid-m", .containers = {Mgpu("c", 10, 1024)}}.ToJson(), {"n1"});
  EXPECT_THAT(client.Post("/gpu/filter", body).body, HasSubstr("node mode nvidia; pod requests vke.volcengine.com/mgpu-core"));
  // The node is relabelled to mgpu while the whole-GPU pod still runs.
  std::ofstream(file) << ListJson({MgpuNode("n1", 8, 24000).ToJson(), pod});
  p.Signal(SIGHUP);
  std::string reply;
  for (int i = 0; i < 200 && reply.find("switching") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    reply = client.Post("/gpu/filter", body).body;
  }
  EXPECT_THAT(reply, HasSubstr("node is switching from nvidia to mgpu: 1 GPU pod of the old mode still runs (default/old)"));
  EXPECT_THAT(p.Stderr(), HasSubstr("snapshots reloaded"));
  p.Signal(SIGINT);
  EXPECT_EQ(p.WaitExit(), 0);
}

TEST(ServeCommand, BadInputExitsWithAMessage) {
  ServeProcess flag({"serve", "--lisen", "x"});
  EXPECT_EQ(flag.WaitExit(), 2);
  EXPECT_THAT(flag.Stderr(), HasSubstr("unknown flag --lisen"));
  ServeProcess policy({"serve", "--node-policy", "tetris"});
  EXPECT_EQ(policy.WaitExit(), 2);
  EXPECT_THAT(policy.Stderr(), HasSubstr("--node-policy: \"tetris\" (want one of random, dotprod"));
  std::string bad = TempFile("bad.json", R"({"kind":"List","items":{}})");
  ServeProcess snapshot({"serve", "--listen", "127.0.0.1:0", "--snapshot", bad});
  EXPECT_EQ(snapshot.WaitExit(), 1);
  EXPECT_THAT(snapshot.Stderr(), HasSubstr("snapshot " + bad + ": items: want array, got object"));
  ServeProcess missing({"serve", "--snapshot", "/nonexistent.json"});
  EXPECT_EQ(missing.WaitExit(), 1);
  EXPECT_THAT(missing.Stderr(), HasSubstr("snapshot /nonexistent.json: cannot open"));
}

// Issue "Real cluster input" §5: a pod the API server accepts (5e9 GPUs) or a 1.30 pod claim
// made serve exit at start; now each is isolated, listed and counted, and the rest is served.
TEST(ServeCommand, OneUnreadableObjectNeverStopsTheOthers) {
  std::string huge = PodJson{.name = "huge", .uid = "uid-huge", .node = "n1", .phase = "Running",
                             .containers = {WholeGpus("c", 5000000000)}}.ToJson();
  std::string old_claim = R"({"kind":"Pod","metadata":{"name":"old-claim","namespace":"ml","uid":"uid-oc"},)"
                          R"("spec":{"nodeName":"n2","containers":[{"name":"c"}],"resourceClaims":[)"
                          R"({"name":"gpu","source":{"resourceClaimName":"c1"}}]},"status":{"phase":"Running"}})";
  std::string file = TempFile("unreadable.json", ListJson({NvidiaNode("n1", 8, "nvidia").ToJson(),
                                                           NvidiaNode("n2", 8, "nvidia").ToJson(),
                                                           NvidiaNode("n3", 8, "nvidia").ToJson(), huge, old_claim}));
  ServeProcess p({"serve", "--listen", "127.0.0.1:0", "--snapshot", file});
  uint16_t port = p.WaitForPort();
  ASSERT_NE(port, 0) << p.Stderr();
  HttpClient client(port);
  EXPECT_EQ(client.Get("/readyz").status, 200);
  std::string inv = client.Get("/debug/inventory").body;
  EXPECT_THAT(inv, HasSubstr("pod default/huge (uid-huge): items[3] (Pod).spec.containers[0].resources"));
  EXPECT_THAT(inv, HasSubstr("is 5000000000 GPUs, above the largest quantity gpusched accepts"));
  EXPECT_THAT(inv, HasSubstr("pod ml/old-claim (uid-oc): items[4] (Pod).spec.resourceClaims[0].source"));
  EXPECT_THAT(client.Get("/metrics").body, HasSubstr("gpusched_unreadable_objects 2"));
  // The nodes holding them are inconsistent and say which pod; the third node serves.
  std::string body = ArgsWithNames(PodJson{.name = "w", .uid = "uid-w", .containers = {WholeGpus("c", 1)}}.ToJson(),
                                   {"n1", "n2", "n3"});
  std::string reply = client.Post("/filter", body).body;
  EXPECT_THAT(reply, HasSubstr("pod default/huge is bound with an invalid GPU request"));
  EXPECT_THAT(reply, HasSubstr(R"("NodeNames":["n3"])"));
  p.Signal(SIGTERM);
  EXPECT_EQ(p.WaitExit(), 0);
  EXPECT_THAT(p.Stderr(), HasSubstr("pod default/huge cannot be read"));
}

TEST(ServeCommand, AFailedReloadMakesReadyzFailUntilAGoodOne) {
  std::string good = ListJson({NvidiaNode("n1", 8, "nvidia").ToJson()});
  std::string file = TempFile("reload.json", good);
  ServeProcess p({"serve", "--listen", "127.0.0.1:0", "--snapshot", file});
  uint16_t port = p.WaitForPort();
  ASSERT_NE(port, 0) << p.Stderr();
  HttpClient client(port);
  EXPECT_EQ(client.Get("/readyz").status, 200);
  auto readyz_becomes = [&](int status) {
    for (int i = 0; i < 200 && client.Get("/readyz").status != status; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return client.Get("/readyz").status;
  };
  std::ofstream(file) << "{\"kind\":\"List\",\"items\":[";
  p.Signal(SIGHUP);
  EXPECT_EQ(readyz_becomes(503), 503);
  EXPECT_THAT(p.Stderr(), HasSubstr("snapshot reload failed, keeping the previous view; not ready"));
  std::ofstream(file) << good;
  p.Signal(SIGHUP);
  EXPECT_EQ(readyz_becomes(200), 200);
  p.Signal(SIGTERM);
  EXPECT_EQ(p.WaitExit(), 0);
}

TEST(ServeCommand, ReadsTheConfigFile) {
  std::string config = TempFile("gpusched.yaml", "listen: 127.0.0.1:0\npathPrefix: /x\nscoring: {filterTopK: 1}\n");
  ServeProcess p({"serve", "--config", config});
  uint16_t port = p.WaitForPort();
  ASSERT_NE(port, 0) << p.Stderr();
  EXPECT_THAT(p.Stderr(), HasSubstr("filter top-K 1"));
  HttpClient client(port);
  EXPECT_EQ(client.Post("/x/bind", "{}").status, 200);
  EXPECT_EQ(client.Post("/bind", "{}").status, 404);
  ServeProcess bad({"serve", "--config", TempFile("bad.yaml", "placement: {gpuPolicy: best}\n")});
  EXPECT_EQ(bad.WaitExit(), 2);
  EXPECT_THAT(bad.Stderr(), HasSubstr("placement.gpuPolicy: \"best\" (want binpack or spread)"));
}

}  // namespace serve_test
}  // namespace gpusched::testing
