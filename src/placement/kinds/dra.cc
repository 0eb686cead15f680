// File: dra.cc
//
// The DRA kind: no resource of its own (claims-only pods are given to it by AnalyzePod), and the
// Kind defaults for everything else.
#include "gpusched/placement/kinds/dra.h"

namespace gpusched::placement {
namespace {

class DraKind final : public Kind {
 public:
  DraKind() : Kind(*KindOf(RequestKind::kDra)) {}

  bool Asks(const Pod& pod) const override { return false; }
  void Analyze(const Pod& pod, PodRequest* out, Violations* invalid, Violations* unplaceable) const override {}
};

}  // namespace

std::unique_ptr<Kind> MakeDraKind() { return std::make_unique<DraKind>(); }

}  // namespace gpusched::placement
