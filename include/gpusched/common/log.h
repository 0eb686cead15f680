// File: log.h
//
// Line-oriented logs on stderr, one write(2) per line so lines from different threads never
// interleave. Text ("2026-11-30T10:00:00.123Z INFO message key=value") or JSON lines
// ({"ts":"...","level":"info","msg":"...","key":"value"}). The format and the lowest level are
// set once at start-up (SetFormat, SetLevel) and read atomically.
#pragma once

#include <fmt/format.h>

#include <initializer_list>
#include <string>
#include <string_view>

namespace gpusched::log {

enum class Level { kDebug, kInfo, kWarning, kError };
enum class Format { kText, kJson };

void SetFormat(Format format);
void SetLevel(Level level);
bool Enabled(Level level);

// A key and its value, logged after the message.
struct Field {
  std::string_view key;
  std::string value;
};

void Write(Level level, std::string_view message, std::initializer_list<Field> fields = {});

template <typename... Args>
void Debug(fmt::format_string<Args...> f, Args&&... args) {
  if (Enabled(Level::kDebug)) Write(Level::kDebug, fmt::format(f, std::forward<Args>(args)...));
}
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
