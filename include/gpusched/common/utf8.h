// File: utf8.h
//
// UTF-8 encoding of one code point, for readers that decode escapes (CEL string literals, XML
// character references).
#pragma once

#include <cstdint>
#include <string>

namespace gpusched {

// Appends code point `cp` (at most 0x10FFFF) to *out as UTF-8.
void AppendUtf8(uint32_t cp, std::string* out);

}  // namespace gpusched
