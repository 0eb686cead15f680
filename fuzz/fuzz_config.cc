// Fuzz target: the YAML configuration file.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gpusched/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)gpusched::config::ParseConfig(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
