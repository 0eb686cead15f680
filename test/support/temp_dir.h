// File: temp_dir.h
//
// Scratch directories for a test program: one per name and process, removed with everything in
// it when the program exits (CTest runs each test in a process of its own), so that a suite run
// leaves nothing behind in the temporary directory.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

namespace gpusched::testing {

// Returns <temporary directory>/gpusched-<name>-<pid>, created on first use.
inline std::string TestTempDir(const std::string& name) {
  struct Dirs {
    std::map<std::string, std::filesystem::path> by_name;
    ~Dirs() {
      std::error_code ignored;
      for (const auto& [name, dir] : by_name) std::filesystem::remove_all(dir, ignored);
    }
  };
  static Dirs dirs;
  auto [it, added] = dirs.by_name.try_emplace(name);
  if (added) {
    it->second = std::filesystem::temp_directory_path() / ("gpusched-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(it->second);
  }
  return it->second.string();
}

}  // namespace gpusched::testing
