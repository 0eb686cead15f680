#include "gpusched/kubejson/snapshot_source.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cluster_json.h"
#include "temp_dir.h"

namespace gpusched::kubejson {
namespace snapshot_source_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ListJson;
using testing::PodJson;

std::string Write(const std::string& name, const std::string& content) {
  std::filesystem::path dir = testing::TestTempDir("snapshot");
  std::ofstream(dir / name) << content;
  return (dir / name).string();
}

std::string NodeWithVersion(const std::string& name, const std::string& rv, int gpus) {
  return fmt::format(R"({{"kind":"Node","metadata":{{"name":"{}","resourceVersion":"{}"}},)"
                     R"("status":{{"allocatable":{{"nvidia.com/gpu":"{}"}}}}}})",
                     name, rv, gpus);
}

TEST(SnapshotSource, KeepsTheNewestCopyOfEachObject) {
  PodJson old_copy{.name = "p", .uid = "u1", .resource_version = "100", .node = "n1", .phase = "Pending"};
  PodJson new_copy = old_copy;
  new_copy.resource_version = "250";
  new_copy.phase = "Running";
  std::string a = Write("a.json", ListJson({NodeWithVersion("n1", "300", 8), new_copy.ToJson()}));
  std::string b = Write("b.json", ListJson({NodeWithVersion("n1", "90", 4), old_copy.ToJson()}));
  StatusOr<ClusterObjects> objects = LoadSnapshotFiles({a, b});
  ASSERT_TRUE(objects.ok()) << objects.status().message();
  ASSERT_EQ(objects->nodes.size(), 1u);
  EXPECT_EQ(objects->nodes[0].allocatable.nvidia_gpus, 8);
  ASSERT_EQ(objects->pods.size(), 1u);
  EXPECT_EQ(objects->pods[0].phase, PodPhase::kRunning);
}

TEST(SnapshotSource, APodCreatedAgainUnderItsNameIsOnePod) {
  PodJson gone{.name = "trainer", .namespace_name = "ml", .uid = "old-uid", .resource_version = "10", .node = "n1",
               .phase = "Running", .containers = {testing::WholeGpus("c", 2)}};
  PodJson now = gone;
  now.uid = "new-uid";
  now.resource_version = "20";
  std::string a = Write("recreated-a.json", ListJson({now.ToJson()}));
  std::string b = Write("recreated-b.json", ListJson({gone.ToJson()}));
  StatusOr<ClusterObjects> objects = LoadSnapshotFiles({a, b});
  ASSERT_TRUE(objects.ok());
  ASSERT_EQ(objects->pods.size(), 1u);
  EXPECT_EQ(objects->pods[0].uid, "new-uid");
}

TEST(SnapshotSource, DraObjectsKeepTheirNewestCopyToo) {
  std::string v1 = R"({"kind":"ResourceClaim","metadata":{"name":"c","namespace":"ml","resourceVersion":"5"}})";
  std::string v2 = R"({"kind":"ResourceClaim","metadata":{"name":"c","namespace":"ml","resourceVersion":"7"}})";
  StatusOr<ClusterObjects> objects = LoadSnapshotFiles({Write("c2.json", ListJson({v2})), Write("c1.json", ListJson({v1}))});
  ASSERT_TRUE(objects.ok());
  ASSERT_EQ(objects->dra_objects.size(), 1u);
  EXPECT_EQ(objects->dra_objects[0].key, "ml/c");
  EXPECT_EQ(objects->dra_objects[0].resource_version, "7");
}

TEST(SnapshotSource, ErrorsNameTheFile) {
  std::string bad = Write("bad-item.json", R"({"kind":"List","items":[{"kind":"Pod","metadata":{"name":"x"}}]})");
  StatusOr<ClusterObjects> objects = LoadSnapshotFiles({bad});
  ASSERT_TRUE(objects.ok());
  EXPECT_THAT(objects->errors, ElementsAre(HasSubstr("snapshot " + bad + ": items[0] (Pod).metadata.uid: missing")));
  EXPECT_THAT(LoadSnapshotFiles({"/nonexistent.json"}).status().message(), HasSubstr("cannot open"));
}

}  // namespace snapshot_source_test
}  // namespace gpusched::kubejson
