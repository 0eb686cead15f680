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

namespace gpusched::testing {
namespace {

using ::testing::HasSubstr;

std::string TempFile(const std::string& name, const std::string& content) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("gpusched-serve-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
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
  std::string bad = TempFile("bad.json", R"({"kind":"List","items":[{"kind":"Pod","spec":{"containers":"x"}}]})");
  ServeProcess snapshot({"serve", "--listen", "127.0.0.1:0", "--snapshot", bad});
  EXPECT_EQ(snapshot.WaitExit(), 1);
  EXPECT_THAT(snapshot.Stderr(), HasSubstr("snapshot " + bad + ": items[0] (Pod).spec.containers: want array, got string"));
  ServeProcess missing({"serve", "--snapshot", "/nonexistent.json"});
  EXPECT_EQ(missing.WaitExit(), 1);
  EXPECT_THAT(missing.Stderr(), HasSubstr("snapshot /nonexistent.json: cannot open"));
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

}  // namespace
}  // namespace gpusched::testing
