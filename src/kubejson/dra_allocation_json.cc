// File: dra_allocation_json.cc
//
// An AllocationResult written as the API server stores it: device results (share id, consumed
// capacity, tolerations, binding conditions), configs, the nodeSelector and allocationTimestamp,
// quantities in canonical form.
#include "gpusched/kubejson/dra_allocation_json.h"

#include <fmt/format.h>

#include "gpusched/common/time_format.h"
#include "gpusched/json/json.h"

namespace gpusched::kubejson {
namespace {

using rapidjson::Value;
using namespace gpusched::dra;

}  // namespace

std::string FormatMilli(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return fmt::format("{}m", milli);
}

void AppendNodeSelector(std::string* out, const NodeSelector& s) {
  auto requirements = [&](std::string_view key, const std::vector<NodeSelectorRequirement>& rs) {
    *out += fmt::format(R"("{}":[)", key);
    for (size_t i = 0; i < rs.size(); ++i) {
      if (i > 0) *out += ',';
      *out += R"({"key":)";
      json::AppendString(out, rs[i].key);
      *out += R"(,"operator":)";
      json::AppendString(out, rs[i].op);
      if (!rs[i].values.empty()) {
        *out += R"(,"values":[)";
        for (size_t k = 0; k < rs[i].values.size(); ++k) {
          if (k > 0) *out += ',';
          json::AppendString(out, rs[i].values[k]);
        }
        *out += ']';
      }
      *out += '}';
    }
    *out += ']';
  };
  *out += R"({"nodeSelectorTerms":[)";
  for (size_t i = 0; i < s.terms.size(); ++i) {
    if (i > 0) *out += ',';
    *out += '{';
    bool exprs = !s.terms[i].match_expressions.empty();
    if (exprs) requirements("matchExpressions", s.terms[i].match_expressions);
    if (!s.terms[i].match_fields.empty()) {
      if (exprs) *out += ',';
      requirements("matchFields", s.terms[i].match_fields);
    }
    *out += '}';
  }
  *out += "]}";
}

namespace {

void AppendTolerations(std::string* out, const std::vector<DeviceToleration>& tolerations) {
  *out += R"(,"tolerations":[)";
  for (size_t k = 0; k < tolerations.size(); ++k) {
    const DeviceToleration& t = tolerations[k];
    if (k > 0) *out += ',';
    *out += '{';
    bool first = true;
    for (auto [key, value] : {std::pair<std::string_view, const std::string*>{"key", &t.key}, {"operator", &t.op},
                              {"value", &t.value}, {"effect", &t.effect}}) {
      if (value->empty()) continue;
      if (!first) *out += ',';
      first = false;
      json::AppendString(out, key);
      *out += ':';
      json::AppendString(out, *value);
    }
    if (t.toleration_seconds) *out += fmt::format(R"({}"tolerationSeconds":{})", first ? "" : ",", *t.toleration_seconds);
    *out += '}';
  }
  *out += ']';
}

void AppendDeviceResult(std::string* out, const DeviceResult& d) {
  *out += R"({"request":)";
  json::AppendString(out, d.request);
  *out += R"(,"driver":)";
  json::AppendString(out, d.id.driver);
  *out += R"(,"pool":)";
  json::AppendString(out, d.id.pool);
  *out += R"(,"device":)";
  json::AppendString(out, d.id.device);
  if (d.admin_access) *out += R"(,"adminAccess":true)";
  if (!d.tolerations.empty()) AppendTolerations(out, d.tolerations);
  for (const auto& [key, conditions] : {std::pair{"bindingConditions", &d.binding_conditions},
                                        std::pair{"bindingFailureConditions", &d.binding_failure_conditions}}) {
    if (conditions->empty()) continue;
    *out += fmt::format(R"(,"{}":[)", key);
    for (size_t i = 0; i < conditions->size(); ++i) {
      if (i > 0) *out += ',';
      json::AppendString(out, (*conditions)[i]);
    }
    *out += ']';
  }
  if (!d.share_id.empty()) {
    *out += R"(,"shareID":)";
    json::AppendString(out, d.share_id);
  }
  if (!d.consumed_capacity_milli.empty()) {
    *out += R"(,"consumedCapacity":{)";
    bool first = true;
    for (const auto& [name, milli] : d.consumed_capacity_milli) {
      if (!first) *out += ',';
      first = false;
      json::AppendString(out, name);
      *out += ':';
      json::AppendString(out, FormatMilli(milli));
    }
    *out += '}';
  }
  *out += '}';
}

void AppendConfigs(std::string* out, const std::vector<ResultConfig>& configs) {
  *out += R"(,"config":[)";
  for (size_t i = 0; i < configs.size(); ++i) {
    const ResultConfig& c = configs[i];
    if (i > 0) *out += ',';
    *out += R"({"source":)";
    json::AppendString(out, c.source);
    if (!c.requests.empty()) {
      *out += R"(,"requests":[)";
      for (size_t k = 0; k < c.requests.size(); ++k) {
        if (k > 0) *out += ',';
        json::AppendString(out, c.requests[k]);
      }
      *out += ']';
    }
    *out += R"(,"opaque":{"driver":)";
    json::AppendString(out, c.opaque.driver);
    if (!c.opaque.parameters_json.empty()) *out += R"(,"parameters":)" + c.opaque.parameters_json;
    *out += "}}";
  }
  *out += ']';
}

}  // namespace

void AppendAllocationResult(std::string* out, const AllocationResult& r) {
  *out += R"({"devices":{"results":[)";
  for (size_t i = 0; i < r.results.size(); ++i) {
    if (i > 0) *out += ',';
    AppendDeviceResult(out, r.results[i]);
  }
  *out += ']';
  if (!r.config.empty()) AppendConfigs(out, r.config);
  *out += '}';
  if (r.node_selector) {
    *out += R"(,"nodeSelector":)";
    AppendNodeSelector(out, *r.node_selector);
  }
  if (r.allocation_timestamp_ms) {
    *out += R"(,"allocationTimestamp":)";
    json::AppendString(out, FormatRfc3339(*r.allocation_timestamp_ms));
  }
  *out += '}';
}

}  // namespace gpusched::kubejson
