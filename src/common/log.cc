// File: log.cc
//
// Writing one log line: a UTC timestamp to the millisecond, the level and the message, as text with
// key=value fields or as a JSON object, emitted with a single write(2) to stderr.
#include "gpusched/common/log.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>

namespace gpusched::log {
namespace {

std::atomic<Format> g_format{Format::kText};
std::atomic<Level> g_level{Level::kInfo};

void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (u < 0x20) {
      fmt::format_to(std::back_inserter(*out), "\\u{:04x}", u);
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

std::string_view LevelName(Level level, bool lower) {
  switch (level) {
    case Level::kDebug:
      return lower ? "debug" : "DEBUG";
    case Level::kInfo:
      return lower ? "info" : "INFO";
    case Level::kWarning:
      return lower ? "warning" : "WARN";
    case Level::kError:
      return lower ? "error" : "ERROR";
  }
  return "INFO";
}

}  // namespace

void SetFormat(Format format) { g_format.store(format); }
void SetLevel(Level level) { g_level.store(level); }
bool Enabled(Level level) { return level >= g_level.load(std::memory_order_relaxed); }

void Write(Level level, std::string_view message, std::initializer_list<Field> fields) {
  if (!Enabled(level)) return;
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  std::string ts = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                               tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  std::string line;
  if (g_format.load(std::memory_order_relaxed) == Format::kJson) {
    line = fmt::format(R"({{"ts":"{}","level":"{}","msg":)", ts, LevelName(level, true));
    AppendJsonString(&line, message);
    for (const Field& f : fields) {
      line.push_back(',');
      AppendJsonString(&line, f.key);
      line.push_back(':');
      AppendJsonString(&line, f.value);
    }
    line += "}\n";
  } else {
    line = fmt::format("{} {} {}", ts, LevelName(level, false), message);
    for (const Field& f : fields) fmt::format_to(std::back_inserter(line), " {}={}", f.key, f.value);
    line.push_back('\n');
  }
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace gpusched::log
