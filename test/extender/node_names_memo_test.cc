#include "gpusched/extender/node_names_memo.h"

#include <gtest/gtest.h>

namespace gpusched::extender {
namespace node_names_memo_test {

using inventory::NameIndex;

std::shared_ptr<const NameIndex> Index(std::vector<std::string_view> names) {
  return std::make_shared<const NameIndex>(names);
}

std::shared_ptr<const NodeNamesMemo::List> Remembered(std::vector<std::string_view> names) {
  NodeNamesMemo memo;
  memo.Remember(names);
  std::string json = "[";
  for (size_t i = 0; i < names.size(); ++i) json += (i > 0 ? ",\"" : "\"") + std::string(names[i]) + "\"";
  return memo.Match(json + "]");
}

TEST(NodeNamesMemo, AListsPositionsAreLookedUpOncePerNodeSet) {
  auto list = Remembered({"c", "ab", "gone"});
  ASSERT_NE(list, nullptr);
  auto index = Index({"a", "ab", "bc", "c"});
  auto first = list->PositionsIn(index);
  EXPECT_EQ(*first, (std::vector<size_t>{3, 1, NameIndex::kNone}));
  EXPECT_EQ(list->PositionsIn(index), first);  // the same object: nothing looked up again
}

TEST(NodeNamesMemo, ANewNodeSetIsNeverAnsweredFromTheOldIndex) {
  auto list = Remembered({"b"});
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(*list->PositionsIn(Index({"b", "c"})), (std::vector<size_t>{0}));
  EXPECT_EQ(*list->PositionsIn(Index({"a", "b", "c"})), (std::vector<size_t>{1}));
}

}  // namespace node_names_memo_test
}  // namespace gpusched::extender
