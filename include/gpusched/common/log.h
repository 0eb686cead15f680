// File: log.h
//
// Line-oriented logs on stderr: "2026-11-30T10:00:00.123Z INFO message". One write(2) per line,
// so lines from different threads never interleave.
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace gpusched::log {

enum class Level { kInfo, kWarning, kError };

void Write(Level level, std::string_view message);

template <typename... Args>
void Info(fmt::format_string<Args...> f, Args&&... args) {
  Write(Level::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void Warning(fmt::format_string<Args...> f, Args&&... args) {
  Write(Level::kWarning, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void Error(fmt::format_string<Args...> f, Args&&... args) {
  Write(Level::kError, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace gpusched::log
