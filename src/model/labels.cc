// File: labels.cc
//
// Label selector matching: every matchLabels entry equal and every expression (In, NotIn, Exists,
// DoesNotExist) holding; an expression with an unknown operator refuses nothing.
#include "gpusched/model/labels.h"

#include <algorithm>

namespace gpusched {

bool LabelSelector::Matches(const Labels& labels) const {
  for (const auto& [key, value] : match_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  for (const Requirement& r : expressions) {
    auto it = labels.find(r.key);
    bool in = it != labels.end() && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    if (r.op == "In" && !in) return false;
    if (r.op == "NotIn" && in) return false;
    if (r.op == "Exists" && it == labels.end()) return false;
    if (r.op == "DoesNotExist" && it != labels.end()) return false;
  }
  return true;
}

}  // namespace gpusched
