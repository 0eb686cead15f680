// No code outside model/ and placement/kinds/ branches on a named kind: a comparison or a case
// label with a NodeMode or RequestKind value there is a verb deciding for one kind on its own,
// which is how a verb forgets a kind. Such code asks the kind (placement/kinds.h), its payload
// (HasPayload) or the claims kind (ClaimsKind) instead.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace gpusched::testing {
namespace kind_rule_test {

const std::regex& NamedKind() {
  static const std::regex kNamed(R"re(([!=]=\s*(NodeMode|RequestKind)::k)|((NodeMode|RequestKind)::k\w+\s*[!=]=)|(case\s+(NodeMode|RequestKind)::))re");
  return kNamed;
}

// Returns "file:line: text" for each line of src/ and include/ outside model/ and kinds/ that
// compares with a named kind.
std::vector<std::string> BranchesOnANamedKind() {
  std::vector<std::string> out;
  for (const char* dir : {"src", "include"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(std::filesystem::path(GPUSCHED_SOURCE_DIR) / dir)) {
      std::string path = e.path().generic_string();
      if (e.path().extension() != ".cc" && e.path().extension() != ".h") continue;
      if (path.find("/model/") != std::string::npos || path.find("/placement/kinds/") != std::string::npos) continue;
      std::ifstream in(e.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        if (std::regex_search(line, NamedKind())) out.push_back(path + ":" + std::to_string(n) + ": " + line);
      }
    }
  }
  return out;
}

TEST(KindRule, NoCodeOutsideTheModelAndTheKindsBranchesOnANamedKind) {
  EXPECT_THAT(BranchesOnANamedKind(), ::testing::IsEmpty());
}

TEST(KindRule, TheRuleSeesABranchOnANamedKind) {
  const std::regex& named = NamedKind();
  EXPECT_TRUE(std::regex_search(std::string("if (node.mode == NodeMode::kMgpu) {"), named));
  EXPECT_TRUE(std::regex_search(std::string("return a.placement.kind != RequestKind::kDra;"), named));
  EXPECT_TRUE(std::regex_search(std::string("if (RequestKind::kWholeGpu == kind)"), named));
  EXPECT_TRUE(std::regex_search(std::string("    case RequestKind::kMgpu:"), named));
  EXPECT_FALSE(std::regex_search(std::string("  NodeMode mode = NodeMode::kNvidia;  // a default"), named));
  EXPECT_FALSE(std::regex_search(std::string("if (HasPayload(n.mode, Payload::kShares))"), named));
}

}  // namespace kind_rule_test
}  // namespace gpusched::testing
