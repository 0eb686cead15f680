// File: pod_resources.cc
//
// pod_resources.h: proto3 wire format (varints and length-delimited fields) for the List call's
// response, and device IDs matched to GPUs by UUID, replica UUID or index.
#include "gpusched/agent/pod_resources.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <set>

namespace gpusched::agent {
namespace {

// A reader of one message's fields.
class Fields {
 public:
  explicit Fields(std::string_view data) : data_(data) {}
  bool done() const { return at_ == data_.size(); }
  // Reads the next field: its number, and its bytes when length-delimited (else skipped).
  Status Next(uint32_t* field, std::string_view* bytes, bool* delimited) {
    uint64_t key = 0;
    GPUSCHED_RETURN_IF_ERROR(Varint(&key));
    *field = static_cast<uint32_t>(key >> 3);
    uint32_t wire = key & 7;
    *delimited = wire == 2;
    uint64_t n = 0;
    switch (wire) {
      case 0:
        return Varint(&n);
      case 1:
        return Skip(8);
      case 5:
        return Skip(4);
      case 2:
        GPUSCHED_RETURN_IF_ERROR(Varint(&n));
        if (n > data_.size() - at_) return InvalidArgumentError(fmt::format("field {}: length {} beyond the message", *field, n));
        *bytes = data_.substr(at_, n);
        at_ += n;
        return OkStatus();
      default:
        return InvalidArgumentError(fmt::format("field {}: wire type {} not supported", *field, wire));
    }
  }

 private:
  Status Varint(uint64_t* out) {
    *out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ == data_.size()) return InvalidArgumentError("truncated varint");
      uint8_t b = static_cast<uint8_t>(data_[at_++]);
      *out |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return OkStatus();
    }
    return InvalidArgumentError("varint longer than 10 bytes");
  }
  Status Skip(size_t n) {
    if (n > data_.size() - at_) return InvalidArgumentError("truncated fixed-width field");
    at_ += n;
    return OkStatus();
  }

  std::string_view data_;
  size_t at_ = 0;
};

// Calls f(field, bytes) for each length-delimited field of `message`.
template <typename F>
Status EachDelimited(std::string_view message, std::string_view what, F&& f) {
  Fields fields(message);
  while (!fields.done()) {
    uint32_t field = 0;
    std::string_view bytes;
    bool delimited = false;
    Status s = fields.Next(&field, &bytes, &delimited);
    if (!s.ok()) return s.WithContext(std::string(what));
    if (delimited) GPUSCHED_RETURN_IF_ERROR(f(field, bytes));
  }
  return OkStatus();
}

void AppendVarint(std::string* out, uint64_t v) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    out->push_back(static_cast<char>(v != 0 ? b | 0x80 : b));
  } while (v != 0);
}

void AppendField(std::string* out, uint32_t field, std::string_view bytes) {
  AppendVarint(out, (static_cast<uint64_t>(field) << 3) | 2);
  AppendVarint(out, bytes.size());
  out->append(bytes);
}

// The GPU position a device ID names, or -1.
int GpuOf(std::string_view id, const std::vector<GpuDevice>& gpus) {
  std::string_view uuid = id.substr(0, id.find("::"));  // a shared replica: "<UUID>::<n>"
  for (size_t p = 0; p < gpus.size(); ++p) {
    if (!gpus[p].uuid.empty() && gpus[p].uuid == uuid) return static_cast<int>(p);
  }
  int index = -1;  // --device-id-strategy=index: "<index>", a shared replica "<index>::<n>"
  auto [end, ec] = std::from_chars(uuid.data(), uuid.data() + uuid.size(), index);
  if (ec != std::errc() || end != uuid.data() + uuid.size()) return -1;
  for (size_t p = 0; p < gpus.size(); ++p) {
    if (gpus[p].index == index) return static_cast<int>(p);
  }
  return -1;
}

}  // namespace

StatusOr<std::vector<ContainerDevices>> DecodeListPodResources(std::string_view message) {
  std::vector<ContainerDevices> out;
  Status s = EachDelimited(message, "ListPodResourcesResponse", [&](uint32_t field, std::string_view pod) {
    if (field != 1) return OkStatus();  // pod_resources
    ContainerDevices base;
    std::vector<std::string_view> containers;
    GPUSCHED_RETURN_IF_ERROR(EachDelimited(pod, "PodResources", [&](uint32_t f, std::string_view b) {
      if (f == 1) base.pod_name = b;
      if (f == 2) base.pod_namespace = b;
      if (f == 3) containers.push_back(b);
      return OkStatus();
    }));
    for (std::string_view c : containers) {
      ContainerDevices container = base;
      std::vector<std::string_view> devices;
      GPUSCHED_RETURN_IF_ERROR(EachDelimited(c, "ContainerResources", [&](uint32_t f, std::string_view b) {
        if (f == 1) container.container = b;
        if (f == 2) devices.push_back(b);
        return OkStatus();
      }));
      for (std::string_view d : devices) {
        ContainerDevices one = container;
        GPUSCHED_RETURN_IF_ERROR(EachDelimited(d, "ContainerDevices", [&](uint32_t f, std::string_view b) {
          if (f == 1) one.resource = b;
          if (f == 2) one.device_ids.emplace_back(b);
          return OkStatus();
        }));
        out.push_back(std::move(one));
      }
    }
    return OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

std::string EncodeListPodResources(const std::vector<ContainerDevices>& devices) {
  // pod -> container -> devices, in order of first appearance.
  std::vector<std::pair<std::pair<std::string, std::string>, std::vector<std::pair<std::string, std::string>>>> pods;
  for (const ContainerDevices& d : devices) {
    auto key = std::make_pair(d.pod_namespace, d.pod_name);
    auto it = std::find_if(pods.begin(), pods.end(), [&](const auto& p) { return p.first == key; });
    if (it == pods.end()) it = pods.insert(pods.end(), {key, {}});
    std::string one;
    AppendField(&one, 1, d.resource);
    for (const std::string& id : d.device_ids) AppendField(&one, 2, id);
    it->second.emplace_back(d.container, std::move(one));
  }
  std::string out;
  for (const auto& [key, containers] : pods) {
    std::string pod;
    AppendField(&pod, 1, key.second);
    AppendField(&pod, 2, key.first);
    for (const auto& [name, device] : containers) {
      std::string c;
      AppendField(&c, 1, name);
      AppendField(&c, 2, device);
      AppendField(&pod, 3, c);
    }
    AppendField(&out, 1, pod);
  }
  return out;
}

void AttachPods(const std::vector<ContainerDevices>& devices, std::vector<GpuDevice>* gpus) {
  std::vector<std::set<std::string>> pods(gpus->size());
  for (const ContainerDevices& d : devices) {
    if (d.resource != "nvidia.com/gpu" && d.resource != "nvidia.com/gpu.shared") continue;
    for (const std::string& id : d.device_ids) {
      int p = GpuOf(id, *gpus);
      if (p >= 0) pods[p].insert(d.pod_namespace + "/" + d.pod_name);
    }
  }
  for (size_t p = 0; p < gpus->size(); ++p) (*gpus)[p].pods = std::vector<std::string>(pods[p].begin(), pods[p].end());
}

}  // namespace gpusched::agent
