// File: writer.cc
//
// json::Writer's values and nesting; strings are escaped by json::AppendString.
#include "gpusched/json/writer.h"

#include <fmt/format.h>

#include <cmath>

namespace gpusched::json {

Writer& Writer::Open(char c, bool object) {
  Prefix();
  assert(depth_ < kMaxDepth);
  out_.push_back(c);
  ++depth_;
  has_value_ &= ~Bit();
  if (object) {
    is_object_ |= Bit();
  } else {
    is_object_ &= ~Bit();
  }
  return *this;
}

Writer& Writer::Close(char c, bool object) {
  assert(depth_ > 0 && IsObject() == object && !after_key_);
  (void)object;
  out_.push_back(c);
  --depth_;
  return *this;
}

Writer& Writer::Fixed(double v, int decimals) {
  if (!std::isfinite(v)) return Null();
  Prefix();
  fmt::format_to(std::back_inserter(out_), "{:.{}f}", v, decimals);
  return *this;
}

Writer& Writer::Double(double v) {
  if (!std::isfinite(v)) return Null();
  Prefix();
  fmt::format_to(std::back_inserter(out_), "{}", v);
  return *this;
}

}  // namespace gpusched::json
