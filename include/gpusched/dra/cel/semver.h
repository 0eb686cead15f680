// File: semver.h
//
// Semantic versions (semver 2.0.0) as the Kubernetes CEL Semver library parses and orders them,
// and that library's functions (semver, isSemver, major/minor/patch, compareTo, isGreaterThan,
// isLessThan on versions).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/dra/cel/builtins.h"

namespace gpusched::dra::cel {

struct Semver {
  uint64_t major = 0, minor = 0, patch = 0;
  std::vector<std::string> pre;  // pre-release identifiers
  // Returns -1, 0 or 1 by semver precedence (build metadata ignored).
  int Compare(const Semver& other) const;
};

// Parses `text`; with `normalize`, a leading "v", missing minor/patch and leading zeros are
// accepted ("v1.2" is 1.2.0). Errors: InvalidArgument naming the text.
StatusOr<Semver> ParseSemver(std::string_view text, bool normalize = false);

// The library's functions, for the builtin table.
std::span<const NamedBuiltin> SemverFunctions();

}  // namespace gpusched::dra::cel
