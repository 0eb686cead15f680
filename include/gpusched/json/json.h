// File: json.h
//
// RapidJSON at gpusched's boundary: parsing with a nesting limit and UTF-8 validation, and member
// lookup that never asserts. RapidJSON asserts on a wrong-typed Get*(), so every read here checks
// the type first and reports "<path>: want <type>, got <type>".
//
// Only src/json, src/kubejson, src/extender and src/config include this header; the core never does.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "gpusched/common/status.h"

namespace gpusched::json {

// Deep enough for any Kubernetes object, shallow enough that no recursive walk can overflow.
inline constexpr int kMaxDepth = 64;

// Parses `text` into `doc`. Errors: InvalidArgument with the byte offset and RapidJSON's message,
// or on nesting deeper than max_depth. The document copies every string it needs.
Status Parse(std::string_view text, rapidjson::Document* doc, int max_depth = kMaxDepth);

// Parses `*buffer` in place: strings in `doc` point into `*buffer`, which must outlive `doc` and
// stay unmodified. Four NUL bytes are appended to *buffer first (see json.cc). Faster than Parse
// for large bodies. Same errors.
Status ParseInsitu(std::string* buffer, rapidjson::Document* doc, int max_depth = kMaxDepth);

// Parses the one JSON value that `text` starts with into `doc` and sets *consumed to the bytes
// it took; what follows is left unread. Same errors as Parse, for that value. REQUIRES: the byte
// at text.data()[text.size()] may be read (a std::string's terminator, say).
Status ParsePrefix(std::string_view text, rapidjson::Document* doc, size_t* consumed, int max_depth = kMaxDepth);

// Returns "object", "array", "string", "number", "boolean" or "null".
std::string_view TypeName(const rapidjson::Value& v);

// Returns the member `key` of object `obj`, or nullptr if absent or null. REQUIRES: obj.IsObject().
const rapidjson::Value* Find(const rapidjson::Value& obj, std::string_view key);
// Same, matching `key` case-insensitively (Go's encoding/json rule for the extender envelope).
const rapidjson::Value* FindCaseInsensitive(const rapidjson::Value& obj, std::string_view key);

inline std::string_view View(const rapidjson::Value& v) {
  return std::string_view(v.GetString(), v.GetStringLength());
}

// Typed reads of an optional member: absent or null leaves *out unchanged and returns OK;
// a present member of the wrong type is InvalidArgument naming `path`.`key`.
Status ReadString(const rapidjson::Value& obj, std::string_view key, std::string_view path, std::string* out);
Status ReadInt64(const rapidjson::Value& obj, std::string_view key, std::string_view path, int64_t* out);
Status ReadBool(const rapidjson::Value& obj, std::string_view key, std::string_view path, bool* out);

// Sets *out to the member `key` if it is an object; to nullptr if it is absent or null (OK) or of
// another type (InvalidArgument naming path.key). *out is never left pointing at a wrong type.
Status FindObject(const rapidjson::Value& obj, std::string_view key, std::string_view path,
                  const rapidjson::Value** out);
Status FindArray(const rapidjson::Value& obj, std::string_view key, std::string_view path,
                 const rapidjson::Value** out);

// Appends `s` to *out as a JSON string: quoted, with '"', '\\' and control characters escaped.
// Strings without such characters (node names, almost every reason) are copied in one go.
// REQUIRES: `s` is valid UTF-8.
void AppendString(std::string* out, std::string_view s);

// Appends `v` to *out as compact JSON.
void AppendValue(std::string* out, const rapidjson::Value& v);

// Returns InvalidArgument "<path>: want <want>, got <actual type>".
Status WrongType(std::string_view path, std::string_view want, const rapidjson::Value& got);

}  // namespace gpusched::json
