// File: gpu_links.cc
//
// The GPU link graphs and set choice of gpu_links.h, on 64-bit sets of GPU positions: a flood
// fill for connectedness, and connected sets grown one neighbour at a time.
#include "gpusched/placement/gpu_links.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>

namespace gpusched::placement {
namespace {

constexpr size_t kMaxGpus = 64;

GpuSet Bit(int p) { return GpuSet{1} << p; }

// The part of `set` reachable from position `from` over `graph` inside `set`.
GpuSet Reach(const std::vector<GpuSet>& graph, GpuSet set, int from) {
  GpuSet seen = Bit(from);
  GpuSet frontier = seen;
  while (frontier != 0) {
    int p = std::countr_zero(frontier);
    frontier &= frontier - 1;
    GpuSet next = graph[p] & set & ~seen;
    seen |= next;
    frontier |= next;
  }
  return seen;
}

// The largest connected part of `set` (the lowest positions first among equals).
GpuSet LargestPart(const std::vector<GpuSet>& graph, GpuSet set) {
  GpuSet best = 0;
  for (GpuSet part : Parts(graph, set)) {
    if (std::popcount(part) > std::popcount(best)) best = part;
  }
  return best;
}

// Peers by index turned into a graph over positions; false when a peer names no GPU of the node.
bool Graph(const std::vector<GpuDevice>& devices, const std::map<int, int>& position, bool nvlink,
           std::vector<GpuSet>* graph) {
  graph->assign(devices.size(), 0);
  for (size_t p = 0; p < devices.size(); ++p) {
    for (int peer : nvlink ? devices[p].nvlink_peers : devices[p].pcie_peers) {
      auto it = position.find(peer);
      if (it == position.end()) return false;
      if (it->second == static_cast<int>(p)) continue;
      (*graph)[p] |= Bit(it->second);
      (*graph)[it->second] |= Bit(static_cast<int>(p));  // links join both ways, as topo -m's matrix
    }
  }
  return true;
}

// Whether `graph` joins every pair of its positions.
bool Complete(const std::vector<GpuSet>& graph) {
  GpuSet all = graph.size() == kMaxGpus ? ~GpuSet{0} : Bit(static_cast<int>(graph.size())) - 1;
  for (size_t p = 0; p < graph.size(); ++p) {
    if ((graph[p] | Bit(static_cast<int>(p))) != all) return false;
  }
  return true;
}

bool Empty(const std::vector<GpuSet>& graph) {
  return std::all_of(graph.begin(), graph.end(), [](GpuSet s) { return s == 0; });
}

std::string Names(const std::vector<int>& indices, GpuSet set) {
  std::string out;
  for (; set != 0; set &= set - 1) {
    if (!out.empty()) out += '+';
    fmt::format_to(std::back_inserter(out), "GPU{}", indices[std::countr_zero(set)]);
  }
  return out;
}

}  // namespace

std::shared_ptr<const GpuLinks> LinksOf(const std::vector<GpuDevice>& devices) {
  if (devices.size() < 2 || devices.size() > kMaxGpus) return nullptr;
  std::map<int, int> position;
  for (size_t p = 0; p < devices.size(); ++p) position[devices[p].index] = static_cast<int>(p);
  auto links = std::make_shared<GpuLinks>();
  if (!Graph(devices, position, true, &links->nvlink) || !Graph(devices, position, false, &links->pcie)) return nullptr;
  links->islands = !Empty(links->nvlink) && !Complete(links->nvlink);
  if (!links->islands) links->nvlink.assign(devices.size(), 0);  // every set alike: nothing to prefer
  bool pcie_groups = !Empty(links->pcie) && !Complete(links->pcie);
  if (!links->islands && !pcie_groups) return nullptr;
  return links;
}

std::vector<GpuSet> Parts(const std::vector<GpuSet>& graph, GpuSet set) {
  std::vector<GpuSet> out;
  for (; set != 0; set &= ~out.back()) out.push_back(Reach(graph, set, std::countr_zero(set)));
  return out;
}

bool Connected(const std::vector<GpuSet>& graph, GpuSet set) {
  return set == 0 || Reach(graph, set, std::countr_zero(set)) == set;
}

int LargestConnected(const std::vector<GpuSet>& graph, GpuSet set) { return std::popcount(LargestPart(graph, set)); }

bool HoldsConnectedSet(const std::vector<GpuSet>& graph, GpuSet among, int k) {
  if (k <= 0) return false;  // as ConnectedSets, which finds none
  // A connected part of k or more GPUs holds a connected set of exactly k: the first k it reaches.
  for (GpuSet left = among; left != 0;) {
    GpuSet part = Reach(graph, left, std::countr_zero(left));
    if (std::popcount(part) >= k) return true;
    left &= ~part;
  }
  return false;
}

int LinksInside(const std::vector<GpuSet>& graph, GpuSet set) {
  int twice = 0;
  for (GpuSet s = set; s != 0; s &= s - 1) twice += std::popcount(graph[std::countr_zero(s)] & set);
  return twice / 2;
}

void ConnectedSets(const std::vector<GpuSet>& graph, GpuSet among, int k, size_t cap, std::vector<GpuSet>* out) {
  if (k <= 0 || std::popcount(among) < k) return;
  // Level by level: the connected sets of size n + 1 are those of size n with one neighbour added.
  std::vector<GpuSet> level;
  for (GpuSet s = among; s != 0; s &= s - 1) level.push_back(s & -s);
  for (int size = 1; size < k && !level.empty(); ++size) {
    std::vector<GpuSet> next;
    for (GpuSet set : level) {
      GpuSet border = 0;
      for (GpuSet s = set; s != 0; s &= s - 1) border |= graph[std::countr_zero(s)];
      for (border &= among & ~set; border != 0; border &= border - 1) next.push_back(set | (border & -border));
    }
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    // Intermediate levels are kept whole up to a bound (a set cut here could be the only one
    // that grows to k); only the answer is cut to `cap`.
    constexpr size_t kMaxLevel = 1 << 16;
    if (next.size() > kMaxLevel) next.resize(kMaxLevel);
    level = std::move(next);
  }
  if (level.size() > cap) level.resize(cap);
  out->insert(out->end(), level.begin(), level.end());
}

std::string DescribeSet(const GpuLinks& links, const std::vector<int>& indices, GpuSet set, GpuSet idle) {
  int k = std::popcount(set);
  std::string out;
  if (links.islands && k > 1 && Connected(links.nvlink, set)) {
    out = fmt::format("NVLink-connected {}", Names(indices, set));
  } else if (links.islands && k > 1) {
    out = fmt::format("{} not NVLink-connected: no connected set of {} was free", Names(indices, set), k);
  } else {
    out = Names(indices, set);
  }
  if (k > 1 && !links.islands) {
    int first = std::countr_zero(set);
    bool one_switch = (set & ~(links.pcie[first] | Bit(first))) == 0;
    out += one_switch ? ", behind one PCIe switch" : ", across PCIe switches";
  }
  if (links.islands) {
    GpuSet left = LargestPart(links.nvlink, idle & ~set);
    out += left == 0 ? "; no idle GPU left" : fmt::format("; largest NVLink-connected idle set left: {}", Names(indices, left));
  }
  return out;
}

}  // namespace gpusched::placement
