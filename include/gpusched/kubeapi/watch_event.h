// File: watch_event.h
//
// The body of a Kubernetes watch: JSON objects, one per line, {"type": ..., "object": ...}. The
// transport's chunks do not line up with the lines: LineSplitter reassembles them.
#pragma once

#include <rapidjson/document.h>

#include <functional>
#include <string>
#include <string_view>

#include "gpusched/common/status.h"

namespace gpusched::kubeapi {

// Cuts a byte stream into lines. Not thread-safe.
class LineSplitter {
 public:
  // Calls on_line with every line `data` completes (without the '\n'; empty lines skipped),
  // and keeps the unfinished rest for the next call. A line longer than max_line fails with
  // ResourceExhausted (the rest of the stream cannot be framed: reconnect).
  Status Feed(std::string_view data, const std::function<void(std::string_view)>& on_line);
  size_t buffered() const { return partial_.size(); }
  void Clear() { partial_.clear(); }

  static constexpr size_t kMaxLine = 64u << 20;  // one object; a Pod is at most ~1.5 MiB in etcd

 private:
  std::string partial_;
};

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  rapidjson::Document doc;         // the whole event
  std::string resource_version;    // object.metadata.resourceVersion ("" for ERROR)
  int code = 0;                    // ERROR: the Status code (410 = history expired)
  std::string message;             // ERROR: the Status message

  // The event's object. REQUIRES: the event came from ParseWatchEvent.
  const rapidjson::Value& object() const { return doc["object"]; }
};

// Parses one line of a watch body. Errors: InvalidArgument naming what is wrong (not JSON, no
// type or object, an unknown type).
StatusOr<WatchEvent> ParseWatchEvent(std::string_view line);

}  // namespace gpusched::kubeapi
