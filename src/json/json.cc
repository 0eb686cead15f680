// File: json.cc
//
// RapidJSON behind gpusched's limits: SAX parsing under a depth limiter, UTF-8 validation skipped
// for all-ASCII text, NUL padding, one top-level member diverted to its own handler; string
// escaping eight bytes at a time; typed reads that never assert.
#include "gpusched/json/json.h"

#include <fmt/format.h>
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>
#include <rapidjson/writer.h>

#include <cstring>

namespace gpusched::json {
namespace {

// Forwards SAX events to a Document while refusing nesting deeper than a limit.
template <typename Handler>
class DepthLimiter {
 public:
  DepthLimiter(Handler& h, int max_depth) : h_(h), max_depth_(max_depth) {}
  bool Null() { return h_.Null(); }
  bool Bool(bool b) { return h_.Bool(b); }
  bool Int(int i) { return h_.Int(i); }
  bool Uint(unsigned u) { return h_.Uint(u); }
  bool Int64(int64_t i) { return h_.Int64(i); }
  bool Uint64(uint64_t u) { return h_.Uint64(u); }
  bool Double(double d) { return h_.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) { return h_.RawNumber(s, n, copy); }
  bool String(const char* s, rapidjson::SizeType n, bool copy) { return h_.String(s, n, copy); }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) { return h_.Key(s, n, copy); }
  bool StartObject() { return Enter() && h_.StartObject(); }
  bool EndObject(rapidjson::SizeType n) { --depth_; return h_.EndObject(n); }
  bool StartArray() { return Enter() && h_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) { --depth_; return h_.EndArray(n); }
  bool too_deep() const { return too_deep_; }

 private:
  bool Enter() {
    if (++depth_ > max_depth_) {
      too_deep_ = true;
      return false;
    }
    return true;
  }
  Handler& h_;
  int max_depth_;
  int depth_ = 0;
  bool too_deep_ = false;
};

// Between the depth limiter and the Document: hands the value of the first top-level member
// named `key` (case-insensitively) to `events` where it is an object, and gives the Document an
// empty object there.
class DivertingHandler {
 public:
  DivertingHandler(rapidjson::Document& doc, std::string_view key, ValueEvents* events)
      : doc_(doc), key_(key), events_(events) {}
  bool Null() { return Scalar(rapidjson::Value()); }
  bool Bool(bool b) { return Scalar(rapidjson::Value(b)); }
  bool Int(int i) { return Scalar(rapidjson::Value(i)); }
  bool Uint(unsigned u) { return Scalar(rapidjson::Value(u)); }
  bool Int64(int64_t i) { return Scalar(rapidjson::Value(i)); }
  bool Uint64(uint64_t u) { return Scalar(rapidjson::Value(u)); }
  bool Double(double d) { return Scalar(rapidjson::Value(d)); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) { return inside_ == 0 && doc_.RawNumber(s, n, copy); }
  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    if (inside_ > 0) return events_->String(std::string_view(s, n));
    armed_ = false;
    return doc_.String(s, n, copy);
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    if (inside_ > 0) return events_->Key(std::string_view(s, n));
    if (depth_ == 1 && !seen_ && EqualsFoldingCase(std::string_view(s, n), key_)) seen_ = armed_ = true;
    return doc_.Key(s, n, copy);
  }
  bool StartObject() {
    if (inside_ > 0 || armed_) {
      bool entering = inside_ == 0;
      armed_ = false;
      ++inside_;
      diverted_ = true;
      return events_->StartObject() && (!entering || doc_.StartObject());
    }
    ++depth_;
    return doc_.StartObject();
  }
  bool EndObject(rapidjson::SizeType n) {
    if (inside_ > 0) return events_->EndObject() && (--inside_ > 0 || doc_.EndObject(0));
    --depth_;
    return doc_.EndObject(n);
  }
  bool StartArray() {
    if (inside_ > 0) return ++inside_, events_->StartArray();
    armed_ = false;
    ++depth_;
    return doc_.StartArray();
  }
  bool EndArray(rapidjson::SizeType n) {
    if (inside_ > 0) return --inside_, events_->EndArray();
    --depth_;
    return doc_.EndArray(n);
  }
  bool diverted() const { return diverted_; }

 private:
  bool Scalar(rapidjson::Value v) {
    if (inside_ > 0) return events_->Scalar(v);
    armed_ = false;
    switch (v.GetType()) {
      case rapidjson::kNullType: return doc_.Null();
      case rapidjson::kFalseType: return doc_.Bool(false);
      case rapidjson::kTrueType: return doc_.Bool(true);
      default: break;
    }
    if (v.IsInt()) return doc_.Int(v.GetInt());
    if (v.IsUint()) return doc_.Uint(v.GetUint());
    if (v.IsInt64()) return doc_.Int64(v.GetInt64());
    if (v.IsUint64()) return doc_.Uint64(v.GetUint64());
    return doc_.Double(v.GetDouble());
  }

  rapidjson::Document& doc_;
  std::string_view key_;
  ValueEvents* events_;
  int depth_ = 0;       // of the Document's containers open
  int inside_ = 0;      // of the diverted value's containers open (0: not inside it)
  bool seen_ = false;   // the key came at the top level already
  bool armed_ = false;  // the next value is the key's
  bool diverted_ = false;
};

// RapidJSON's UTF-8 validation takes all continuation bytes a lead byte announces before it
// looks at them, so a multi-byte sequence cut off by the end of the input reads up to three
// bytes past the terminating NUL (found by AddressSanitizer on the fuzz corpus). Inputs are
// therefore followed by this many NULs.
constexpr size_t kPadding = 4;

// Returns true if `text` has no byte above 0x7f: then it is valid UTF-8 as it stands, and the
// parser need not validate every string (which costs more than the rest of parsing a request of
// 5,000 node names). Eight bytes at a time.
bool AllAscii(std::string_view text) {
  constexpr uint64_t kHighBits = 0x8080808080808080ULL;
  size_t i = 0;
  uint64_t seen = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, text.data() + i, 8);
    seen |= word;
  }
  for (; i < text.size(); ++i) seen |= static_cast<unsigned char>(text[i]);
  return (seen & kHighBits) == 0;
}

// A value ParseStream hands to events instead of the Document (DivertingHandler).
struct Diversion {
  std::string_view key;
  ValueEvents* events = nullptr;
  bool diverted = false;  // set by ParseStream
};

// Parses `stream` into *doc (all of it, or what `diversion` leaves it). REQUIRES: `ascii` only if
// the text is all ASCII (AllAscii): then its strings need no UTF-8 validation.
template <unsigned kFlags, typename Stream>
Status ParseStream(bool ascii, Stream& stream, rapidjson::Document* doc, int max_depth, Diversion* diversion = nullptr) {
  rapidjson::Reader reader;
  bool too_deep = false;
  rapidjson::ParseResult result;
  // Recursive descent: the limiter refuses an object or array before the parser recurses into
  // it, so the stack holds at most max_depth frames; the iterative parser is a fifth slower.
  auto parse = [&](auto& handler) {
    DepthLimiter limiter(handler, max_depth);
    result = ascii ? reader.Parse<kFlags>(stream, limiter)
                   : reader.Parse<kFlags | rapidjson::kParseValidateEncodingFlag>(stream, limiter);
    too_deep = limiter.too_deep();
    return !result.IsError();
  };
  auto generator = [&](rapidjson::Document& d) {
    if (diversion == nullptr) return parse(d);
    DivertingHandler handler(d, diversion->key, diversion->events);
    bool ok = parse(handler);
    diversion->diverted = handler.diverted();
    return ok;
  };
  doc->Populate(generator);
  if (too_deep) return InvalidArgumentError(fmt::format("JSON nests deeper than {} levels", max_depth));
  if (diversion != nullptr && result.Code() == rapidjson::kParseErrorTermination && !diversion->events->status().ok()) {
    return diversion->events->status();
  }
  if (result.IsError()) {
    return InvalidArgumentError(
        fmt::format("malformed JSON at offset {}: {}", result.Offset(), rapidjson::GetParseError_En(result.Code())));
  }
  return OkStatus();
}

// A RapidJSON output stream appending to a std::string.
struct StringOut {
  using Ch = char;
  std::string* s;
  void Put(char c) { s->push_back(c); }
  void Flush() {}
};

bool NeedsEscape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

// Returns the position of the first byte of `s` that needs escaping, or s.size(). Eight bytes at
// a time: node names, the bulk of every reply, have none.
size_t FirstToEscape(std::string_view s) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    uint64_t quote = w ^ (kOnes * '"'), backslash = w ^ (kOnes * '\\');
    uint64_t special = ((w - kOnes * 0x20) & ~w) | ((quote - kOnes) & ~quote) | ((backslash - kOnes) & ~backslash);
    if ((special & kHigh) != 0) break;  // (may be a false alarm: the bytes are checked one by one)
  }
  while (i < s.size() && !NeedsEscape(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

}  // namespace

std::string Quoted(std::string_view s) {
  std::string out;
  AppendString(&out, s);
  return out;
}

void AppendString(std::string* out, std::string_view s) {
  out->push_back('"');
  size_t first = FirstToEscape(s);
  if (first == s.size()) {
    out->append(s);
    out->push_back('"');
    return;
  }
  size_t start = 0;
  for (size_t i = first; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (!NeedsEscape(c)) continue;
    out->append(s.data() + start, i - start);
    start = i + 1;
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\r':
        out->append("\\r");
        break;
      default:
        fmt::format_to(std::back_inserter(*out), "\\u{:04x}", c);
    }
  }
  out->append(s.data() + start, s.size() - start);
  out->push_back('"');
}

void AppendValue(std::string* out, const rapidjson::Value& v) {
  StringOut stream{out};
  rapidjson::Writer<StringOut> writer(stream);
  v.Accept(writer);
}

Status Parse(std::string_view text, rapidjson::Document* doc, int max_depth) {
  if (std::memchr(text.data(), '\0', text.size()) != nullptr) {
    return InvalidArgumentError("malformed JSON: NUL byte in body");
  }
  std::string copy;
  copy.reserve(text.size() + kPadding);
  copy.append(text);
  copy.append(kPadding, '\0');
  rapidjson::StringStream stream(copy.c_str());
  return ParseStream<rapidjson::kParseDefaultFlags>(AllAscii(text), stream, doc, max_depth);
}

Status ParsePrefix(std::string_view text, rapidjson::Document* doc, size_t* consumed, int max_depth) {
  if (std::memchr(text.data(), '\0', text.size()) != nullptr) {
    return InvalidArgumentError("malformed JSON: NUL byte in body");
  }
  if (text.data()[text.size()] == '\0' && AllAscii(text)) {
    // Already NUL-terminated (the tail of a std::string) and nothing to validate, so nothing is
    // read past the terminator: parsed where it lies.
    rapidjson::StringStream stream(text.data());
    GPUSCHED_RETURN_IF_ERROR(ParseStream<rapidjson::kParseStopWhenDoneFlag>(true, stream, doc, max_depth));
    *consumed = stream.Tell();
    return OkStatus();
  }
  std::string copy;
  copy.reserve(text.size() + kPadding);
  copy.append(text);
  copy.append(kPadding, '\0');
  rapidjson::StringStream stream(copy.c_str());
  GPUSCHED_RETURN_IF_ERROR(ParseStream<rapidjson::kParseStopWhenDoneFlag>(AllAscii(text), stream, doc, max_depth));
  *consumed = stream.Tell();
  return OkStatus();
}

namespace {

// ParseInsitu with an optional diversion.
Status ParseInPlace(std::string* buffer, rapidjson::Document* doc, int max_depth, Diversion* diversion) {
  if (std::memchr(buffer->data(), '\0', buffer->size()) != nullptr) {
    return InvalidArgumentError("malformed JSON: NUL byte in body");
  }
  bool ascii = AllAscii(*buffer);
  // ASCII is parsed without validation, which reads nothing past the string's own terminator; the
  // padding would only cost a copy of a large body into a larger allocation.
  if (!ascii) buffer->append(kPadding, '\0');
  rapidjson::InsituStringStream stream(buffer->data());
  return ParseStream<rapidjson::kParseInsituFlag>(ascii, stream, doc, max_depth, diversion);
}

}  // namespace

Status ParseInsitu(std::string* buffer, rapidjson::Document* doc, int max_depth) {
  return ParseInPlace(buffer, doc, max_depth, nullptr);
}

Status ParseInsituDiverting(std::string* buffer, std::string_view key, ValueEvents* events, rapidjson::Document* doc,
                            bool* diverted, int max_depth) {
  Diversion diversion{.key = key, .events = events};
  Status status = ParseInPlace(buffer, doc, max_depth, &diversion);
  *diverted = diversion.diverted;
  return status;
}

std::string_view TypeName(const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "boolean";
    case rapidjson::kObjectType:
      return "object";
    case rapidjson::kArrayType:
      return "array";
    case rapidjson::kStringType:
      return "string";
    case rapidjson::kNumberType:
      return "number";
  }
  return "unknown";
}

Status WrongType(std::string_view path, std::string_view want, const rapidjson::Value& got) {
  return InvalidArgumentError(fmt::format("{}: want {}, got {}", path, want, TypeName(got)));
}

const rapidjson::Value* Find(const rapidjson::Value& obj, std::string_view key) {
  for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
    if (View(it->name) == key) return it->value.IsNull() ? nullptr : &it->value;
  }
  return nullptr;
}

const rapidjson::Value* FindCaseInsensitive(const rapidjson::Value& obj, std::string_view key) {
  for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
    std::string_view name = View(it->name);
    if (EqualsFoldingCase(name, key)) {
      return it->value.IsNull() ? nullptr : &it->value;
    }
  }
  return nullptr;
}

Status ReadString(const rapidjson::Value& obj, std::string_view key, std::string_view path, std::string* out) {
  const rapidjson::Value* v = Find(obj, key);
  if (v == nullptr) return OkStatus();
  if (!v->IsString()) return WrongType(fmt::format("{}.{}", path, key), "string", *v);
  out->assign(v->GetString(), v->GetStringLength());
  return OkStatus();
}

Status ReadInt64(const rapidjson::Value& obj, std::string_view key, std::string_view path, int64_t* out) {
  const rapidjson::Value* v = Find(obj, key);
  if (v == nullptr) return OkStatus();
  if (!v->IsInt64()) return WrongType(fmt::format("{}.{}", path, key), "integer", *v);
  *out = v->GetInt64();
  return OkStatus();
}

Status ReadCount(const rapidjson::Value& obj, std::string_view key, std::string_view path, int32_t* out) {
  int64_t n = *out;
  GPUSCHED_RETURN_IF_ERROR(ReadInt64(obj, key, path, &n));
  if (n < 0 || n > INT32_MAX) return InvalidArgumentError(fmt::format("{}.{}: {} is not a 32-bit count", path, key, n));
  *out = static_cast<int32_t>(n);
  return OkStatus();
}

Status ReadBool(const rapidjson::Value& obj, std::string_view key, std::string_view path, bool* out) {
  const rapidjson::Value* v = Find(obj, key);
  if (v == nullptr) return OkStatus();
  if (!v->IsBool()) return WrongType(fmt::format("{}.{}", path, key), "boolean", *v);
  *out = v->GetBool();
  return OkStatus();
}

Status FindObject(const rapidjson::Value& obj, std::string_view key, std::string_view path,
                  const rapidjson::Value** out) {
  const rapidjson::Value* v = Find(obj, key);
  *out = nullptr;
  if (v != nullptr && !v->IsObject()) return WrongType(fmt::format("{}.{}", path, key), "object", *v);
  *out = v;
  return OkStatus();
}

Status FindArray(const rapidjson::Value& obj, std::string_view key, std::string_view path,
                 const rapidjson::Value** out) {
  const rapidjson::Value* v = Find(obj, key);
  *out = nullptr;
  if (v != nullptr && !v->IsArray()) return WrongType(fmt::format("{}.{}", path, key), "array", *v);
  *out = v;
  return OkStatus();
}

Status ReadStrings(const rapidjson::Value& obj, std::string_view key, std::string_view path, std::vector<std::string>* out) {
  const rapidjson::Value* list = nullptr;
  GPUSCHED_RETURN_IF_ERROR(FindArray(obj, key, path, &list));
  for (rapidjson::SizeType i = 0; list != nullptr && i < list->Size(); ++i) {
    if (!(*list)[i].IsString()) return WrongType(fmt::format("{}.{}[{}]", path, key, i), "string", (*list)[i]);
    out->emplace_back(View((*list)[i]));
  }
  return OkStatus();
}

}  // namespace gpusched::json
