#include "gpusched/config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

namespace gpusched::config {
namespace config_test {

using ::testing::HasSubstr;

TEST(Config, DefaultsWithoutAFile) {
  StatusOr<Config> c = ParseConfig("");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->server.host, "127.0.0.1");
  EXPECT_EQ(c->server.port, 8888);
  EXPECT_GT(c->server.idle_timeout.count(), 90);
  EXPECT_GE(c->server.body_limit, 60u << 20);
  EXPECT_EQ(c->service.node_policy, "binpack");
  EXPECT_EQ(c->service.score_mapping, placement::ScoreMapping::kRank);
}

TEST(Config, ReadsEveryKey) {
  StatusOr<Config> c = ParseConfig(R"(
listen: "[::1]:9000"
pathPrefix: /gpu/
threads: 4
bodyLimitBytes: 1048576
idleTimeoutSeconds: 300
placement: {nodePolicy: softmix, gpuPolicy: spread, searchBudget: 100}
scoring: {mapping: linear, filterTopK: 3}
inventory: {maxPendingPods: 10}
snapshots: [a.json, b.json]
snapshotReloadSeconds: 0
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.host, "::1");
  EXPECT_EQ(c->server.port, 9000);
  EXPECT_EQ(c->path_prefix, "/gpu");
  EXPECT_EQ(c->server.threads, 4);
  EXPECT_EQ(c->server.idle_timeout.count(), 300);
  EXPECT_EQ(c->service.node_policy, "softmix");
  EXPECT_EQ(c->service.placement.gpu_policy, placement::Policy::kSpread);
  EXPECT_EQ(c->service.placement.search_budget, 100);
  EXPECT_EQ(c->service.score_mapping, placement::ScoreMapping::kLinear);
  EXPECT_EQ(c->service.filter_top_k, 3u);
  EXPECT_EQ(c->inventory.max_pending_pods, 10u);
  EXPECT_EQ(c->snapshots.size(), 2u);
  EXPECT_EQ(c->snapshot_reload_seconds, 0);
}

TEST(Config, ErrorsNameKeyAndValue) {
  EXPECT_THAT(ParseConfig("lisen: x").status().message(), HasSubstr("config lisen: unknown key"));
  EXPECT_THAT(ParseConfig("placement: {nodePolicy: tetris}").status().message(),
              HasSubstr("placement.nodePolicy: \"tetris\" (want one of random, dotprod, clustering, packing"));
  EXPECT_THAT(ParseConfig("placement: {nodepolicy: spread}").status().message(),
              HasSubstr("placement.nodepolicy: unknown key"));
  EXPECT_THAT(ParseConfig("idleTimeoutSeconds: 60").status().message(), HasSubstr("60 must exceed 90"));
  EXPECT_THAT(ParseConfig("threads: many").status().message(), HasSubstr("config threads: cannot read \"many\""));
  EXPECT_THAT(ParseConfig("listen: localhost").status().message(), HasSubstr("want HOST:PORT"));
  EXPECT_THAT(ParseConfig("listen: a:99999").status().message(), HasSubstr("port \"99999\" is not 0-65535"));
  EXPECT_THAT(ParseConfig("pathPrefix: gpu").status().message(), HasSubstr("must start with /"));
  EXPECT_THAT(ParseConfig("scoring: {mapping: log}").status().message(), HasSubstr("want rank or linear"));
  EXPECT_THAT(ParseConfig("[1, 2").status().message(), HasSubstr("config:"));
}

TEST(Config, MissingFileIsNotFound) {
  EXPECT_EQ(LoadConfigFile("/nonexistent/gpusched.yaml").status().code(), StatusCode::kNotFound);
}

// Flags and file keys are one table: each flag reads its value as its key does.
TEST(Config, FlagsAndFileKeysShareOneReader) {
  std::set<std::string_view> flags;
  for (const Setting& s : Settings()) {
    EXPECT_FALSE(s.key.empty());
    if (!s.flag.empty()) {
      EXPECT_TRUE(flags.insert(s.flag).second) << s.flag << " listed twice";
    }
  }
  EXPECT_GE(flags.size(), 20u);
  Config c;
  EXPECT_THAT(ApplyFlag("--threads", "0", &c).message(), HasSubstr("--threads: 0 is outside 1-256"));
  EXPECT_THAT(ParseConfig("threads: 0").status().message(), HasSubstr("config threads: 0 is outside 1-256"));
  EXPECT_THAT(ApplyFlag("--filter-top-k", "-1", &c).message(), HasSubstr("--filter-top-k: -1 is outside"));
  EXPECT_THAT(ApplyFlag("--path-prefix", "gpu", &c).message(), HasSubstr("must start with /"));
  EXPECT_TRUE(ApplyFlag("--path-prefix", "/gpu/", &c).ok());
  EXPECT_EQ(c.path_prefix, "/gpu");
  EXPECT_TRUE(ApplyFlag("--in-cluster", "true", &c).ok());
  EXPECT_TRUE(c.cluster.in_cluster);
  EXPECT_THAT(ApplyFlag("--nope", "1", &c).message(), HasSubstr("unknown flag --nope"));
  EXPECT_THAT(FlagUsage(), HasSubstr("--node-policy P"));
}

TEST(Config, ContradictionsAreNamed) {
  Config c;
  c.server.tls_cert_file = "tls.crt";
  EXPECT_THAT(Validate(c).message(), HasSubstr("TLS needs both a certificate and a key"));
  c = Config{};
  c.cluster.in_cluster = true;
  c.snapshots = {"a.json"};
  EXPECT_THAT(Validate(c).message(), HasSubstr("exclude each other"));
  EXPECT_THAT(ParseConfig("placement: 3").status().message(), HasSubstr("config placement: want a mapping"));
  EXPECT_THAT(ParseConfig("dra: {gpuDrivers: x}").status().message(), HasSubstr("config dra.gpuDrivers: want a list"));
  StatusOr<Config> drivers = ParseConfig("dra: {gpuDrivers: [a.example.com, b.example.com]}");
  ASSERT_TRUE(drivers.ok());
  EXPECT_EQ(drivers->service.dra.gpu_drivers, (std::vector<std::string>{"a.example.com", "b.example.com"}));
  EXPECT_EQ(drivers->inventory.dra_gpu_drivers, drivers->service.dra.gpu_drivers);
}

TEST(Config, TopologyLevelsAreLabelKeysLowestFirstAndMayBeTurnedOff) {
  StatusOr<Config> defaults = ParseConfig("{}");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->service.topology_levels,
            (std::vector<std::string>{"nvidia.com/gpu.clique", "network.topology.nvidia.com/block", "topology.kubernetes.io/zone"}));
  StatusOr<Config> racks = ParseConfig("topology: {levels: [example.com/rack, topology.kubernetes.io/zone]}");
  ASSERT_TRUE(racks.ok()) << racks.status().message();
  EXPECT_EQ(racks->service.topology_levels, (std::vector<std::string>{"example.com/rack", "topology.kubernetes.io/zone"}));
  StatusOr<Config> off = ParseConfig("topology: {levels: []}");
  ASSERT_TRUE(off.ok());
  EXPECT_TRUE(off->service.topology_levels.empty());
  EXPECT_TRUE(defaults->service.topology_steer);
  StatusOr<Config> unsteered = ParseConfig("topology: {steer: false}");
  ASSERT_TRUE(unsteered.ok());
  EXPECT_FALSE(unsteered->service.topology_steer);
  EXPECT_TRUE(defaults->service.topology_reserve);
  StatusOr<Config> unreserved = ParseConfig("topology: {reserveForGangs: false}");
  ASSERT_TRUE(unreserved.ok());
  EXPECT_FALSE(unreserved->service.topology_reserve);
  EXPECT_THAT(ParseConfig("topology: {reserveForGangs: maybe}").status().message(), HasSubstr("topology.reserveForGangs"));
  EXPECT_EQ(defaults->service.scheduler_name, "gpu-scheduler");
  EXPECT_EQ(defaults->inventory.scheduler_name, "gpu-scheduler");
  StatusOr<Config> named = ParseConfig("schedulerName: gpu-batch");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->service.scheduler_name, "gpu-batch");
  // The inventory marks pods that name another (the drain wait), from the same setting.
  EXPECT_EQ(named->inventory.scheduler_name, "gpu-batch");
  EXPECT_THAT(ParseConfig("topology: {levels: ['a b']}").status().message(),
              HasSubstr("config topology.levels: \"a b\" is not a node label key"));
}

// Five minutes for one domain, four hours for one that drains (gang_domains.h).
TEST(Config, AGangWaitsFiveMinutesForOneDomainAndFourHoursForOneThatDrainsUnlessConfigured) {
  StatusOr<Config> defaults = ParseConfig("{}");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->service.topology_fallback_after, std::chrono::seconds(300));
  EXPECT_EQ(defaults->service.topology_drain_wait, std::chrono::seconds(14400));
  StatusOr<Config> at_once = ParseConfig("topology: {fallbackAfterSeconds: 0, drainWaitSeconds: 0}");
  ASSERT_TRUE(at_once.ok()) << at_once.status().message();
  EXPECT_EQ(at_once->service.topology_fallback_after, std::chrono::seconds(0));
  EXPECT_EQ(at_once->service.topology_drain_wait, std::chrono::seconds(0));
  EXPECT_THAT(ParseConfig("topology: {fallbackAfterSeconds: -5}").status().message(), HasSubstr("topology.fallbackAfterSeconds"));
  std::string bad = ParseConfig("topology: {drainWaitSeconds: soon}").status().message();
  EXPECT_THAT(bad, HasSubstr("topology.drainWaitSeconds"));
  EXPECT_THAT(bad, HasSubstr("soon"));
}

TEST(Config, ExtendedResourcesThroughDraAreOnUnlessTurnedOff) {
  StatusOr<Config> defaults = ParseConfig("{}");
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->service.dra_extended_resources);
  StatusOr<Config> off = ParseConfig("dra: {extendedResources: false}");
  ASSERT_TRUE(off.ok()) << off.status().message();
  EXPECT_FALSE(off->service.dra_extended_resources);
  EXPECT_THAT(ParseConfig("dra: {extendedResources: maybe}").status().message(), HasSubstr("config dra.extendedResources"));
}

}  // namespace config_test
}  // namespace gpusched::config
