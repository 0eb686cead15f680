// File: lexer.cc
//
// CEL tokenization: strings (quotes, triple quotes, raw, every escape decoded to UTF-8), numbers
// (hex, uint suffix, doubles, int64's one-past-max kept for negation), identifiers and punctuation;
// whitespace and // comments skipped.
#include "gpusched/dra/cel/lexer.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <limits>

#include "gpusched/common/utf8.h"

namespace gpusched::dra::cel {
namespace {

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

Status Lexer::LexString(char quote, bool raw, Token* t) {
  bool triple = src_.substr(at_, 2) == std::string(2, quote);
  if (triple) at_ += 2;
  std::string out;
  while (true) {
    if (at_ >= src_.size()) return InvalidArgumentError(fmt::format("CEL syntax error at offset {}: unterminated string", t->pos));
    char c = src_[at_];
    if (c == quote && (!triple || src_.substr(at_, 3) == std::string(3, quote))) {
      at_ += triple ? 3 : 1;
      break;
    }
    if (!triple && (c == '\n' || c == '\r')) {
      return InvalidArgumentError(fmt::format("CEL syntax error at offset {}: newline in string", at_));
    }
    ++at_;
    if (c != '\\' || raw) {
      out.push_back(c);
      continue;
    }
    GPUSCHED_RETURN_IF_ERROR(LexEscape(&out));
  }
  t->kind = Tok::kString;
  t->text = std::move(out);
  return OkStatus();
}

// After a backslash: appends the escaped character(s).
Status Lexer::LexEscape(std::string* out) {
  if (at_ >= src_.size()) return InvalidArgumentError("CEL syntax error: unterminated escape");
  char e = src_[at_++];
  switch (e) {
    case 'n': out->push_back('\n'); return OkStatus();
    case 't': out->push_back('\t'); return OkStatus();
    case 'r': out->push_back('\r'); return OkStatus();
    case 'a': out->push_back('\a'); return OkStatus();
    case 'b': out->push_back('\b'); return OkStatus();
    case 'f': out->push_back('\f'); return OkStatus();
    case 'v': out->push_back('\v'); return OkStatus();
    case '\\': case '\'': case '"': case '`': case '?': out->push_back(e); return OkStatus();
    case 'x': case 'u': case 'U': {
      size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
      if (at_ + n > src_.size()) return InvalidArgumentError("CEL syntax error: short escape");
      uint32_t cp = 0;
      auto r = std::from_chars(src_.data() + at_, src_.data() + at_ + n, cp, 16);
      if (r.ptr != src_.data() + at_ + n) return InvalidArgumentError("CEL syntax error: bad escape");
      at_ += n;
      AppendUtf8(cp, out);
      return OkStatus();
    }
    default:
      break;
  }
  if (e >= '0' && e <= '3' && at_ + 2 <= src_.size()) {
    uint32_t cp = 0;
    auto r = std::from_chars(src_.data() + at_ - 1, src_.data() + at_ + 2, cp, 8);
    if (r.ptr != src_.data() + at_ + 2) return InvalidArgumentError("CEL syntax error: bad octal escape");
    at_ += 2;
    out->push_back(static_cast<char>(cp));
    return OkStatus();
  }
  return InvalidArgumentError(fmt::format("CEL syntax error at offset {}: unknown escape \\{}", at_ - 1, e));
}

void Lexer::SkipSpace() {
  while (at_ < src_.size()) {
    char c = src_[at_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++at_;
    } else if (c == '/' && at_ + 1 < src_.size() && src_[at_ + 1] == '/') {
      while (at_ < src_.size() && src_[at_] != '\n') ++at_;
    } else {
      return;
    }
  }
}

Status Lexer::Next(Token* out) {
  SkipSpace();
  Token t;
  t.pos = at_;
  if (at_ >= src_.size()) {
    *out = std::move(t);
    return OkStatus();
  }
  char c = src_[at_];
  if ((c == 'r' || c == 'R') && at_ + 1 < src_.size() && (src_[at_ + 1] == '\'' || src_[at_ + 1] == '"')) {
    char q = src_[at_ + 1];
    at_ += 2;
    GPUSCHED_RETURN_IF_ERROR(LexString(q, /*raw=*/true, &t));
  } else if (c == '\'' || c == '"') {
    ++at_;
    GPUSCHED_RETURN_IF_ERROR(LexString(c, /*raw=*/false, &t));
  } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
    size_t start = at_;
    while (at_ < src_.size() && IsIdentChar(src_[at_])) ++at_;
    t.kind = Tok::kIdent;
    t.text = std::string(src_.substr(start, at_ - start));
  } else if (IsDigit(c) || (c == '.' && at_ + 1 < src_.size() && IsDigit(src_[at_ + 1]))) {
    GPUSCHED_RETURN_IF_ERROR(LexNumber(&t));
  } else {
    static constexpr std::string_view kTwo[] = {"&&", "||", "==", "!=", "<=", ">=", ".?"};
    t.kind = Tok::kPunct;
    for (std::string_view p : kTwo) {
      if (src_.substr(at_, 2) == p) t.text = std::string(p);
    }
    if (t.text.empty()) {
      if (std::string_view("()[]{}.,:?!<>+-*/%").find(c) == std::string_view::npos) {
        return InvalidArgumentError(fmt::format("CEL syntax error at offset {}: unexpected character '{}'", at_, c));
      }
      t.text = std::string(1, c);
    }
    at_ += t.text.size();
  }
  *out = std::move(t);
  return OkStatus();
}

Status Lexer::LexNumber(Token* t) {
  size_t start = at_;
  if (src_.substr(at_, 2) == "0x" || src_.substr(at_, 2) == "0X") {
    at_ += 2;
    size_t digits = at_;
    while (at_ < src_.size() && std::isxdigit(static_cast<unsigned char>(src_[at_]))) ++at_;
    uint64_t v = 0;
    auto r = std::from_chars(src_.data() + digits, src_.data() + at_, v, 16);
    if (r.ec != std::errc()) return InvalidArgumentError(fmt::format("CEL syntax error at offset {}: bad hex literal", start));
    return FinishInt(v, start, t);
  }
  bool is_double = false;
  while (at_ < src_.size() && IsDigit(src_[at_])) ++at_;
  if (at_ + 1 < src_.size() && src_[at_] == '.' && IsDigit(src_[at_ + 1])) {
    is_double = true;
    ++at_;
    while (at_ < src_.size() && IsDigit(src_[at_])) ++at_;
  }
  if (at_ < src_.size() && (src_[at_] == 'e' || src_[at_] == 'E')) {
    is_double = true;
    ++at_;
    if (at_ < src_.size() && (src_[at_] == '+' || src_[at_] == '-')) ++at_;
    while (at_ < src_.size() && IsDigit(src_[at_])) ++at_;
  }
  std::string text(src_.substr(start, at_ - start));
  if (is_double) {
    t->kind = Tok::kDouble;
    t->d = std::strtod(text.c_str(), nullptr);
    return OkStatus();
  }
  uint64_t v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v, 10);
  if (r.ec != std::errc()) return InvalidArgumentError(fmt::format("CEL syntax error at offset {}: integer out of range", start));
  return FinishInt(v, start, t);
}

Status Lexer::FinishInt(uint64_t v, size_t start, Token* t) {
  if (at_ < src_.size() && (src_[at_] == 'u' || src_[at_] == 'U')) {
    ++at_;
    t->kind = Tok::kUint;
    t->u = v;
    return OkStatus();
  }
  // -9223372036854775808 is parsed as negation of a literal one past int64's max.
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) {
    return InvalidArgumentError(fmt::format("CEL syntax error at offset {}: integer out of range", start));
  }
  t->kind = Tok::kInt;
  t->u = v;
  t->i = static_cast<int64_t>(v);
  return OkStatus();
}

}  // namespace gpusched::dra::cel
