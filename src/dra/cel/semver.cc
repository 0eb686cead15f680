// File: semver.cc
//
// Semantic versions: parsing (with `normalize`, a leading v, missing minor or patch and leading
// zeros accepted), semver 2.0.0 precedence including pre-release identifiers, and the Kubernetes
// CEL Semver library's functions.
#include "gpusched/dra/cel/semver.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <optional>

namespace gpusched::dra::cel {
namespace {

bool ParseNumber(std::string_view text, bool normalize, uint64_t* out) {
  if (text.empty()) return false;
  if (!normalize && text.size() > 1 && text[0] == '0') return false;
  auto r = std::from_chars(text.data(), text.data() + text.size(), *out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

}  // namespace

int Semver::Compare(const Semver& o) const {
  if (major != o.major) return major < o.major ? -1 : 1;
  if (minor != o.minor) return minor < o.minor ? -1 : 1;
  if (patch != o.patch) return patch < o.patch ? -1 : 1;
  if (pre.empty() || o.pre.empty()) return pre.empty() == o.pre.empty() ? 0 : pre.empty() ? 1 : -1;
  for (size_t i = 0; i < pre.size() && i < o.pre.size(); ++i) {
    uint64_t a = 0, b = 0;
    bool an = ParseNumber(pre[i], true, &a), bn = ParseNumber(o.pre[i], true, &b);
    if (an && bn) {
      if (a != b) return a < b ? -1 : 1;
    } else if (an != bn) {
      return an ? -1 : 1;
    } else if (pre[i] != o.pre[i]) {
      return pre[i] < o.pre[i] ? -1 : 1;
    }
  }
  if (pre.size() == o.pre.size()) return 0;
  return pre.size() < o.pre.size() ? -1 : 1;
}

StatusOr<Semver> ParseSemver(std::string_view text, bool normalize) {
  auto bad = [&] { return InvalidArgumentError(fmt::format("invalid semver: '{}'", text)); };
  std::string_view s = text;
  if (normalize && !s.empty() && (s[0] == 'v' || s[0] == 'V')) s.remove_prefix(1);
  std::string_view core = s.substr(0, s.find_first_of("-+"));
  std::string_view rest = s.substr(core.size());
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t dot = core.find('.', start);
    parts.push_back(core.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (parts.size() > 3 || (!normalize && parts.size() != 3)) return bad();
  Semver v;
  uint64_t* fields[] = {&v.major, &v.minor, &v.patch};
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!ParseNumber(parts[i], normalize, fields[i])) return bad();
  }
  if (!rest.empty() && rest[0] == '-') {
    std::string_view pre = rest.substr(1, rest.find('+') == std::string_view::npos ? std::string_view::npos : rest.find('+') - 1);
    rest.remove_prefix(1 + pre.size());
    for (size_t start = 0;;) {
      size_t dot = pre.find('.', start);
      std::string_view id = pre.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
      if (id.empty()) return bad();
      for (char c : id) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return bad();
      }
      bool numeric = std::all_of(id.begin(), id.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
      if (numeric && id.size() > 1 && id[0] == '0') return bad();
      v.pre.emplace_back(id);
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
  }
  if (!rest.empty()) {
    if (rest[0] != '+' || rest.size() == 1) return bad();
    for (char c : rest.substr(1)) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') return bad();
    }
  }
  return v;
}

namespace {

using T = Value::Type;

// semver(text) and isSemver(text), each with an optional `normalize` flag.
std::optional<StatusOr<Semver>> ParseArg(const CallArgs& c) {
  if (!(c.Arity(1) || (c.Arity(2) && c.Is(1, T::kBool))) || !c.Is(0, T::kString)) return std::nullopt;
  return ParseSemver(c.args[0].s, c.Arity(2) && c.args[1].b);
}

std::optional<Value> MakeSemver(const CallArgs& c) {
  std::optional<StatusOr<Semver>> v = ParseArg(c);
  if (!v) return std::nullopt;
  if (!v->ok()) return Value::Error(std::string(v->status().message()));
  return Value::SemverValue(std::move(*v).value());
}

std::optional<Value> IsSemver(const CallArgs& c) {
  std::optional<StatusOr<Semver>> v = ParseArg(c);
  if (!v) return std::nullopt;
  return Value::Bool(v->ok());
}

std::optional<int> OrderOf(const CallArgs& c) {
  if (!c.Arity(2) || !c.Is(0, T::kSemver) || !c.Is(1, T::kSemver)) return std::nullopt;
  return c.args[0].semver->Compare(*c.args[1].semver);
}

template <uint64_t Semver::*kField>
std::optional<Value> Component(const CallArgs& c) {
  if (!c.Arity(1) || !c.Is(0, T::kSemver)) return std::nullopt;
  return Value::Int(static_cast<int64_t>((*c.args[0].semver).*kField));
}

constexpr std::array kSemverFunctions = {
    NamedBuiltin{"semver", MakeSemver},
    NamedBuiltin{"isSemver", IsSemver},
    NamedBuiltin{"compareTo", CompareTo<OrderOf>},
    NamedBuiltin{"isGreaterThan", IsGreaterThan<OrderOf>},
    NamedBuiltin{"isLessThan", IsLessThan<OrderOf>},
    NamedBuiltin{"major", Component<&Semver::major>},
    NamedBuiltin{"minor", Component<&Semver::minor>},
    NamedBuiltin{"patch", Component<&Semver::patch>},
};

}  // namespace

std::span<const NamedBuiltin> SemverFunctions() { return kSemverFunctions; }

}  // namespace gpusched::dra::cel
