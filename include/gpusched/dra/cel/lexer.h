// File: lexer.h
//
// CEL's tokens: identifiers, int/uint/double literals (decimal or hex, uint with a u suffix),
// strings (single, double or triple quoted, raw with r"", every CEL escape, decoded to UTF-8) and
// punctuation; // comments and whitespace are skipped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpusched/common/status.h"

namespace gpusched::dra::cel {

enum class Tok { kEnd, kIdent, kInt, kUint, kDouble, kString, kPunct };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // identifier, punctuation, or decoded string
  int64_t i = 0;
  uint64_t u = 0;  // kInt: the magnitude (one past int64's max is allowed, for negation)
  double d = 0;
  size_t pos = 0;  // byte offset in the expression
};

class Lexer {
 public:
  // REQUIRES: src outlives the lexer.
  explicit Lexer(std::string_view src) : src_(src) {}

  // Reads the next token into *t (kEnd at the end). Errors: InvalidArgument "CEL syntax error at
  // offset N: ..." for an unterminated string, a bad escape, an out-of-range integer or an
  // unexpected character.
  Status Next(Token* t);

 private:
  Status LexString(char quote, bool raw, Token* t);
  Status LexEscape(std::string* out);
  Status LexNumber(Token* t);
  Status FinishInt(uint64_t v, size_t start, Token* t);
  void SkipSpace();

  std::string_view src_;
  size_t at_ = 0;
};

}  // namespace gpusched::dra::cel
