// File: cel.h
//
// The subset of CEL that DRA device selectors use (shared/specs/dra.md §3), with Kubernetes'
// semantics: one variable `device` with `driver`, `attributes` and `capacity` (maps of domain to
// maps of id), `allowMultipleAllocations`; the Quantity and Semver libraries; string functions
// (`matches` is RE2, unanchored); `has()`, `in`, optional `.?`/`orValue`, `exists`/`all`/
// `exists_one`/`map`/`filter` on lists and maps, `cel.bind`, `includes`.
//
// Semantics that decide allocations, as upstream:
//   - `device.attributes["unknown.domain"]` is an empty map; a missing key in a domain is a
//     runtime error ("no such key"), which aborts the pod's allocation (not "no match");
//   - `&&`/`||` absorb errors commutatively (`false && error` and `error && false` are false);
//   - `==` across types is false, not an error; int/uint/double compare numerically;
//   - the result must be a bool; evaluation costs at most 1,000,000 steps.
//
// Compile once, evaluate many times: a Program is immutable and may be shared across threads.
//
// The pieces, in dra/cel/: value.h (values and the rules operators share), lexer.h and parser.h
// (text to ast.h's tree, calls resolved against builtins.h), evaluator.h and operators.h (the
// walk), device_maps.h (`device`), and the function libraries: builtins.h (standard, strings),
// quantity.h, semver.h.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/common/status.h"
#include "gpusched/dra/cel/device_maps.h"
#include "gpusched/dra/cel/semver.h"
#include "gpusched/dra/types.h"

namespace gpusched::dra::cel {

inline constexpr size_t kMaxExpressionBytes = 10 * 1024;
inline constexpr int64_t kMaxCost = 1'000'000;

class Program;
using ProgramPtr = std::shared_ptr<const Program>;

// Parses `expression`. Errors: InvalidArgument naming the position and what was expected, for
// text outside the subset, longer than kMaxExpressionBytes, or using an unknown function.
StatusOr<ProgramPtr> Compile(std::string_view expression);

// Evaluates a compiled selector for one device. Errors: InvalidArgument with the CEL runtime
// error ("no such key: index", "no matching overload for ...", "must evaluate to bool").
StatusOr<bool> Evaluate(const Program& program, const DeviceView& device);

// Compiled programs by expression text; thread-safe. Compile errors are cached too.
class ProgramCache {
 public:
  StatusOr<ProgramPtr> Get(const std::string& expression);
  size_t size() const;

 private:
  mutable Mutex mu_;
  std::unordered_map<std::string, StatusOr<ProgramPtr>> programs_ GPUSCHED_GUARDED_BY(mu_);
};

}  // namespace gpusched::dra::cel
