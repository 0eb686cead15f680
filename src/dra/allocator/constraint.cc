// File: constraint.cc
//
// A claim constraint as a stack of chosen values: a device of a request in scope needs the
// attribute (qualified, or bare in its driver's domain) equal to every value held (matchAttribute)
// or to none (distinctAttribute); other devices push an empty slot.
#include "gpusched/dra/allocator/constraint.h"

namespace gpusched::dra {

bool Constraint::InScope(const RequestData& request) const {
  if (spec_.requests.empty()) return true;
  for (const std::string& name : spec_.requests) {
    if (name == request.name || (request.is_sub && name == request.parent->name)) return true;
  }
  return false;
}

// The constrained attribute of `c`: the qualified key, or the bare key in the device's driver's
// domain.
const AttributeValue* Constraint::Lookup(const Candidate& c) const {
  const std::string& key = spec_.match_attribute.empty() ? spec_.distinct_attribute : spec_.match_attribute;
  const auto& attrs = c.device->attributes;
  if (auto it = attrs.find(key); it != attrs.end()) return &it->second;
  size_t slash = key.find('/');
  if (slash != std::string::npos && key.substr(0, slash) == c.id.driver) {
    if (auto it = attrs.find(key.substr(slash + 1)); it != attrs.end()) return &it->second;
  }
  return nullptr;
}

bool Constraint::Add(const RequestData& request, const Candidate& c) {
  if (!InScope(request)) {
    stack_.push_back(std::nullopt);
    return true;
  }
  const AttributeValue* v = Lookup(c);
  if (v == nullptr || v->kind == AttributeValue::Kind::kUnsupported) return false;
  for (const auto& held : stack_) {
    if (!held) continue;
    bool same = held->kind == v->kind && *held == *v;
    if (!spec_.match_attribute.empty() && !same) return false;
    if (!spec_.distinct_attribute.empty() && same) return false;
  }
  stack_.push_back(*v);
  return true;
}

}  // namespace gpusched::dra
