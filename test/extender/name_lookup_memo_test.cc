#include "gpusched/extender/name_lookup_memo.h"

#include <gtest/gtest.h>

namespace gpusched::extender {
namespace {

using inventory::NameIndex;

std::shared_ptr<const NameIndex> Index(std::vector<std::string_view> names) {
  return std::make_shared<const NameIndex>(names);
}

TEST(NameLookupMemo, ARepeatedListIsAnsweredFromMemoryAndEqualsAFreshLookup) {
  NameLookupMemo memo;
  auto index = Index({"a", "ab", "bc", "c"});
  std::vector<std::string_view> names = {"c", "ab", "gone"};
  auto first = memo.Lookup(names, index);
  EXPECT_EQ(*first, (NameLookupMemo::Positions{3, 1, NameIndex::kNone}));
  EXPECT_EQ(memo.Lookup(names, index), first);  // the same object: nothing looked up again
}

TEST(NameLookupMemo, ListsSpelledAlikeButSplitDifferentlyAreDifferent) {
  NameLookupMemo memo;
  auto index = Index({"a", "ab", "bc", "c"});
  std::vector<std::string_view> one = {"ab", "c"};
  std::vector<std::string_view> other = {"a", "bc"};
  EXPECT_EQ(*memo.Lookup(one, index), (NameLookupMemo::Positions{1, 3}));
  EXPECT_EQ(*memo.Lookup(other, index), (NameLookupMemo::Positions{0, 2}));
}

TEST(NameLookupMemo, ANewNodeSetIsNeverAnsweredFromTheOldIndex) {
  NameLookupMemo memo;
  std::vector<std::string_view> names = {"b"};
  EXPECT_EQ(*memo.Lookup(names, Index({"b", "c"})), (NameLookupMemo::Positions{0}));
  EXPECT_EQ(*memo.Lookup(names, Index({"a", "b", "c"})), (NameLookupMemo::Positions{1}));
}

TEST(NameLookupMemo, TheListUsedLastIsKept) {
  NameLookupMemo memo(2);
  auto index = Index({"a", "b", "c"});
  std::vector<std::string_view> all = {"a", "b", "c"}, one = {"a"}, two = {"b"};
  auto positions = memo.Lookup(all, index);
  memo.Lookup(one, index);
  memo.Lookup(all, index);
  memo.Lookup(two, index);
  EXPECT_EQ(memo.Lookup(all, index), positions);  // still remembered: not looked up again
}

}  // namespace
}  // namespace gpusched::extender
