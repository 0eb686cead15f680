// File: dra.h
//
// The DRA kind (nodes labelled nvidia-dra): pods get devices through ResourceClaims, which
// kube-scheduler's DynamicResources plugin allocates; gpusched's DRA planner (dra_planner.h)
// judges the claims beside it. As a kind it adds only the mode gate: it fits every ready node of
// its mode and books nothing itself (the claims' devices are booked from their allocations).
#pragma once

#include <memory>

#include "gpusched/placement/kind.h"

namespace gpusched::placement {

std::unique_ptr<Kind> MakeDraKind();

}  // namespace gpusched::placement
