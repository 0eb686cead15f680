// File: writer.h
//
// The one writer of gpusched's JSON answers: compact JSON into a std::string, with the commas,
// nesting and string escapes kept by the writer, never by hand; string_view keys and values,
// fixed-decimal numbers, and JSON written by another Writer spliced in. Every verb's answer goes
// through it (filter, prioritize, preempt, explain, defrag). It appends directly (an explain
// answer at 5,000 mGPU nodes is 5.6 MB), which RapidJSON's writer, tried first, did a third slower.
//
// Contract: the calls form one JSON value, nested at most kMaxDepth deep; a Key only inside an
// object, before each of its values. Breaking it is a programming error (assert). Not
// thread-safe: one per answer, or per part of one (RawElements).
#pragma once

#include <cassert>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpusched/json/json.h"

namespace gpusched::json {

class Writer {
 public:
  static constexpr int kMaxDepth = 64;

  // `reserve`: the bytes the answer is expected to take, to grow the buffer once.
  explicit Writer(size_t reserve = 0) { out_.reserve(reserve); }

  Writer& StartObject() { return Open('{', true); }
  Writer& EndObject() { return Close('}', true); }
  Writer& StartArray() { return Open('[', false); }
  Writer& EndArray() { return Close(']', false); }
  Writer& Key(std::string_view k) {
    KeyPrefix();
    AppendString(&out_, k);
    out_.push_back(':');
    return *this;
  }
  Writer& String(std::string_view s) {
    Prefix();
    AppendString(&out_, s);
    return *this;
  }
  // A string already checked to need no escaping (node names a memo of the request checked):
  // copied without looking at its bytes. REQUIRES: no '"', '\\' or control characters in `s`.
  Writer& CheckedString(std::string_view s) {
    Prefix();
    AppendQuoted(s);
    return *this;
  }
  // Key(k) for such a key. Same REQUIRES.
  Writer& CheckedKey(std::string_view k) {
    KeyPrefix();
    AppendQuoted(k);
    out_.push_back(':');
    return *this;
  }
  Writer& Int(int64_t v) { return Number(v); }
  Writer& Uint(uint64_t v) { return Number(v); }
  Writer& Bool(bool v) { return Literal(v ? "true" : "false"); }
  Writer& Null() { return Literal("null"); }
  // `v` with exactly `decimals` digits after the point (0.500000), so that answers compare as
  // text; null if `v` is not finite (JSON has no NaN). REQUIRES: 0 <= decimals <= 17.
  Writer& Fixed(double v, int decimals);
  // `v` in the fewest digits that read back as `v` (30, 12.5); null if not finite.
  Writer& Double(double v);
  // A parsed value, as compact JSON (a node object passed through unchanged).
  Writer& Value(const rapidjson::Value& v) {
    Prefix();
    AppendValue(&out_, v);
    return *this;
  }
  // One complete value written elsewhere (another Writer's Take()), as the next value here.
  Writer& Raw(std::string_view json) { return Literal(json); }
  // The elements of an array written by another Writer (its Take() without the brackets: "a,b"),
  // as the next elements of the array open here: for a long array written in two halves at once.
  // REQUIRES: an array is open here; `elements` is "" or comma-separated values.
  Writer& RawElements(std::string_view elements) {
    assert(depth_ > 0 && !IsObject());
    return elements.empty() ? *this : Literal(elements);
  }

  // Key(k) then the value; for the members of an object.
  Writer& Member(std::string_view k, std::string_view v) { return Key(k).String(v); }
  Writer& Member(std::string_view k, const char* v) { return Key(k).String(v); }
  Writer& Member(std::string_view k, const std::string& v) { return Key(k).String(v); }
  Writer& Member(std::string_view k, bool v) { return Key(k).Bool(v); }
  Writer& Member(std::string_view k, int v) { return Key(k).Int(v); }
  Writer& Member(std::string_view k, int64_t v) { return Key(k).Int(v); }
  Writer& Member(std::string_view k, uint64_t v) { return Key(k).Uint(v); }
  Writer& Member(std::string_view k, double v) { return Key(k).Double(v); }

  // The JSON written. REQUIRES: one complete value; the writer is not used afterwards.
  std::string Take() {
    assert(depth_ == 0 && !out_.empty());
    return std::move(out_);
  }
  // Take() followed by a newline: the shape of the answers people read with curl.
  std::string TakeLine() {
    out_.push_back('\n');
    return Take();
  }

 private:
  uint64_t Bit() const { return uint64_t{1} << (depth_ - 1); }
  bool IsObject() const { return (is_object_ & Bit()) != 0; }
  // Before a key: the comma after a sibling member.
  void KeyPrefix() {
    assert(depth_ > 0 && IsObject() && !after_key_);
    if ((has_value_ & Bit()) != 0) out_.push_back(',');
    has_value_ |= Bit();
    after_key_ = true;
  }
  // Before a value: the comma after a sibling, nothing after a key.
  void Prefix() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    assert(depth_ == 0 ? out_.empty() : !IsObject());
    if (depth_ == 0) return;
    if ((has_value_ & Bit()) != 0) out_.push_back(',');
    has_value_ |= Bit();
  }
  Writer& Literal(std::string_view text) {
    Prefix();
    out_.append(text);
    return *this;
  }
  template <typename Integer>
  Writer& Number(Integer v) {
    Prefix();
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, end);
    return *this;
  }
  void AppendQuoted(std::string_view s) {
    size_t at = out_.size();
    out_.resize(at + s.size() + 2);
    char* p = out_.data() + at;
    p[0] = '"';
    s.copy(p + 1, s.size());
    p[s.size() + 1] = '"';
  }
  Writer& Open(char c, bool object);
  Writer& Close(char c, bool object);

  std::string out_;
  int depth_ = 0;
  uint64_t has_value_ = 0;  // bit d-1: the container open at depth d holds a member already
  uint64_t is_object_ = 0;  // bit d-1: it is an object
  bool after_key_ = false;
};

}  // namespace gpusched::json
