// NodeUses: the bound pods' uses of one node, found by UID through the index of UID hashes.
#include "gpusched/model/node_uses.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace gpusched {
namespace node_uses_test {

PodUse Use(std::string uid, int64_t cpu) {
  PodUse u{.uid = std::move(uid), .name = "p"};
  u.requests.Add("cpu", cpu);
  return u;
}

TEST(NodeUses, FindsEveryPodAndNoOther) {
  NodeUses uses;
  for (std::string uid : {"aaaaaaaa-2", "aaaaaaaa-1", "aaaaaaaa", "aaaa", "b", "aaaaaaaa-10", ""}) uses.Put(Use(uid, 1));
  for (std::string uid : {"aaaaaaaa-2", "aaaaaaaa-1", "aaaaaaaa", "aaaa", "b", "aaaaaaaa-10", ""}) {
    ASSERT_NE(uses.Find(uid), nullptr) << uid;
    EXPECT_EQ(uses.Find(uid)->uid, uid);
  }
  for (std::string uid : {"aaaaaaaa-3", "aaa", "aaaaa", "c", "aaaaaaaa-0"}) EXPECT_EQ(uses.Find(uid), nullptr) << uid;
}

TEST(NodeUses, PutReplacesAPodsUseAndTheTotalFollows) {
  NodeUses uses;
  EXPECT_TRUE(uses.Put(Use("u1", 500)));
  EXPECT_TRUE(uses.Put(Use("u2", 250)));
  EXPECT_FALSE(uses.Put(Use("u1", 500)));  // equal: no change
  EXPECT_TRUE(uses.Put(Use("u1", 1000)));
  EXPECT_EQ(uses.total().Get("cpu"), 1250);
  EXPECT_EQ(uses.pods().size(), 2u);
  EXPECT_TRUE(uses.Drop("u2"));
  EXPECT_FALSE(uses.Drop("u2"));
  EXPECT_EQ(uses.total().Get("cpu"), 1000);
  EXPECT_EQ(uses.Find("u2"), nullptr);
  EXPECT_TRUE(uses.Drop("u1"));
  EXPECT_TRUE(uses.empty());
}

// Random puts and drops of UIDs among `uids + 1`, checked against a plain list of UIDs. Returns
// the most pods the node held.
size_t CheckAgainstAPlainList(int uids) {
  std::mt19937 rng(11);
  NodeUses uses;
  std::vector<std::string> plain;
  size_t largest = 0;
  for (int step = 0; step < 6000; ++step) {
    std::string uid = "pod-uid-" + std::to_string(std::uniform_int_distribution<int>(0, uids)(rng));
    bool present = std::find(plain.begin(), plain.end(), uid) != plain.end();
    if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
      EXPECT_EQ(uses.Drop(uid), present);
      std::erase(plain, uid);
    } else {
      uses.Put(Use(uid, 1));
      if (!present) plain.push_back(uid);
    }
    bool now = std::find(plain.begin(), plain.end(), uid) != plain.end();
    EXPECT_EQ(uses.Find(uid) != nullptr, now) << "step " << step << ": " << uid;
    largest = std::max(largest, plain.size());
  }
  EXPECT_EQ(uses.pods().size(), plain.size());
  for (const std::string& uid : plain) {
    const PodUse* found = uses.Find(uid);
    EXPECT_TRUE(found != nullptr && found->uid == uid) << uid;
  }
  EXPECT_EQ(uses.total().Get("cpu"), static_cast<int64_t>(plain.size()));
  EXPECT_EQ(uses.Find("pod-uid-x"), nullptr);
  return largest;
}

// On nodes small enough for Find's linear search and large enough for its binary one
// (NodeUses::kLinearSearch).
TEST(NodeUses, AgreesWithAPlainListUnderRandomChanges) {
  EXPECT_LE(CheckAgainstAPlainList(60), NodeUses::kLinearSearch);
  EXPECT_GT(CheckAgainstAPlainList(400), NodeUses::kLinearSearch);
}

}  // namespace node_uses_test
}  // namespace gpusched
