// A libFuzzer-compatible driver for builds without libFuzzer (GCC): runs every file of the
// corpus directories given on the command line, then `--mutations N` seeded random mutations of
// them (byte flips, inserts, deletes, splices). The test suite runs each fuzz target this way
// under ASan/UBSan; scripts/fuzz.sh runs the real, coverage-guided libFuzzer with clang.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::string Mutate(std::string s, const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng() % n); };
  int edits = 1 + static_cast<int>(rng() % 8);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 6) {
      case 0:
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:
        s.insert(pick(s.size() + 1), 1, static_cast<char>(rng() % 256));
        break;
      case 2:
        if (!s.empty()) s.erase(pick(s.size()), 1 + pick(16));
        break;
      case 3: {  // splice a piece of another input
        const std::string& other = corpus[pick(corpus.size())];
        if (!other.empty()) {
          size_t from = pick(other.size());
          s.insert(pick(s.size() + 1), other.substr(from, 1 + pick(64)));
        }
        break;
      }
      case 4: {  // JSON-ish tokens
        static const char* kTokens[] = {"{", "}", "[", "]", "\"", ":", ",", "null", "true", "-1", "1e999",
                                        "\\u0000", "\"nvidia.com/gpu\"", "\"vke.volcengine.com/mgpu-core\"", "Gi", "m"};
        s.insert(pick(s.size() + 1), kTokens[pick(std::size(kTokens))]);
        break;
      }
      default:
        if (s.size() > 1) s.resize(pick(s.size()));
        break;
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  long mutations = 0;
  std::vector<std::string> corpus;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--mutations" && i + 1 < argc) {
      mutations = std::atol(argv[++i]);
      continue;
    }
    std::filesystem::path p(arg);
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::directory_iterator(p)) files.push_back(e.path());
    } else {
      files.push_back(p);
    }
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  }
  if (corpus.empty()) corpus.emplace_back();
  for (const std::string& input : corpus) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  }
  std::mt19937_64 rng(12345);
  for (long i = 0; i < mutations; ++i) {
    std::string input = Mutate(corpus[static_cast<size_t>(rng() % corpus.size())], corpus, rng);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  }
  std::printf("ran %zu corpus inputs and %ld mutations\n", corpus.size(), mutations);
  return 0;
}
