// File: nvml.cc
//
// NVML without a build dependency: libnvidia-ml opened with dlopen, the C ABI structs it needs
// declared here, optional symbols allowed to be missing, and each device read as nvidia_smi.cc
// reads it (identity, memory, MIG mode, ECC and row-remap health, processes).
#include "gpusched/agent/nvml.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>

namespace gpusched::agent {
namespace {

// The parts of nvml.h the agent uses (NVML's C ABI: these layouts are fixed by their versions).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kInsufficientSize = 7;
constexpr int kUncorrected = 1;      // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int kVolatileEcc = 0;      // NVML_VOLATILE_ECC
// NVML_VALUE_NOT_AVAILABLE: what a process's usedGpuMemory reads when NVML cannot tell.
constexpr unsigned long long kValueNotAvailable = ~0ull;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlPciInfo_t {  // _v3
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct nvmlProcessInfo_t {  // _v2, read by GetComputeRunningProcesses_v3
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
};

// The library, and the functions looked up in it.
struct Nvml {
  void* handle = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*count)(unsigned int*) = nullptr;
  nvmlReturn_t (*by_index)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*minor)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*ecc)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*remapped)(nvmlDevice_t, unsigned int*, unsigned int*, unsigned int*, unsigned int*) = nullptr;
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*) = nullptr;
  nvmlReturn_t (*mig)(nvmlDevice_t, unsigned int*, unsigned int*) = nullptr;

  ~Nvml() {
    if (handle != nullptr) dlclose(handle);
  }
};

template <typename F>
bool Find(void* handle, const char* symbol, F* out) {
  *out = reinterpret_cast<F>(dlsym(handle, symbol));
  return *out != nullptr;
}

Status Load(const std::string& library, Nvml* n) {
  n->handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (n->handle == nullptr) return NotFoundError(fmt::format("NVML {}: {}", library, dlerror()));
  bool ok = Find(n->handle, "nvmlInit_v2", &n->init) && Find(n->handle, "nvmlShutdown", &n->shutdown) &&
            Find(n->handle, "nvmlDeviceGetCount_v2", &n->count) && Find(n->handle, "nvmlDeviceGetHandleByIndex_v2", &n->by_index) &&
            Find(n->handle, "nvmlDeviceGetMinorNumber", &n->minor) && Find(n->handle, "nvmlDeviceGetUUID", &n->uuid) &&
            Find(n->handle, "nvmlDeviceGetName", &n->name) && Find(n->handle, "nvmlDeviceGetMemoryInfo", &n->memory) &&
            Find(n->handle, "nvmlDeviceGetPciInfo_v3", &n->pci);
  if (!ok) return NotFoundError(fmt::format("NVML {}: a function the agent needs is missing ({})", library, dlerror()));
  // Optional: older drivers lack some; their absence is no evidence.
  Find(n->handle, "nvmlDeviceGetTotalEccErrors", &n->ecc);
  Find(n->handle, "nvmlDeviceGetRemappedRows", &n->remapped);
  Find(n->handle, "nvmlDeviceGetComputeRunningProcesses_v3", &n->processes);
  Find(n->handle, "nvmlDeviceGetMigMode", &n->mig);
  return OkStatus();
}

// Health by nvidia_smi.h's rules, from what NVML supports on this GPU.
std::string Unhealthy(const Nvml& n, nvmlDevice_t d) {
  std::vector<std::string> why;
  unsigned long long uncorrected = 0;
  if (n.ecc != nullptr && n.ecc(d, kUncorrected, kVolatileEcc, &uncorrected) == kSuccess && uncorrected > 0) {
    why.push_back(fmt::format("{} volatile uncorrectable ECC errors", uncorrected));
  }
  unsigned int corr = 0, unc = 0, pending = 0, failed = 0;
  if (n.remapped != nullptr && n.remapped(d, &corr, &unc, &pending, &failed) == kSuccess) {
    if (pending != 0) why.push_back("a row remap is pending (reset the GPU)");
    if (failed != 0) why.push_back("a row remap failed");
  }
  return fmt::format("{}", fmt::join(why, "; "));
}

std::vector<GpuProcess> Processes(const Nvml& n, nvmlDevice_t d) {
  std::vector<GpuProcess> out;
  if (n.processes == nullptr) return out;
  std::vector<nvmlProcessInfo_t> infos(8);
  unsigned int count = static_cast<unsigned int>(infos.size());
  nvmlReturn_t r = n.processes(d, &count, infos.data());
  if (r == kInsufficientSize) {
    infos.resize(count + 8);
    count = static_cast<unsigned int>(infos.size());
    r = n.processes(d, &count, infos.data());
  }
  if (r != kSuccess) return out;
  for (unsigned int i = 0; i < count && i < infos.size(); ++i) {
    unsigned long long bytes = infos[i].usedGpuMemory;
    out.push_back(GpuProcess{.pid = infos[i].pid,
                             .used_mib = bytes == kValueNotAvailable ? std::nullopt : std::optional<int64_t>(static_cast<int64_t>(bytes >> 20))});
  }
  return out;
}

StatusOr<PhysicalGpu> ReadDevice(const Nvml& n, unsigned int i) {
  nvmlDevice_t d = nullptr;
  if (nvmlReturn_t r = n.by_index(i, &d); r != kSuccess) return UnavailableError(fmt::format("NVML GPU {}: handle: error {}", i, r));
  PhysicalGpu g;
  unsigned int minor = 0;
  if (nvmlReturn_t r = n.minor(d, &minor); r != kSuccess) return UnavailableError(fmt::format("NVML GPU {}: minor number: error {}", i, r));
  g.index = static_cast<int>(minor);
  g.smi_index = static_cast<int>(i);  // NVML enumerates in nvidia-smi's (PCI bus) order
  char text[96] = {};
  if (n.uuid(d, text, sizeof(text)) == kSuccess) g.uuid = text;
  if (n.name(d, text, sizeof(text)) == kSuccess) g.product = text;
  nvmlMemory_t mem{};
  if (n.memory(d, &mem) == kSuccess) {
    g.memory_mib = static_cast<int64_t>(mem.total >> 20);
    g.used_mib = static_cast<int64_t>(mem.used >> 20);
  }
  nvmlPciInfo_t pci{};
  if (n.pci(d, &pci) == kSuccess) g.pci_bus_id = std::string(pci.busId, strnlen(pci.busId, sizeof(pci.busId)));
  unsigned int current = 0, pending = 0;
  g.mig_enabled = n.mig != nullptr && n.mig(d, &current, &pending) == kSuccess && current == 1;
  g.health_reason = Unhealthy(n, d);
  g.healthy = g.health_reason.empty();
  g.processes = Processes(n, d);
  return g;
}

}  // namespace

StatusOr<std::vector<PhysicalGpu>> ReadNvml(const std::string& library) {
  Nvml n;
  GPUSCHED_RETURN_IF_ERROR(Load(library, &n));
  if (nvmlReturn_t r = n.init(); r != kSuccess) return UnavailableError(fmt::format("NVML init: error {}", r));
  std::vector<PhysicalGpu> out;
  unsigned int count = 0;
  Status status = OkStatus();
  if (nvmlReturn_t r = n.count(&count); r != kSuccess) status = UnavailableError(fmt::format("NVML device count: error {}", r));
  for (unsigned int i = 0; status.ok() && i < count; ++i) {
    StatusOr<PhysicalGpu> g = ReadDevice(n, i);
    if (g.ok()) {
      out.push_back(std::move(g).value());
    } else {
      status = g.status();
    }
  }
  n.shutdown();
  if (!status.ok()) return status;
  std::sort(out.begin(), out.end(), [](const PhysicalGpu& a, const PhysicalGpu& b) { return a.index < b.index; });
  return out;
}

}  // namespace gpusched::agent
