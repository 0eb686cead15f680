#include "gpusched/inventory/name_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpusched::inventory {
namespace name_index_test {

TEST(NameIndex, FindsEveryNameAndNothingElse) {
  std::vector<std::string> owned;
  for (int i = 0; i < 5000; ++i) owned.push_back("gpu-node-" + std::to_string(i));
  owned.push_back("");
  owned.push_back("a-name-longer-than-sixteen-bytes-to-cross-words");
  std::vector<std::string_view> names(owned.begin(), owned.end());
  NameIndex index(names);
  EXPECT_EQ(index.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) ASSERT_EQ(index.Find(names[i]), i) << names[i];
  EXPECT_EQ(index.Find("gpu-node-5000"), NameIndex::kNone);
  EXPECT_EQ(index.Find("gpu-node-1 "), NameIndex::kNone);
  EXPECT_EQ(NameIndex().Find("x"), NameIndex::kNone);
}

}  // namespace name_index_test
}  // namespace gpusched::inventory
