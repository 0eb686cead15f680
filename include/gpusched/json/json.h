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
#include <vector>

#include "gpusched/common/status.h"

namespace gpusched::json {

// Deep enough for any Kubernetes object, shallow enough that no recursive walk can overflow.
inline constexpr int kMaxDepth = 64;

// Parses `text` into `doc`. Errors: InvalidArgument with the byte offset and RapidJSON's message,
// or on nesting deeper than max_depth. The document copies every string it needs.
Status Parse(std::string_view text, rapidjson::Document* doc, int max_depth = kMaxDepth);

// Parses `*buffer` in place: strings in `doc` point into `*buffer`, which must outlive `doc` and
// stay unmodified. Four NUL bytes are appended to *buffer first where it holds bytes above 0x7f
// (see json.cc). Faster than Parse for large bodies. Same errors.
Status ParseInsitu(std::string* buffer, rapidjson::Document* doc, int max_depth = kMaxDepth);

// The events of one JSON value that ParseInsituDiverting hands over instead of storing it in the
// Document: for a map of thousands of small objects that a DOM would build only to be read once.
// Strings and keys are views into the buffer parsed in place; null, booleans and numbers arrive
// as a Value, to be read and named as the DOM would. Each returns false to stop the parse, and
// status() then says why.
class ValueEvents {
 public:
  virtual ~ValueEvents() = default;
  virtual bool StartObject() = 0;
  virtual bool Key(std::string_view key) = 0;
  virtual bool EndObject() = 0;
  virtual bool StartArray() = 0;
  virtual bool EndArray() = 0;
  virtual bool String(std::string_view s) = 0;
  virtual bool Scalar(const rapidjson::Value& v) = 0;
  virtual Status status() const = 0;
};

// ParseInsitu, except that where the top-level member `key` (matched case-insensitively; its
// first occurrence) is an object, that object goes to `events`, and `doc` holds an empty object
// in its place. Returns whether it went there in *diverted. Errors: those of ParseInsitu, or
// events->status() where the events stopped the parse.
Status ParseInsituDiverting(std::string* buffer, std::string_view key, ValueEvents* events, rapidjson::Document* doc,
                            bool* diverted, int max_depth = kMaxDepth);

// Parses the one JSON value that `text` starts with into `doc` and sets *consumed to the bytes
// it took; what follows is left unread. Same errors as Parse, for that value. REQUIRES: the byte
// at text.data()[text.size()] may be read (a std::string's terminator, say).
Status ParsePrefix(std::string_view text, rapidjson::Document* doc, size_t* consumed, int max_depth = kMaxDepth);

// Returns "object", "array", "string", "number", "boolean" or "null".
std::string_view TypeName(const rapidjson::Value& v);

// True if `a` and `b` are equal with ASCII letters folded to one case (how the extender envelope's
// keys are matched: FindCaseInsensitive).
inline bool EqualsFoldingCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  auto lower = [](unsigned char c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; };
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(static_cast<unsigned char>(a[i])) != lower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

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
// Appends the strings of array `key` to *out (absent or null: none); an element of another type is
// InvalidArgument naming path.key[i].
Status ReadStrings(const rapidjson::Value& obj, std::string_view key, std::string_view path, std::vector<std::string>* out);

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
// `s` as a JSON string (AppendString to an empty string), for building bodies with fmt.
std::string Quoted(std::string_view s);

// Appends `v` to *out as compact JSON.
void AppendValue(std::string* out, const rapidjson::Value& v);

// Returns InvalidArgument "<path>: want <want>, got <actual type>".
Status WrongType(std::string_view path, std::string_view want, const rapidjson::Value& got);

// Reads obj[key] into *out as a count: a non-negative 32-bit integer; absent leaves *out as it
// is. Errors: InvalidArgument naming path.key and the value.
Status ReadCount(const rapidjson::Value& obj, std::string_view key, std::string_view path, int32_t* out);

// Calls read(element, "<path>.<key>[i]") for each element of the array member `key` of `obj`
// (absent or null: none), stopping at the first error. An element that is not an object is
// InvalidArgument naming it.
template <typename Read>
Status ForEachObject(const rapidjson::Value& obj, std::string_view key, std::string_view path, Read read) {
  const rapidjson::Value* list = nullptr;
  GPUSCHED_RETURN_IF_ERROR(FindArray(obj, key, path, &list));
  for (rapidjson::SizeType i = 0; list != nullptr && i < list->Size(); ++i) {
    std::string epath = std::string(path) + "." + std::string(key) + "[" + std::to_string(i) + "]";
    if (!(*list)[i].IsObject()) return WrongType(epath, "object", (*list)[i]);
    GPUSCHED_RETURN_IF_ERROR(read((*list)[i], epath));
  }
  return OkStatus();
}

}  // namespace gpusched::json
