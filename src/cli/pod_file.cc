// File: pod_file.cc
//
// A pod as a person hands it over: a file or stdin returned as is when it is JSON, otherwise read
// as YAML and rewritten as JSON, plain scalars typed as the API server would have typed them.
#include "cli/pod_file.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "gpusched/json/json.h"

namespace gpusched::cli {
namespace {

// A YAML value as JSON: plain scalars that read as numbers, booleans or null become those (as
// the API server would have typed them); quoted ones stay strings.
void AppendYamlAsJson(const YAML::Node& n, std::string* out) {
  if (n.IsMap()) {
    out->push_back('{');
    bool first = true;
    for (const auto& kv : n) {
      if (!first) out->push_back(',');
      first = false;
      json::AppendString(out, kv.first.as<std::string>());
      out->push_back(':');
      AppendYamlAsJson(kv.second, out);
    }
    out->push_back('}');
  } else if (n.IsSequence()) {
    out->push_back('[');
    for (size_t i = 0; i < n.size(); ++i) {
      if (i > 0) out->push_back(',');
      AppendYamlAsJson(n[i], out);
    }
    out->push_back(']');
  } else if (n.IsNull()) {
    out->append("null");
  } else {
    std::string s = n.Scalar();
    int64_t number = 0;
    bool plain = n.Tag() == "?";
    if (plain && (s == "true" || s == "false")) {
      out->append(s);
    } else if (plain && YAML::convert<int64_t>::decode(n, number)) {
      out->append(std::to_string(number));
    } else {
      json::AppendString(out, s);
    }
  }
}

}  // namespace

StatusOr<std::string> ReadPodFile(const std::string& file, const std::string& flag) {
  std::stringstream text;
  if (file == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(file);
    if (!in) return NotFoundError(fmt::format("{} {}: cannot be read", flag, file));
    text << in.rdbuf();
  }
  std::string s = text.str();
  size_t start = s.find_first_not_of(" \t\r\n");
  if (start != std::string::npos && s[start] == '{') return s;
  try {
    std::string out;
    AppendYamlAsJson(YAML::Load(s), &out);
    return out;
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(fmt::format("{} {}: neither JSON nor YAML: {}", flag, file, e.what()));
  }
}


}  // namespace gpusched::cli
