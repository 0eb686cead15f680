// Fuzz target: the CEL selector parser and evaluator. Any input must compile or be refused with
// a Status, and a compiled program must evaluate to a bool or an error, never crash or hang
// (the cost limit bounds every evaluation).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gpusched/dra/cel.h"

namespace {

gpusched::dra::Device MakeDevice() {
  using gpusched::dra::AttributeValue;
  gpusched::dra::Device d{.name = "gpu-0"};
  d.attributes["type"] = AttributeValue{.kind = AttributeValue::Kind::kString, .text = "gpu"};
  d.attributes["index"] = AttributeValue{.kind = AttributeValue::Kind::kInt, .int_value = 3};
  d.attributes["driverVersion"] = AttributeValue{.kind = AttributeValue::Kind::kVersion, .text = "570.124.6"};
  d.attributes["resource.kubernetes.io/pcieRoot"] = AttributeValue{.kind = AttributeValue::Kind::kString, .text = "pci0000:15"};
  d.attributes["mig"] = AttributeValue{.kind = AttributeValue::Kind::kBool, .bool_value = false};
  d.capacity["memory"] = gpusched::dra::Capacity{.value_milli = int64_t{81559} * 1024 * 1024 * 1000};
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const gpusched::dra::Device device = MakeDevice();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto program = gpusched::dra::cel::Compile(text);
  if (!program.ok()) return 0;
  auto verdict = gpusched::dra::cel::Evaluate(**program, gpusched::dra::cel::DeviceView{.driver = "gpu.nvidia.com", .device = &device});
  (void)verdict;
  return 0;
}
