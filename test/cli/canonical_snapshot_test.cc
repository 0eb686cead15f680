// Issue "Real cluster input": `gpusched serve --snapshot` of a cluster whose quantities are all in
// the API server's canonical form ("8k", "96k", "1Gi") gives the same inventory, filter and
// prioritize answers and placements as the same cluster written with plain integers.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "canonical_quantities.h"
#include "cluster_json.h"
#include "http_client.h"
#include "serve_process.h"
#include "temp_dir.h"

namespace gpusched::testing {
namespace canonical_snapshot_test {

using ::testing::HasSubstr;
using ::testing::Not;

std::string TempFile(const std::string& name, const std::string& content) {
  std::filesystem::path dir = TestTempDir("canonical");
  std::ofstream(dir / name) << content;
  return (dir / name).string();
}

// A cluster whose GPU quantities are round thousands where the contract allows it (MiB of mGPU
// memory, mGPU core of ten cards), so that the canonical form differs from the plain one.
struct Cluster {
  std::vector<std::string> items;
  std::vector<std::string> nodes;
};

Cluster MakeCluster() {
  std::mt19937 rng(7);
  Cluster c;
  for (int i = 0; i < 12; ++i) {
    std::string name = fmt::format("mgpu-{:02}", i);
    c.nodes.push_back(name);
    c.items.push_back(MgpuNode(name, 4, 24000).ToJson());  // mgpu-memory 96000: "96k"
    for (int k = 0; k < 3; ++k) {
      int gpu = static_cast<int>(rng() % 4);
      int64_t mib = 1000 * (1 + static_cast<int64_t>(rng() % 6));  // 1000..6000: "1k".."6k"
      PodJson p{.name = fmt::format("s-{}-{}", i, k), .uid = fmt::format("u-s-{}-{}", i, k), .node = name,
                .phase = "Running", .containers = {Mgpu("main", 10 + 10 * static_cast<int64_t>(rng() % 3), mib)},
                .annotations = {{"vke.volcengine.com/gpu-index-container-main", std::to_string(gpu)}}};
      c.items.push_back(p.ToJson());
    }
  }
  for (int i = 0; i < 8; ++i) {
    std::string name = fmt::format("gpu-{:02}", i);
    c.nodes.push_back(name);
    c.items.push_back(NvidiaNode(name, 8, "nvidia").ToJson());
    PodJson p{.name = fmt::format("w-{}", i), .uid = fmt::format("u-w-{}", i), .node = name, .phase = "Running",
              .containers = {WholeGpus("main", 1 + static_cast<int64_t>(rng() % 4))}};
    c.items.push_back(p.ToJson());
  }
  // A node offering ten whole cards of mGPU core: "1k".
  c.nodes.push_back("mgpu-big");
  c.items.push_back(MgpuNode("mgpu-big", 10, 81920, "native-burst-share").ToJson());
  return c;
}

std::vector<PodJson> PendingPods() {
  std::vector<PodJson> pods;
  for (int i = 0; i < 12; ++i) {
    pods.push_back(PodJson{.name = fmt::format("p-{}", i), .uid = fmt::format("u-p-{}", i), .resource_version = "7",
                           .containers = {Mgpu("main", 20 + 10 * (i % 3), 2000 + 1000 * (i % 5))}});
  }
  pods.push_back(PodJson{.name = "ten", .uid = "u-ten", .containers = {Mgpu("main", 1000, std::nullopt)}});
  pods.push_back(PodJson{.name = "whole", .uid = "u-whole", .containers = {WholeGpus("main", 3)}});
  return pods;
}

struct Server {
  explicit Server(const std::string& file) : process({"serve", "--listen", "127.0.0.1:0", "--snapshot", file}) {}
  ServeProcess process;
};

TEST(CanonicalSnapshot, CanonicalQuantitiesServeExactlyAsPlainIntegers) {
  Cluster cluster = MakeCluster();
  std::string plain = ListJson(cluster.items);
  std::string canonical = CanonicalizeList(plain);
  // The canonical file really is canonical: no plain round thousands left, suffixes instead.
  EXPECT_THAT(canonical, HasSubstr(R"("vke.volcengine.com/mgpu-memory":"96k")"));
  EXPECT_THAT(canonical, HasSubstr(R"("vke.volcengine.com/mgpu-core":"1k")"));
  EXPECT_THAT(canonical, Not(HasSubstr(R"("vke.volcengine.com/mgpu-memory":"96000")")));
  EXPECT_THAT(plain, HasSubstr(R"("vke.volcengine.com/mgpu-memory":"96000")"));

  ServeProcess a({"serve", "--listen", "127.0.0.1:0", "--snapshot", TempFile("plain.json", plain)});
  ServeProcess b({"serve", "--listen", "127.0.0.1:0", "--snapshot", TempFile("canonical.json", canonical)});
  uint16_t port_a = a.WaitForPort(), port_b = b.WaitForPort();
  ASSERT_NE(port_a, 0) << a.Stderr();
  ASSERT_NE(port_b, 0) << b.Stderr();
  HttpClient ca(port_a), cb(port_b);
  std::string inventory = ca.Get("/debug/inventory").body;
  EXPECT_THAT(inventory, HasSubstr("\"errors\": []"));
  EXPECT_EQ(inventory, cb.Get("/debug/inventory").body);

  for (const PodJson& pod : PendingPods()) {
    std::string plain_pod = pod.ToJson();
    std::string canonical_pod = CanonicalizeList(ListJson({plain_pod}));
    canonical_pod = canonical_pod.substr(canonical_pod.find('[') + 1, canonical_pod.rfind(']') - canonical_pod.find('[') - 1);
    std::string filtered = ca.Post("/filter", ArgsWithNames(plain_pod, cluster.nodes)).body;
    EXPECT_EQ(filtered, cb.Post("/filter", ArgsWithNames(canonical_pod, cluster.nodes)).body) << pod.name;
    std::string scores = ca.Post("/prioritize", ArgsWithNames(plain_pod, cluster.nodes)).body;
    EXPECT_EQ(scores, cb.Post("/prioritize", ArgsWithNames(canonical_pod, cluster.nodes)).body) << pod.name;
    // Bind on the best node: the same placement on both.
    size_t best = scores.find("\"Score\":10");
    if (best == std::string::npos) continue;
    size_t host = scores.rfind("\"Host\":\"", best) + 8;
    std::string node = scores.substr(host, scores.find('"', host) - host);
    std::string bind = BindJson(pod.name, pod.namespace_name, pod.uid, node);
    EXPECT_EQ(ca.Post("/bind", bind).body, cb.Post("/bind", bind).body) << pod.name;
  }
  std::string after = ca.Get("/debug/inventory").body;
  EXPECT_NE(after, inventory);  // the binds placed pods
  EXPECT_EQ(after, cb.Get("/debug/inventory").body);
}

}  // namespace canonical_snapshot_test
}  // namespace gpusched::testing
