// File: kinds.h
//
// The registry of kinds (kind.h): the three built in (whole GPUs, mGPU shares, DRA claims) and
// any registered at startup. Lookups are by a pod's request kind or a node's mode, in constant
// time; the registry owns the kinds for the life of the process.
#pragma once

#include <memory>
#include <span>

#include "gpusched/common/status.h"
#include "gpusched/model/node_mode.h"
#include "gpusched/placement/kind.h"

namespace gpusched::placement {

// Returns the kind a request kind names, or nullptr for kNone.
const Kind* KindFor(RequestKind request);
// Returns the kind a node mode serves, or nullptr for kInvalid.
const Kind* KindFor(NodeMode mode);
// Every kind, in the order of the table of device kinds (DeviceKinds()).
std::span<const Kind* const> AllKinds();

// Adds `kind` and its row to the table of device kinds. Returns InvalidArgument, registering
// nothing, if its mode, request kind or label is taken or the table is full; the row's strings
// must outlive the process (literals). Not thread-safe:
// register before anything places a pod (at startup, or in a test before its server starts).
Status RegisterKind(std::unique_ptr<Kind> kind);

}  // namespace gpusched::placement
