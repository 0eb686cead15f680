// The size rule of the house style: no source or header over 700 lines, no function over 80
// lines outside data literals (raw strings do not count). Tests are exempt.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched::testing {
namespace sizes_test {

constexpr int kMaxFileLines = 700;
constexpr int kMaxFunctionLines = 80;

struct LongFunction {
  int line;    // where its body opens
  int length;  // lines of code in its body
};

// Blanks comments, string and character literals (raw strings included, their newlines too, so
// that a data literal adds no length) keeping every other byte at its offset.
std::string CodeOnly(const std::string& text) {
  std::string out = text;
  size_t i = 0;
  auto blank = [&](size_t from, size_t to, bool keep_newlines) {
    for (size_t k = from; k < to && k < out.size(); ++k) {
      if (!(keep_newlines && out[k] == '\n')) out[k] = ' ';
    }
  };
  while (i < text.size()) {
    if (text.compare(i, 2, "//") == 0) {
      size_t end = text.find('\n', i);
      end = end == std::string::npos ? text.size() : end;
      blank(i, end, true);
      i = end;
    } else if (text.compare(i, 2, "/*") == 0) {
      size_t end = text.find("*/", i + 2);
      end = end == std::string::npos ? text.size() : end + 2;
      blank(i, end, true);
      i = end;
    } else if (text.compare(i, 2, "R\"") == 0 && (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1])))) {
      size_t open = text.find('(', i);
      std::string close = ")" + text.substr(i + 2, open - i - 2) + "\"";
      size_t end = text.find(close, open);
      end = end == std::string::npos ? text.size() : end + close.size();
      blank(i, end, false);
      i = end;
    } else if (text[i] == '"' || (text[i] == '\'' && (i == 0 || !std::isxdigit(static_cast<unsigned char>(text[i - 1]))))) {
      char quote = text[i];
      size_t k = i + 1;
      while (k < text.size() && text[k] != quote && text[k] != '\n') k += text[k] == '\\' ? 2 : 1;
      blank(i, k + 1, true);
      i = k + 1;
    } else {
      ++i;
    }
  }
  return out;
}

// True if the code before `open` (a '{') ends a function head: ")" with optional qualifiers,
// and is not a control statement.
bool OpensFunction(const std::string& code, size_t open) {
  size_t k = open;
  while (k > 0 && std::isspace(static_cast<unsigned char>(code[k - 1]))) --k;
  std::string tail = code.substr(k >= 120 ? k - 120 : 0, std::min<size_t>(k, 120));
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (std::string_view q : {"const", "noexcept", "override", "final", "mutable"}) {
      if (tail.size() < q.size() || tail.compare(tail.size() - q.size(), q.size(), q) != 0) continue;
      tail.resize(tail.size() - q.size());
      while (!tail.empty() && std::isspace(static_cast<unsigned char>(tail.back()))) tail.pop_back();
      stripped = true;
    }
  }
  if (tail.empty() || tail.back() != ')') return false;
  // Find the matching '(' and the word before it.
  int depth = 0;
  size_t p = tail.size();
  while (p > 0) {
    char c = tail[--p];
    if (c == ')') ++depth;
    if (c == '(' && --depth == 0) break;
  }
  size_t e = p;
  while (e > 0 && std::isspace(static_cast<unsigned char>(tail[e - 1]))) --e;
  size_t b = e;
  while (b > 0 && (std::isalnum(static_cast<unsigned char>(tail[b - 1])) || tail[b - 1] == '_')) --b;
  std::string word = tail.substr(b, e - b);
  return word != "if" && word != "for" && word != "while" && word != "switch" && word != "catch" && !word.empty();
}

// Function bodies longer than `limit` lines of code (nested lambdas count with their function).
std::vector<LongFunction> LongFunctions(const std::string& text, int limit) {
  std::string code = CodeOnly(text);
  std::vector<LongFunction> out;
  struct Open {
    size_t at;
    bool function;
  };
  std::vector<Open> stack;
  int functions_open = 0;
  for (size_t i = 0; i < code.size(); ++i) {
    if (code[i] == '{') {
      bool fn = functions_open == 0 && OpensFunction(code, i);
      functions_open += fn ? 1 : 0;
      stack.push_back({i, fn});
    } else if (code[i] == '}' && !stack.empty()) {
      Open o = stack.back();
      stack.pop_back();
      if (!o.function) continue;
      --functions_open;
      int length = static_cast<int>(std::count(code.begin() + static_cast<long>(o.at), code.begin() + static_cast<long>(i), '\n'));
      if (length > limit) {
        int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(o.at), '\n'));
        out.push_back({line, length});
      }
    }
  }
  return out;
}

std::vector<std::filesystem::path> Sources() {
  std::vector<std::filesystem::path> out;
  for (const char* dir : {"src", "include"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(std::filesystem::path(GPUSCHED_SOURCE_DIR) / dir)) {
      std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".cc" || ext == ".h")) out.push_back(e.path());
    }
  }
  return out;
}

std::string Read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Lines(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += "  x += " + std::to_string(i) + ";\n";
  return out;
}

TEST(SizeRule, TheScannerFindsALongFunctionAndSparesDataLiteralsAndControlBlocks) {
  std::string code = "int Long(int x) {\n" + Lines(81) + "  return x;\n}\n";
  ASSERT_EQ(LongFunctions(code, 80).size(), 1u);
  EXPECT_EQ(LongFunctions(code, 80)[0].line, 1);
  std::string data = "std::string_view Data() {\n  return R\"json(\n" + std::string(200, '\n') + ")json\";\n}\n";
  EXPECT_THAT(LongFunctions(data, 80), ::testing::IsEmpty());
  std::string control = "void F(int x) {\n  if (x) {\n" + Lines(40) + "  }\n}\nvoid G() const {\n" + Lines(10) + "}\n";
  EXPECT_THAT(LongFunctions(control, 80), ::testing::IsEmpty());
  std::string method = "struct S {\n  void M() const override {\n" + Lines(85) + "  }\n};\n";
  EXPECT_EQ(LongFunctions(method, 80).size(), 1u);
}

TEST(SizeRule, NoSourceFileIsOver700Lines) {
  for (const auto& path : Sources()) {
    std::string text = Read(path);
    int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
    EXPECT_LE(lines, kMaxFileLines) << path.string();
  }
}

TEST(SizeRule, NoFunctionIsOver80LinesOfCode) {
  for (const auto& path : Sources()) {
    for (const LongFunction& f : LongFunctions(Read(path), kMaxFunctionLines)) {
      ADD_FAILURE() << path.string() << ":" << f.line << ": a function of " << f.length << " lines (at most " << kMaxFunctionLines << ")";
    }
  }
}

}  // namespace sizes_test
}  // namespace gpusched::testing
