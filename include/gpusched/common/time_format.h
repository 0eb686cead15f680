// File: time_format.h
//
// Kubernetes timestamps (metav1.Time): RFC 3339 in UTC with whole seconds, "2026-12-02T10:00:00Z".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpusched {

// Formats Unix time `unix_ms` as metav1.Time writes it (seconds, truncated).
std::string FormatRfc3339(int64_t unix_ms);

// Parses an RFC 3339 time ("2026-12-02T10:00:00Z", fractions of a second and "+01:00" offsets
// too) into Unix milliseconds; nullopt if `text` is not one.
std::optional<int64_t> ParseRfc3339(std::string_view text);

}  // namespace gpusched
