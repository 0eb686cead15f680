// File: nvidia_smi.cc
//
// Reading `nvidia-smi -q -x`: each GPU's identity, memory, MIG mode and processes, and its health
// from whichever ECC counter layout the driver writes (DTD v11, v12, later), row remapping, retired
// pages and SRAM thresholds; an "N/A" counter is no evidence.
#include "gpusched/agent/nvidia_smi.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>

#include "gpusched/agent/xml_tree.h"

namespace gpusched::agent {
namespace {

// Reads the leading integer of `text` ("143771 MiB", "0"); nullopt for "N/A", "" and others.
std::optional<int64_t> Number(const std::string& text) {
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) != 0 || text[0] == '-')) return std::nullopt;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str()) return std::nullopt;
  return static_cast<int64_t>(v);
}

// The sum of the counts that are known; nullopt when neither is.
std::optional<int64_t> Plus(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a || !b) return a ? a : b;
  return *a + *b;
}

// DTD v11 (the 510 series and before): double_bit/total, or when it is absent or N/A the sum of the
// per-memory counters beside it (device_memory, register_file, l1_cache, ...).
std::optional<int64_t> DoubleBit(const XmlElement& counts) {
  const XmlElement* double_bit = counts.Child("double_bit");
  if (double_bit == nullptr) return std::nullopt;
  if (std::optional<int64_t> total = Number(double_bit->Text({"total"}))) return total;
  std::optional<int64_t> sum;
  for (const XmlElement& c : double_bit->children) {
    if (c.name != "total") sum = Plus(sum, Number(c.text));
  }
  return sum;
}

// Uncorrectable SRAM errors: sram_uncorrectable_parity + _secded (later drivers), else
// sram_uncorrectable (DTD v12, the 535 series).
std::optional<int64_t> Sram(const XmlElement& counts) {
  std::optional<int64_t> split = Plus(Number(counts.Text({"sram_uncorrectable_parity"})), Number(counts.Text({"sram_uncorrectable_secded"})));
  return split ? split : Number(counts.Text({"sram_uncorrectable"}));
}

// The volatile uncorrectable ECC errors of every layout the supported drivers write; a counter
// absent or N/A is no evidence.
void AddEccReasons(const XmlElement& gpu, std::vector<std::string>* why) {
  const XmlElement* ecc = gpu.Child("ecc_errors");
  const XmlElement* counts = ecc == nullptr ? nullptr : ecc->Child("volatile");
  if (counts == nullptr) return;
  int64_t dram = Number(counts->Text({"dram_uncorrectable"})).value_or(0);
  int64_t sram = Sram(*counts).value_or(0);
  int64_t double_bit = DoubleBit(*counts).value_or(0);
  if (dram > 0) why->push_back(fmt::format("{} volatile uncorrectable DRAM ECC errors", dram));
  if (sram > 0) why->push_back(fmt::format("{} volatile uncorrectable SRAM ECC errors", sram));
  if (double_bit > 0) why->push_back(fmt::format("{} volatile double-bit (uncorrectable) ECC errors", double_bit));
}

// Why the GPU's memory cannot be trusted (see nvidia_smi.h), or "".
std::string Unhealthy(const XmlElement& gpu) {
  std::vector<std::string> why;
  AddEccReasons(gpu, &why);
  if (gpu.Text({"ecc_errors", "aggregate", "sram_threshold_exceeded"}) == "Yes") why.push_back("SRAM error threshold exceeded");
  if (gpu.Text({"ecc_errors", "unrepairable_memory"}) == "Yes") why.push_back("unrepairable memory");
  if (gpu.Text({"remapped_rows", "remapped_row_pending"}) == "Yes") why.push_back("a row remap is pending (reset the GPU)");
  if (gpu.Text({"remapped_rows", "remapped_row_failure"}) == "Yes") why.push_back("a row remap failed");
  if (gpu.Text({"retired_pages", "pending_retirement"}) == "Yes") why.push_back("pages are pending retirement");
  return fmt::format("{}", fmt::join(why, "; "));
}

std::vector<GpuProcess> Processes(const XmlElement& gpu) {
  std::vector<GpuProcess> out;
  const XmlElement* list = gpu.Child("processes");
  if (list == nullptr) return out;
  for (const XmlElement* p : list->Children("process_info")) {
    out.push_back(GpuProcess{.pid = Number(p->Text({"pid"})).value_or(0), .name = p->Text({"process_name"}),
                             .used_mib = Number(p->Text({"used_memory"}))});
  }
  return out;
}

StatusOr<PhysicalGpu> ReadGpu(const XmlElement& g) {
  PhysicalGpu gpu;
  gpu.pci_bus_id = g.attributes.contains("id") ? g.attributes.at("id") : g.Text({"pci", "pci_bus_id"});
  std::optional<int64_t> minor = Number(g.Text({"minor_number"}));
  if (!minor || *minor < 0 || *minor > 1023) {
    return InvalidArgumentError(fmt::format("GPU {}: minor_number \"{}\" is not an index 0-1023", gpu.pci_bus_id, g.Text({"minor_number"})));
  }
  gpu.index = static_cast<int>(*minor);
  gpu.uuid = g.Text({"uuid"});
  if (!gpu.uuid.starts_with("GPU-")) return InvalidArgumentError(fmt::format("GPU {}: uuid \"{}\" is not a GPU UUID", gpu.pci_bus_id, gpu.uuid));
  gpu.product = g.Text({"product_name"});
  gpu.memory_mib = Number(g.Text({"fb_memory_usage", "total"})).value_or(0);
  gpu.used_mib = Number(g.Text({"fb_memory_usage", "used"})).value_or(0);
  gpu.mig_enabled = g.Text({"mig_mode", "current_mig"}) == "Enabled";
  gpu.health_reason = Unhealthy(g);
  gpu.healthy = gpu.health_reason.empty();
  gpu.processes = Processes(g);
  return gpu;
}

}  // namespace

StatusOr<std::vector<PhysicalGpu>> ParseNvidiaSmiXml(std::string_view xml) {
  GPUSCHED_ASSIGN_OR_RETURN(XmlElement root, ParseXml(xml));
  if (root.name != "nvidia_smi_log") {
    return InvalidArgumentError(fmt::format("root element <{}>: want <nvidia_smi_log> (nvidia-smi -q -x)", root.name));
  }
  std::vector<PhysicalGpu> out;
  for (const XmlElement* g : root.Children("gpu")) {
    GPUSCHED_ASSIGN_OR_RETURN(PhysicalGpu gpu, ReadGpu(*g));
    gpu.smi_index = static_cast<int>(out.size());
    out.push_back(std::move(gpu));
  }
  std::sort(out.begin(), out.end(), [](const PhysicalGpu& a, const PhysicalGpu& b) { return a.index < b.index; });
  return out;
}

}  // namespace gpusched::agent
