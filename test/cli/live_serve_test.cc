// `gpusched serve --kubeconfig` against the in-process API server: readiness, and a kill -9 in
// the middle of a burst of binds followed by a restart.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "cluster_json.h"
#include "fake_apiserver.h"
#include "http_client.h"
#include "live_replica.h"
#include "serve_process.h"
#include "temp_dir.h"

namespace gpusched::testing {
namespace live_serve_test {

using ::testing::HasSubstr;

std::string TempFile(const std::string& name, const std::string& content) {
  std::filesystem::path dir = TestTempDir("live-test");
  std::filesystem::path path = dir / name;
  std::ofstream(path) << content;
  return path.string();
}

std::string Kubeconfig(const FakeApiServer& api) {
  return TempFile("kubeconfig", fmt::format(R"(apiVersion: v1
kind: Config
current-context: test
clusters: [{{name: fake, cluster: {{server: "{}"}}}}]
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: test, context: {{cluster: fake, user: u}}}}]
)",
                                            api.url()));
}

std::string PendingPod(int i) {
  return PodJson{.name = fmt::format("job-{}", i), .namespace_name = "ml", .uid = fmt::format("u-{}", i),
                 .resource_version = "1", .containers = {WholeGpus("c", 1 + i % 3)}}
      .ToJson();
}

// pod UID -> node, from the API server's pods (what is truly bound).
std::map<std::string, std::string> BoundInApi(const FakeApiServer& api) {
  std::map<std::string, std::string> out;
  for (const std::string& json : api.Objects("pods")) {
    rapidjson::Document d;
    d.Parse(json.c_str());
    if (d["spec"].HasMember("nodeName")) out[d["metadata"]["uid"].GetString()] = d["spec"]["nodeName"].GetString();
  }
  return out;
}

// pod UID -> node, from gpusched's /debug/inventory (its ledger), with each allocation's origin.
std::map<std::string, std::string> Ledger(uint16_t port, std::map<std::string, std::string>* origins = nullptr) {
  HttpClient client(port);
  HttpReply r = client.Get("/debug/inventory");
  std::map<std::string, std::string> out;
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  if (!d.IsObject() || !d.HasMember("nodes")) return out;
  for (const auto& node : d["nodes"].GetArray()) {
    if (!node.HasMember("allocations")) continue;
    for (const auto& a : node["allocations"].GetArray()) {
      out[a["uid"].GetString()] = node["name"].GetString();
      if (origins != nullptr) (*origins)[a["uid"].GetString()] = a["origin"].GetString();
    }
  }
  return out;
}

TEST(LiveServe, ReadyOnlyAfterTheFirstSync) {
  FakeApiServer api;
  api.Put("nodes", NvidiaNode("w1", 8).ToJson());
  api.SetDelay("/api/v1/pods", std::chrono::milliseconds(1500));
  ServeProcess serve({"serve", "--kubeconfig", Kubeconfig(api), "--listen", "127.0.0.1:0"});
  uint16_t port = serve.WaitForPort();
  ASSERT_NE(port, 0) << serve.Stderr();
  HttpClient client(port);
  EXPECT_EQ(client.Get("/readyz").status, 503);
  EXPECT_EQ(client.Get("/healthz").status, 200);
  ASSERT_TRUE(Eventually([&] { return client.Get("/readyz").status == 200; })) << serve.Stderr();
  EXPECT_THAT(client.Get("/debug/inventory?node=w1").body, HasSubstr(R"("name": "w1")"));
  EXPECT_THAT(serve.Stderr(), HasSubstr("cluster synced: 1 nodes"));
}

TEST(LiveServe, AKillDuringABurstOfBindsLosesNothingAndCountsNothingTwice) {
  FakeApiServer api;
  constexpr int kNodes = 4;
  constexpr int kPods = 48;  // 96 GPUs asked of 32: many binds must be refused
  for (int n = 0; n < kNodes; ++n) api.Put("nodes", NvidiaNode(fmt::format("w{}", n), 8).ToJson());
  for (int i = 0; i < kPods; ++i) api.Put("pods", PendingPod(i));
  api.SetDelay("/api/v1/namespaces/ml/pods", std::chrono::milliseconds(5));  // binds take a while
  std::string config = TempFile("gpusched.yaml", "inventory: {bookingTtlSeconds: 3}\n");
  std::vector<std::string> args = {"serve", "--kubeconfig", Kubeconfig(api), "--listen", "127.0.0.1:0", "--config", config,
                                   "--threads", "8"};
  std::vector<std::string> names;
  for (int n = 0; n < kNodes; ++n) names.push_back(fmt::format("w{}", n));

  auto serve = std::make_unique<ServeProcess>(args);
  uint16_t port = serve->WaitForPort();
  ASSERT_NE(port, 0) << serve->Stderr();
  ASSERT_TRUE(Eventually([&] { return HttpClient(port).Get("/readyz").status == 200; }));

  // Eight schedulers' worth of binds at once; the server is killed while they run.
  std::atomic<int> next{0};
  std::atomic<int> answered{0};
  std::vector<std::thread> binders;
  for (int t = 0; t < 8; ++t) {
    binders.emplace_back([&, t] {
      HttpClient client(port);
      for (int i = next++; i < kPods; i = next++) {
        std::string pod = PendingPod(i);
        HttpReply f = client.Post("/filter", ArgsWithNames(pod, names));
        if (f.status != 200) return;  // killed
        rapidjson::Document d;
        d.Parse(f.body.c_str());
        if (!d.HasMember("NodeNames") || !d["NodeNames"].IsArray() || d["NodeNames"].Empty()) continue;
        std::string node = d["NodeNames"][t % d["NodeNames"].Size()].GetString();
        if (client.Post("/bind", BindJson(fmt::format("job-{}", i), "ml", fmt::format("u-{}", i), node)).status != 200) return;
        ++answered;
      }
    });
  }
  ASSERT_TRUE(Eventually([&] { return answered.load() >= 12; }));
  serve->Signal(SIGKILL);
  for (std::thread& t : binders) t.join();
  serve.reset();

  // Nothing the API server holds is over-booked, whatever the kill interrupted.
  std::map<std::string, std::string> bound = BoundInApi(api);
  ASSERT_FALSE(bound.empty());
  std::map<std::string, int> used;
  for (const auto& [uid, node] : bound) used[node] += 1 + std::stoi(uid.substr(2)) % 3;
  for (const auto& [node, gpus] : used) EXPECT_LE(gpus, 8) << node;
  int left = 0;
  for (const std::string& node : api.Objects("nodes")) {
    for (size_t at = node.find("\\\"pod\\\""); at != std::string::npos; at = node.find("\\\"pod\\\"", at + 1)) ++left;
  }
  std::fprintf(stderr, "killed after %d answered binds; %zu pods bound; %d bookings on nodes\n", answered.load(), bound.size(), left);

  // Restarted, the ledger equals what the API server holds: every bound pod once, on its node.
  serve = std::make_unique<ServeProcess>(args);
  port = serve->WaitForPort();
  ASSERT_NE(port, 0) << serve->Stderr();
  ASSERT_TRUE(Eventually([&] { return HttpClient(port).Get("/readyz").status == 200; }));
  std::map<std::string, std::string> origins;
  // Bookings of binds the kill cut short count until their TTL (3 s), then only bound pods do.
  ASSERT_TRUE(Eventually([&] { return Ledger(port) == BoundInApi(api); }))
      << "ledger " << Ledger(port).size() << " bound " << BoundInApi(api).size();
  Ledger(port, &origins);
  for (const auto& [uid, origin] : origins) EXPECT_EQ(origin, "observed") << uid;

  // And it goes on binding the rest correctly.
  HttpClient client(port);
  for (int i = 0; i < kPods; ++i) {
    if (bound.contains(fmt::format("u-{}", i))) continue;
    HttpReply f = client.Post("/filter", ArgsWithNames(PendingPod(i), names));
    rapidjson::Document d;
    d.Parse(f.body.c_str());
    if (d["NodeNames"].Empty()) continue;
    client.Post("/bind", BindJson(fmt::format("job-{}", i), "ml", fmt::format("u-{}", i), d["NodeNames"][0].GetString()));
  }
  used.clear();
  for (const auto& [uid, node] : BoundInApi(api)) used[node] += 1 + std::stoi(uid.substr(2)) % 3;
  int total = 0;
  for (const auto& [node, gpus] : used) {
    EXPECT_LE(gpus, 8) << node;
    total += gpus;
  }
  EXPECT_GE(total, 30);  // 32 GPUs; sizes 1-3 leave at most a little unplaceable
  ASSERT_TRUE(Eventually([&] { return Ledger(port) == BoundInApi(api); }));
}

TEST(LiveServe, TwoServersOnOneApiServerStayInSyncAndNeverShareAGpu) {
  FakeApiServer api;
  api.Put("nodes", NvidiaNode("w0", 4).ToJson());
  api.Put("nodes", NvidiaNode("w1", 4).ToJson());
  constexpr int kPods = 24;  // 1-3 GPUs each, for 8 GPUs
  for (int i = 0; i < kPods; ++i) api.Put("pods", PendingPod(i));
  std::string kubeconfig = Kubeconfig(api);
  ServeProcess a({"serve", "--kubeconfig", kubeconfig, "--listen", "127.0.0.1:0", "--threads", "4"});
  ServeProcess b({"serve", "--kubeconfig", kubeconfig, "--listen", "127.0.0.1:0", "--threads", "4"});
  uint16_t pa = a.WaitForPort();
  uint16_t pb = b.WaitForPort();
  ASSERT_NE(pa, 0) << a.Stderr();
  ASSERT_NE(pb, 0) << b.Stderr();
  ASSERT_TRUE(Eventually([&] { return HttpClient(pa).Get("/readyz").status == 200 && HttpClient(pb).Get("/readyz").status == 200; }));

  // Every pod is offered to both servers at once (two schedulers that each think they lead).
  std::atomic<int> next{0};
  std::atomic<int> wins{0};
  auto schedule = [&](uint16_t port, int seat) {
    HttpClient client(port);
    for (int i = next++; i < 2 * kPods; i = next++) {
      int pod = i / 2;
      std::string json = PendingPod(pod);
      HttpReply f = client.Post("/filter", ArgsWithNames(json, {"w0", "w1"}));
      rapidjson::Document d;
      d.Parse(f.body.c_str());
      if (!d.HasMember("NodeNames") || !d["NodeNames"].IsArray() || d["NodeNames"].Empty()) continue;
      std::string node = d["NodeNames"][seat % d["NodeNames"].Size()].GetString();
      HttpReply r = client.Post("/bind", BindJson(fmt::format("job-{}", pod), "ml", fmt::format("u-{}", pod), node));
      if (r.body.find(R"("Error":"")") != std::string::npos) ++wins;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(schedule, t % 2 ? pa : pb, t);
  for (std::thread& t : threads) t.join();

  std::map<std::string, int> used;
  for (const auto& [uid, node] : BoundInApi(api)) used[node] += 1 + std::stoi(uid.substr(2)) % 3;
  for (const auto& [node, gpus] : used) EXPECT_LE(gpus, 4) << node;
  if (used["w1"] > 4 || used["w0"] > 4) {
    for (const std::string& j : api.Objects("pods")) std::fprintf(stderr, "POD %s\n", j.c_str());
    for (const std::string& j : api.Objects("nodes")) std::fprintf(stderr, "NODE %s\n", j.c_str());
    std::fprintf(stderr, "A:\n%s\nB:\n%s\n", a.Stderr().c_str(), b.Stderr().c_str());
  }
  EXPECT_GE(used["w0"] + used["w1"], 6);
  // Both servers converge on the API server's truth.
  ASSERT_TRUE(Eventually([&] { return Ledger(pa) == BoundInApi(api) && Ledger(pb) == BoundInApi(api); }))
      << Ledger(pa).size() << " " << Ledger(pb).size() << " " << BoundInApi(api).size();
}

}  // namespace live_serve_test
}  // namespace gpusched::testing
