// File: mig.cc
//
// MIG as a partitionable device: nvidia-smi's -lgip, -lgipp and -lgi tables read into profiles,
// placements and instances, and a GPU's ResourceSlice built from them (one counter set, the full
// GPU, one device per placement) with NVIDIA DRA driver names.
#include "gpusched/dra/mig.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>

#include "gpusched/common/quantity.h"

namespace gpusched::dra {
namespace {

constexpr int64_t kMilli = 1000;
constexpr int64_t kMiB = 1024 * 1024;

// The words of a table row, without the "|" borders.
std::vector<std::string> Words(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  for (std::string w; in >> w;) {
    if (w != "|") out.push_back(w);
  }
  return out;
}

bool Int(std::string_view s, int64_t* out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

Status Bad(std::string_view command, std::string_view line) {
  return InvalidArgumentError(fmt::format("nvidia-smi mig {}: cannot read \"{}\"", command, line));
}

std::string WithoutDots(std::string s) {
  std::erase_if(s, [](char c) { return c == '.' || c == '+'; });  // a DNS label: 1g.18gb+me -> 1g18gbme
  return s;
}

}  // namespace

StatusOr<std::vector<MigProfile>> ParseMigProfileTable(std::string_view lgip, int gpu) {
  std::vector<MigProfile> profiles;
  // -lgip: a profile's first row "<gpu> MIG <name> <id> <free>/<total> <GiB> <P2P> <SM> <DEC> <ENC>",
  // its second row "<CE> <JPEG> <OFA>".
  std::istringstream in{std::string(lgip)};
  bool want_second_row = false;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> w = Words(line);
    if (w.size() == 10 && w[1] == "MIG") {
      int64_t g = 0, id = 0;
      MigProfile p{.name = w[2]};
      // GiB with decimals ("17.62"): read exactly, as milli-GiB.
      StatusOr<int64_t> milli_gib = ParseQuantityMilli(w[5]);
      if (!milli_gib.ok() || *milli_gib < 0) return Bad("-lgip", line);
      if (!Int(w[0], &g) || !Int(w[3], &id) || !Int(w[7], &p.multiprocessors) || !Int(w[8], &p.decoders) ||
          !Int(w[9], &p.encoders)) {
        return Bad("-lgip", line);
      }
      want_second_row = g == gpu;
      if (g != gpu) continue;
      p.id = static_cast<int>(id);
      p.memory_mib = (*milli_gib * 1024 + 500) / 1000;  // to the nearest MiB
      profiles.push_back(std::move(p));
    } else if (want_second_row && w.size() == 3) {
      MigProfile& p = profiles.back();
      if (!Int(w[0], &p.copy_engines) || !Int(w[1], &p.jpeg_engines) || !Int(w[2], &p.ofa_engines)) return Bad("-lgip", line);
      want_second_row = false;
    }
  }
  return profiles;
}

StatusOr<std::vector<MigProfile>> ParseMigProfiles(std::string_view lgip, std::string_view lgipp, int gpu) {
  GPUSCHED_ASSIGN_OR_RETURN(std::vector<MigProfile> profiles, ParseMigProfileTable(lgip, gpu));
  // -lgipp: "GPU <gpu> Profile ID <id> Placements: {<start>,...}:<size>" ("Placement :" for one).
  std::istringstream pin{std::string(lgipp)};
  for (std::string line; std::getline(pin, line);) {
    std::vector<std::string> w = Words(line);
    if (w.size() < 6 || w[0] != "GPU") continue;
    int64_t g = 0, id = 0;
    size_t open = line.find('{'), close = line.find("}:");
    if (!Int(w[1], &g) || !Int(w[4], &id) || open == std::string::npos || close == std::string::npos) return Bad("-lgipp", line);
    if (g != gpu) continue;
    auto p = std::find_if(profiles.begin(), profiles.end(), [&](const MigProfile& x) { return x.id == id; });
    if (p == profiles.end()) continue;
    int64_t size = 0;
    if (!Int(std::string_view(line).substr(close + 2), &size) || size <= 0) return Bad("-lgipp", line);
    p->slices = static_cast<int>(size);
    std::istringstream starts(line.substr(open + 1, close - open - 1));
    for (std::string s; std::getline(starts, s, ',');) {
      int64_t start = 0;
      if (!Int(s, &start) || start < 0) return Bad("-lgipp", line);
      p->starts.push_back(static_cast<int>(start));
    }
  }
  for (const MigProfile& p : profiles) {
    if (p.starts.empty()) return InvalidArgumentError(fmt::format("MIG profile {} (id {}) has no placements", p.name, p.id));
  }
  return profiles;
}

StatusOr<std::map<int, std::vector<MigInstance>>> ParseMigInstances(std::string_view lgi) {
  std::map<int, std::vector<MigInstance>> out;
  // -lgi: "<gpu> MIG <name> <profile id> <instance id> <start>:<size>".
  std::istringstream in{std::string(lgi)};
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> w = Words(line);
    if (w.size() != 6 || w[1] != "MIG") continue;
    int64_t g = 0, profile = 0, id = 0, start = 0, size = 0;
    size_t colon = w[5].find(':');
    if (!Int(w[0], &g) || !Int(w[3], &profile) || !Int(w[4], &id) || colon == std::string::npos ||
        !Int(std::string_view(w[5]).substr(0, colon), &start) || !Int(std::string_view(w[5]).substr(colon + 1), &size) ||
        g < 0 || start < 0 || size <= 0) {
      return Bad("-lgi", line);
    }
    out[static_cast<int>(g)].push_back(MigInstance{.profile = w[2],
                                                   .profile_id = static_cast<int>(profile),
                                                   .instance_id = static_cast<int>(id),
                                                   .start = static_cast<int>(start),
                                                   .size = static_cast<int>(size)});
  }
  return out;
}

ResourceSlice PartitionableGpuSlice(const std::string& node, const MigGpu& gpu, const std::vector<MigProfile>& profiles) {
  ResourceSlice slice{.name = fmt::format("{}-gpu.nvidia.com-{}", node, gpu.index),
                      .driver = "gpu.nvidia.com",
                      .pool = node,
                      .generation = 1,
                      .slice_count = 1,
                      .node_name = node};
  // The whole GPU: the largest profile's compute, all memory slices, the full framebuffer.
  const MigProfile* whole = nullptr;
  int memory_slices = 0;
  for (const MigProfile& p : profiles) {
    if (whole == nullptr || p.multiprocessors > whole->multiprocessors) whole = &p;
    for (int start : p.starts) memory_slices = std::max(memory_slices, start + p.slices);
  }
  std::string set = fmt::format("gpu-{}-counter-set", gpu.index);
  auto compute = [](const MigProfile& p) {
    return std::map<std::string, int64_t>{{"multiprocessors", p.multiprocessors * kMilli}, {"copy-engines", p.copy_engines * kMilli},
                                          {"decoders", p.decoders * kMilli},         {"encoders", p.encoders * kMilli},
                                          {"jpeg-engines", p.jpeg_engines * kMilli}, {"ofa-engines", p.ofa_engines * kMilli}};
  };
  CounterSet counters{.name = set, .counters_milli = whole != nullptr ? compute(*whole) : std::map<std::string, int64_t>{}};
  counters.counters_milli["memory"] = gpu.memory_mib * kMiB * kMilli;
  for (int i = 0; i < memory_slices; ++i) counters.counters_milli[fmt::format("memory-slice-{}", i)] = kMilli;
  slice.shared_counters.push_back(counters);

  auto common = [&](Device* d, std::string_view type) {
    d->attributes["type"] = AttributeValue{.kind = AttributeValue::Kind::kString, .text = std::string(type)};
    d->attributes["productName"] = AttributeValue{.kind = AttributeValue::Kind::kString, .text = gpu.product};
    d->attributes["uuid"] = AttributeValue{.kind = AttributeValue::Kind::kString, .text = gpu.uuid};
    if (!gpu.driver_version.empty()) {
      d->attributes["driverVersion"] = AttributeValue{.kind = AttributeValue::Kind::kVersion, .text = gpu.driver_version};
    }
  };
  Device full{.name = fmt::format("gpu-{}", gpu.index)};
  common(&full, "gpu");
  full.capacity["memory"] = Capacity{.value_milli = gpu.memory_mib * kMiB * kMilli, .text = fmt::format("{}Mi", gpu.memory_mib)};
  full.consumes_counters.push_back(CounterConsumption{.counter_set = set, .counters_milli = counters.counters_milli});
  slice.devices.push_back(std::move(full));

  for (const MigProfile& p : profiles) {
    for (int start : p.starts) {
      Device d{.name = fmt::format("gpu-{}-mig-{}-{}-{}", gpu.index, WithoutDots(p.name), p.id, start)};
      common(&d, "mig");
      d.attributes["profile"] = AttributeValue{.kind = AttributeValue::Kind::kString, .text = p.name};
      d.attributes["parentUUID"] = AttributeValue{.kind = AttributeValue::Kind::kString, .text = gpu.uuid};
      d.capacity["memory"] = Capacity{.value_milli = p.memory_mib * kMiB * kMilli, .text = fmt::format("{}Mi", p.memory_mib)};
      d.capacity["multiprocessors"] = Capacity{.value_milli = p.multiprocessors * kMilli};
      CounterConsumption use{.counter_set = set, .counters_milli = compute(p)};
      use.counters_milli["memory"] = p.memory_mib * kMiB * kMilli;
      for (int i = start; i < start + p.slices; ++i) use.counters_milli[fmt::format("memory-slice-{}", i)] = kMilli;
      d.consumes_counters.push_back(std::move(use));
      slice.devices.push_back(std::move(d));
    }
  }
  return slice;
}

}  // namespace gpusched::dra
