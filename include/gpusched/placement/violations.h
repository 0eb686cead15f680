// File: violations.h
//
// The rules a pod breaks, collected while its request is read (pod_request.h, each kind's
// Analyze): the reason a refusal gives lists them all, in the order they were found.
#pragma once

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

namespace gpusched::placement {

class Violations {
 public:
  template <typename... Args>
  void Add(fmt::format_string<Args...> f, Args&&... args) {
    list_.push_back(fmt::format(f, std::forward<Args>(args)...));
  }
  bool empty() const { return list_.empty(); }
  // Returns the violations joined by "; ".
  std::string Join() const { return fmt::format("{}", fmt::join(list_, "; ")); }

 private:
  std::vector<std::string> list_;
};

}  // namespace gpusched::placement
