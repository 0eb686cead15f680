// File: topology.cc
//
// Reading `nvidia-smi topo -m`: terminal escapes stripped, the GPU columns found in the header,
// each GPU row's cells read as NVLink counts or same-PCIe-switch peers, then nvidia-smi's indices
// translated to the GPUs' own.
#include "gpusched/agent/topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <sstream>
#include <string>

namespace gpusched::agent {
namespace {

// `text` without terminal escapes (ESC [ ... letter).
std::string WithoutEscapes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\x1b') {
      out += text[i];
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '[') ++i;
    while (i + 1 < text.size() && !std::isalpha(static_cast<unsigned char>(text[i + 1]))) ++i;
    ++i;  // the final letter
  }
  return out;
}

std::vector<std::string> Words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The index in "GPU3", or -1 for any other word.
int GpuIndex(std::string_view word) {
  if (!word.starts_with("GPU") || word.size() == 3) return -1;
  int index = -1;
  auto r = std::from_chars(word.data() + 3, word.data() + word.size(), index);
  return r.ec == std::errc() && r.ptr == word.data() + word.size() ? index : -1;
}

bool SameSwitch(std::string_view cell) { return cell == "PIX" || cell == "PXB"; }

}  // namespace

StatusOr<std::map<int, GpuLinks>> ParseTopologyMatrix(std::string_view text) {
  std::istringstream in(WithoutEscapes(text));
  std::vector<int> columns;  // the GPU index of each matrix column; -1 for a NIC's
  std::map<int, GpuLinks> out;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> w = Words(line);
    if (w.empty()) continue;
    if (columns.empty()) {
      if (GpuIndex(w[0]) < 0) continue;  // the header is the first line that starts with a GPU column
      for (const std::string& word : w) {
        if (word == "CPU") break;
        columns.push_back(GpuIndex(word));
      }
      continue;
    }
    int row = GpuIndex(w[0]);
    if (row < 0) continue;
    if (w.size() < columns.size() + 1) {
      return InvalidArgumentError(fmt::format("nvidia-smi topo -m: row {} has {} cells for {} columns", w[0], w.size() - 1, columns.size()));
    }
    GpuLinks& links = out[row];
    for (size_t c = 0; c < columns.size(); ++c) {
      const std::string& cell = w[c + 1];
      if (columns[c] < 0 || columns[c] == row) continue;
      if (cell.starts_with("NV")) links.nvlink.push_back(columns[c]);
      if (SameSwitch(cell)) links.pcie.push_back(columns[c]);
    }
  }
  if (columns.empty()) return InvalidArgumentError("nvidia-smi topo -m: no header names a GPU column (GPU0 ...)");
  return out;
}

void AttachPeers(const std::map<int, GpuLinks>& links, std::vector<PhysicalGpu>* gpus) {
  std::map<int, int> index_of;  // nvidia-smi index -> index
  for (const PhysicalGpu& g : *gpus) index_of[g.smi_index] = g.index;
  auto translate = [&](const std::vector<int>& smi, std::vector<int>* into) {
    into->clear();
    for (int s : smi) {
      if (auto it = index_of.find(s); it != index_of.end()) into->push_back(it->second);
    }
    std::sort(into->begin(), into->end());
  };
  for (PhysicalGpu& g : *gpus) {
    auto it = links.find(g.smi_index);
    if (it == links.end()) continue;
    translate(it->second.nvlink, &g.nvlink_peers);
    translate(it->second.pcie, &g.pcie_peers);
  }
}

}  // namespace gpusched::agent
