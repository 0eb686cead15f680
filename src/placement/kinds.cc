// File: kinds.cc
//
// The registry: the built-in kinds made on first use, registered kinds appended, and two arrays
// indexed by the enums' values for constant-time lookups on the filter path.
#include "gpusched/placement/kinds.h"

#include <fmt/format.h>

#include <array>
#include <vector>

#include "gpusched/placement/kinds/dra.h"
#include "gpusched/placement/kinds/mgpu.h"
#include "gpusched/placement/kinds/whole_gpu.h"

namespace gpusched::placement {
namespace {

class Registry {
 public:
  Registry() {
    Add(MakeWholeGpuKind());
    Add(MakeDraKind());
    Add(MakeMgpuKind());
  }

  Status Register(std::unique_ptr<Kind> kind) {
    const DeviceKind& row = kind->row();
    if (!AddDeviceKind(row)) {
      return InvalidArgumentError(fmt::format("kind \"{}\": its mode, request kind or label is taken, or the table is full",
                                              row.label));
    }
    Add(std::move(kind));
    return OkStatus();
  }

  const Kind* ByRequest(RequestKind r) const { return by_request_[static_cast<size_t>(r)]; }
  const Kind* ByMode(NodeMode m) const { return by_mode_[static_cast<size_t>(m)]; }
  std::span<const Kind* const> all() const { return all_; }

 private:
  void Add(std::unique_ptr<Kind> kind) {
    const Kind* k = kind.get();
    by_request_[static_cast<size_t>(k->row().request)] = k;
    by_mode_[static_cast<size_t>(k->row().mode)] = k;
    all_.push_back(k);
    owned_.push_back(std::move(kind));
  }

  std::array<const Kind*, 256> by_request_{};
  std::array<const Kind*, 256> by_mode_{};
  std::vector<const Kind*> all_;
  std::vector<std::unique_ptr<Kind>> owned_;
};

Registry& TheRegistry() {
  static Registry registry;
  return registry;
}

}  // namespace

const Kind* KindFor(RequestKind request) { return TheRegistry().ByRequest(request); }
const Kind* KindFor(NodeMode mode) { return TheRegistry().ByMode(mode); }
std::span<const Kind* const> AllKinds() { return TheRegistry().all(); }
Status RegisterKind(std::unique_ptr<Kind> kind) { return TheRegistry().Register(std::move(kind)); }

}  // namespace gpusched::placement
