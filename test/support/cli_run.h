// Runs the gpusched binary as a person would, for the subcommands' tests.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include "temp_dir.h"

namespace gpusched::testing {

struct CliRun {
  int code = -1;
  std::string out;  // stdout and stderr, merged
};

// Runs `binary` with `args` (a shell word list).
inline CliRun RunCli(const std::string& binary, const std::string& args) {
  std::string command = binary + " " + args + " 2>&1";
  FILE* p = popen(command.c_str(), "r");
  CliRun r;
  std::array<char, 4096> buf;
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Writes `text` to `name` in the test program's own temporary folder (TestTempDir: two suite runs
// at once never share a file); returns its path.
inline std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = TestTempDir("files") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace gpusched::testing
