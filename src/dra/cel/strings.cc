// File: strings.cc
//
// The CEL string library as Kubernetes enables it (ext.Strings) plus matches (RE2, unanchored).
#include <fmt/format.h>
#include <re2/re2.h>

#include <array>
#include <string>

#include "gpusched/dra/cel/builtins.h"

namespace gpusched::dra::cel {
namespace {

using T = Value::Type;

// s.f(t) with two strings.
bool OnTwoStrings(const CallArgs& c) { return c.Arity(2) && c.Is(0, T::kString) && c.Is(1, T::kString); }
bool OnOneString(const CallArgs& c) { return c.Arity(1) && c.Is(0, T::kString); }

std::optional<Value> StartsWith(const CallArgs& c) {
  if (!OnTwoStrings(c)) return std::nullopt;
  return Value::Bool(c.args[0].s.starts_with(c.args[1].s));
}

std::optional<Value> EndsWith(const CallArgs& c) {
  if (!OnTwoStrings(c)) return std::nullopt;
  return Value::Bool(c.args[0].s.ends_with(c.args[1].s));
}

std::optional<Value> Contains(const CallArgs& c) {
  if (!OnTwoStrings(c)) return std::nullopt;
  return Value::Bool(c.args[0].s.find(c.args[1].s) != std::string::npos);
}

std::optional<Value> IndexOf(const CallArgs& c) {
  if (!OnTwoStrings(c)) return std::nullopt;
  size_t at = c.args[0].s.find(c.args[1].s);
  return Value::Int(at == std::string::npos ? -1 : static_cast<int64_t>(at));
}

std::optional<Value> LastIndexOf(const CallArgs& c) {
  if (!OnTwoStrings(c)) return std::nullopt;
  size_t at = c.args[0].s.rfind(c.args[1].s);
  return Value::Int(at == std::string::npos ? -1 : static_cast<int64_t>(at));
}

std::optional<Value> Split(const CallArgs& c) {
  if (!OnTwoStrings(c)) return std::nullopt;
  const std::string& s = c.args[0].s;
  const std::string& sep = c.args[1].s;
  ValueList parts;
  if (sep.empty()) {
    for (char ch : s) parts.push_back(Value::String(std::string(1, ch)));
    return Value::List(std::move(parts));
  }
  size_t start = 0;
  for (size_t at = s.find(sep); at != std::string::npos; at = s.find(sep, start)) {
    parts.push_back(Value::String(s.substr(start, at - start)));
    start = at + sep.size();
  }
  parts.push_back(Value::String(s.substr(start)));
  return Value::List(std::move(parts));
}

template <bool kLower>
std::optional<Value> ChangeCase(const CallArgs& c) {
  if (!OnOneString(c)) return std::nullopt;
  std::string out = c.args[0].s;
  for (char& ch : out) {
    if (kLower && ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    if (!kLower && ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
  }
  return Value::String(std::move(out));
}

std::optional<Value> Trim(const CallArgs& c) {
  if (!OnOneString(c)) return std::nullopt;
  const std::string& s = c.args[0].s;
  size_t b = s.find_first_not_of(" \t\n\r\f\v");
  if (b == std::string::npos) return Value::String("");
  return Value::String(s.substr(b, s.find_last_not_of(" \t\n\r\f\v") - b + 1));
}

std::optional<Value> Replace(const CallArgs& c) {
  if (!c.Arity(3) || !c.Is(0, T::kString) || !c.Is(1, T::kString) || !c.Is(2, T::kString)) return std::nullopt;
  const std::string& s = c.args[0].s;
  const std::string& from = c.args[1].s;
  if (from.empty()) return c.args[0];
  std::string out;
  size_t start = 0;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, start)) {
    out += s.substr(start, at - start);
    out += c.args[2].s;
    start = at + from.size();
  }
  out += s.substr(start);
  return Value::String(std::move(out));
}

// s.substring(begin[, end]) and s.charAt(i): code units, as the other string functions.
template <bool kCharAt>
std::optional<Value> Slice(const CallArgs& c) {
  if (!c.Is(0, T::kString) || c.args.size() < 2 || !c.Is(1, T::kInt)) return std::nullopt;
  const std::string& s = c.args[0].s;
  int64_t size = static_cast<int64_t>(s.size());
  int64_t b = c.args[1].i;
  int64_t e = kCharAt ? b + 1 : c.Arity(3) && c.Is(2, T::kInt) ? c.args[2].i : size;
  if (kCharAt && b == size) return Value::String("");
  if (b < 0 || e < b || e > size) return Value::Error(fmt::format("index out of range: {}", b));
  return Value::String(s.substr(static_cast<size_t>(b), static_cast<size_t>(e - b)));
}

std::optional<Value> Matches(const CallArgs& c) {
  if (!OnTwoStrings(c)) return std::nullopt;
  if (c.regex != nullptr) return Value::Bool(RE2::PartialMatch(c.args[0].s, *c.regex));
  RE2 re(c.args[1].s, RE2::Quiet);
  if (!re.ok()) return Value::Error(fmt::format("invalid regular expression '{}': {}", c.args[1].s, re.error()));
  return Value::Bool(RE2::PartialMatch(c.args[0].s, re));
}

constexpr std::array kStringsFunctions = {
    NamedBuiltin{"matches", Matches},
    NamedBuiltin{"startsWith", StartsWith},
    NamedBuiltin{"endsWith", EndsWith},
    NamedBuiltin{"contains", Contains},
    NamedBuiltin{"indexOf", IndexOf},
    NamedBuiltin{"lastIndexOf", LastIndexOf},
    NamedBuiltin{"split", Split},
    NamedBuiltin{"lowerAscii", ChangeCase<true>},
    NamedBuiltin{"upperAscii", ChangeCase<false>},
    NamedBuiltin{"trim", Trim},
    NamedBuiltin{"replace", Replace},
    NamedBuiltin{"substring", Slice<false>},
    NamedBuiltin{"charAt", Slice<true>},
};

}  // namespace

std::span<const NamedBuiltin> StringFunctions() { return kStringsFunctions; }

}  // namespace gpusched::dra::cel
