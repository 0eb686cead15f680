// A stand-in for libnvidia-ml.so.1 with the functions the agent loads (agent/nvml.h), for tests on
// machines without GPUs: two H200s listed in reverse order of their minor numbers; minor 1 has
// two volatile uncorrectable ECC errors and MIG enabled; minor 0 runs one process of 80 GiB and one
// whose memory NVML cannot tell (NVML_VALUE_NOT_AVAILABLE).
#include <cstring>

extern "C" {

struct nvmlDevice_st {
  unsigned int minor;
};
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct nvmlProcessInfo_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
};

static nvmlDevice_st devices[2] = {{1}, {0}};
static const unsigned long long kMiB = 1ull << 20;

int nvmlInit_v2() { return 0; }
int nvmlShutdown() { return 0; }
int nvmlDeviceGetCount_v2(unsigned int* n) {
  *n = 2;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t* d) {
  if (i >= 2) return 2;
  *d = &devices[i];
  return 0;
}
int nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int* minor) {
  *minor = d->minor;
  return 0;
}
int nvmlDeviceGetUUID(nvmlDevice_t d, char* out, unsigned int n) {
  std::strncpy(out, d->minor == 0 ? "GPU-00000000-fake-0000-0000-000000000000" : "GPU-00000000-fake-0000-0000-000000000001", n);
  return 0;
}
int nvmlDeviceGetName(nvmlDevice_t, char* out, unsigned int n) {
  std::strncpy(out, "NVIDIA H200", n);
  return 0;
}
int nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  m->total = 143771 * kMiB;
  m->used = d->minor == 0 ? 81920 * kMiB : 0;
  m->free = m->total - m->used;
  return 0;
}
int nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* p) {
  std::memset(p, 0, sizeof(*p));
  std::strcpy(p->busId, d->minor == 0 ? "00000000:00:06.0" : "00000000:00:07.0");
  return 0;
}
int nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter, unsigned long long* count) {
  *count = type == 1 && counter == 0 && d->minor == 1 ? 2 : 0;
  return 0;
}
int nvmlDeviceGetRemappedRows(nvmlDevice_t, unsigned int* corr, unsigned int* unc, unsigned int* pending, unsigned int* failed) {
  *corr = *unc = *pending = *failed = 0;
  return 0;
}
int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int* count, nvmlProcessInfo_t* infos) {
  if (d->minor != 0) {
    *count = 0;
    return 0;
  }
  if (*count < 2) {
    *count = 2;
    return 7;
  }
  *count = 2;
  infos[0] = nvmlProcessInfo_t{4242, 81920 * kMiB, 0, 0};
  infos[1] = nvmlProcessInfo_t{4243, ~0ull, 0, 0};  // NVML_VALUE_NOT_AVAILABLE
  return 0;
}
int nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int* current, unsigned int* pending) {
  *current = *pending = d->minor == 1 ? 1 : 0;
  return 0;
}

}  // extern "C"
