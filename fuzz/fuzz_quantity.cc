// Fuzz target: Kubernetes quantity parsing. Must never crash, and a value parsed as whole must
// agree with its milli value whenever both fit.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gpusched/common/quantity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto milli = gpusched::ParseQuantityMilli(text);
  auto whole = gpusched::ParseQuantityWhole(text);
  if (whole.ok() && milli.ok() && *milli != *whole * 1000) __builtin_trap();
  return 0;
}
