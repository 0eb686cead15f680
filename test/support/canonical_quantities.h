// File: canonical_quantities.h
//
// What the API server does to every quantity it stores: it writes it back in canonical form
// (apimachinery resource.Quantity.String(): "8000" becomes "8k", "1024Mi" "1Gi", "1.5" "1500m"),
// keeping the suffix family it was written in. The in-process API server applies this to every
// object it stores, and tests use it to turn a cluster written with plain integers into the one a
// real cluster returns.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <string_view>

namespace gpusched::testing {

// Returns `text` in canonical form; text that is not a quantity, or finer than a milli unit, is
// returned unchanged.
std::string CanonicalQuantity(std::string_view text);

// Rewrites, in place, the quantities of one object of `kind` (Pod, Node, ResourceSlice,
// ResourceClaim): container resources, node capacity and allocatable, device capacities and
// counters, claim capacity requests.
void CanonicalizeObject(std::string_view kind, rapidjson::Value* object, rapidjson::Document::AllocatorType& a);

// Returns a Kubernetes List with every item canonicalized (items carry their kind).
std::string CanonicalizeList(std::string_view list_json);

}  // namespace gpusched::testing
