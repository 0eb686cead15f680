// The answers of the verbs are written by json::Writer, never appended by hand: a literal that
// opens or continues a JSON object or array ({"key":, ,"key":, ]}) in the code of the verbs and
// the router is a hand-written answer, with its commas and escapes up to whoever edits it next.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace gpusched::testing {
namespace json_writer_rule_test {

// A raw string or a plain literal whose text starts like a JSON fragment ({" {{" [{ ,"x_1": ]} }}
// ],"), or a bracket pushed by hand.
const std::regex& Fragment() {
  static const std::regex kFragment(
      R"re((R"\(|")(\{\{?\\?"|\[\{|,\\?"[A-Za-z0-9_]+\\?":|\]\}|\}\}|\],\\?")|push_back\('[{\[]'\))re");
  return kFragment;
}

// Returns "file:line: text" for each line of `dir`'s sources holding such a literal.
std::vector<std::string> HandWrittenJson(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::filesystem::path(GPUSCHED_SOURCE_DIR) / dir)) {
    if (e.path().extension() != ".cc") continue;
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (std::regex_search(line, Fragment())) out.push_back(e.path().string() + ":" + std::to_string(n) + ": " + line);
    }
  }
  return out;
}

TEST(JsonWriterRule, VerbsAndTheRouterWriteNoJsonByHand) {
  std::vector<std::string> found = HandWrittenJson("src/extender");
  for (const std::string& s : HandWrittenJson("src/http")) found.push_back(s);
  EXPECT_THAT(found, ::testing::IsEmpty());
}

TEST(JsonWriterRule, TheRuleSeesAHandWrittenAnswer) {
  const std::regex& kFragment = Fragment();
  EXPECT_TRUE(std::regex_search(std::string(R"x(out += R"({"pod":)";)x"), kFragment));
  EXPECT_TRUE(std::regex_search(std::string(R"x(out.append(R"(,"score":)");)x"), kFragment));
  EXPECT_TRUE(std::regex_search(std::string(R"x(body = "{\"Error\":\"use POST\"}";)x"), kFragment));
  EXPECT_TRUE(std::regex_search(std::string(R"x(fmt::format(R"({{"Error":{}}})", e))x"), kFragment));
  EXPECT_TRUE(std::regex_search(std::string(R"x(fmt::format(R"(],"NumPDBViolations":{}}})", n))x"), kFragment));
  EXPECT_TRUE(std::regex_search(std::string(R"x(out += R"(,"gpu_index2":)";)x"), kFragment));
  EXPECT_TRUE(std::regex_search(std::string(R"x(out.push_back('{');)x"), kFragment));
  EXPECT_FALSE(std::regex_search(std::string(R"x(w.Member("pod", pod);)x"), kFragment));
  EXPECT_FALSE(std::regex_search(std::string(R"x(fmt::format("pod \"{}\": want namespace/name", key))x"), kFragment));
}

}  // namespace json_writer_rule_test
}  // namespace gpusched::testing
