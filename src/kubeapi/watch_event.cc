// File: watch_event.cc
//
// Watch bodies: transport chunks reassembled into lines, and each line read as an event (ADDED,
// MODIFIED, DELETED, BOOKMARK, or ERROR with its code) with its object and resourceVersion.
#include "gpusched/kubeapi/watch_event.h"

#include <fmt/format.h>

#include "gpusched/json/json.h"

namespace gpusched::kubeapi {

Status LineSplitter::Feed(std::string_view data, const std::function<void(std::string_view)>& on_line) {
  while (!data.empty()) {
    size_t nl = data.find('\n');
    if (nl == std::string_view::npos) {
      if (partial_.size() + data.size() > kMaxLine) {
        partial_.clear();
        return ResourceExhaustedError(fmt::format("watch line longer than {} bytes", kMaxLine));
      }
      partial_.append(data);
      return OkStatus();
    }
    if (partial_.empty()) {
      if (nl > 0) on_line(data.substr(0, nl));
    } else {
      partial_.append(data.substr(0, nl));
      std::string line = std::move(partial_);
      partial_.clear();
      on_line(line);
    }
    data.remove_prefix(nl + 1);
  }
  return OkStatus();
}

StatusOr<WatchEvent> ParseWatchEvent(std::string_view line) {
  WatchEvent e;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(line, &e.doc).WithContext("watch event"));
  if (!e.doc.IsObject()) return json::WrongType("watch event", "object", e.doc);
  std::string type;
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(e.doc, "type", "watch event", &type));
  const rapidjson::Value* object = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(e.doc, "object", "watch event", &object));
  if (object == nullptr) return InvalidArgumentError("watch event.object: missing");
  if (type == "ADDED") {
    e.type = WatchEventType::kAdded;
  } else if (type == "MODIFIED") {
    e.type = WatchEventType::kModified;
  } else if (type == "DELETED") {
    e.type = WatchEventType::kDeleted;
  } else if (type == "BOOKMARK") {
    e.type = WatchEventType::kBookmark;
  } else if (type == "ERROR") {
    e.type = WatchEventType::kError;
    int64_t code = 0;
    GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(*object, "code", "watch event.object", &code));
    e.code = static_cast<int>(code);
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*object, "message", "watch event.object", &e.message));
    return e;
  } else {
    return InvalidArgumentError(fmt::format("watch event.type: \"{}\" (want ADDED, MODIFIED, DELETED, BOOKMARK or ERROR)", type));
  }
  const rapidjson::Value* meta = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(*object, "metadata", "watch event.object", &meta));
  if (meta != nullptr) {
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "resourceVersion", "watch event.object.metadata", &e.resource_version));
  }
  return e;
}

}  // namespace gpusched::kubeapi
