// File: api_config.cc
//
// Where the API server is and how to authenticate: in-cluster service-account files and
// environment, or a kubeconfig context (inline base64 or file PEMs; exec and auth-provider
// refused); server URLs parsed into host and port, IPv6 included.
#include "gpusched/kubeapi/api_config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gpusched::kubeapi {
namespace {

StatusOr<std::string> ReadFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(fmt::format("{}: cannot read {}", what, path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Join(std::string_view dir, const std::string& path) {
  if (path.empty() || path.front() == '/' || dir.empty()) return path;
  return fmt::format("{}/{}", dir, path);
}

// Returns the entry of `list` (a kubeconfig clusters/users/contexts sequence) named `name`.
StatusOr<YAML::Node> Named(const YAML::Node& root, const char* list, const char* item, const std::string& name) {
  YAML::Node seq = root[list];
  if (seq && !seq.IsSequence()) return InvalidArgumentError(fmt::format("kubeconfig {}: want a list", list));
  if (seq) {
    for (const YAML::Node& entry : seq) {
      if (entry.IsMap() && entry["name"] && entry["name"].as<std::string>() == name) {
        YAML::Node body = entry[item];
        if (!body || !body.IsMap()) return InvalidArgumentError(fmt::format("kubeconfig {}[{}].{}: missing", list, name, item));
        return body;
      }
    }
  }
  return InvalidArgumentError(fmt::format("kubeconfig {}: no entry named \"{}\"", list, name));
}

std::string Str(const YAML::Node& map, const char* key) {
  YAML::Node v = map[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

// Sets *out from "<key>-data" (base64) or "<key>" (a file), if either is present.
Status ReadPem(const YAML::Node& map, const std::string& key, std::string_view where, std::string_view dir,
               std::string* out) {
  std::string data = Str(map, (key + "-data").c_str());
  if (!data.empty()) {
    StatusOr<std::string> pem = DecodeBase64(data);
    if (!pem.ok()) return pem.status().WithContext(fmt::format("kubeconfig {}.{}-data", where, key));
    *out = std::move(pem).value();
    return OkStatus();
  }
  std::string file = Str(map, key.c_str());
  if (file.empty()) return OkStatus();
  GPUSCHED_ASSIGN_OR_RETURN(*out, ReadFile(Join(dir, file), fmt::format("kubeconfig {}.{}", where, key)));
  return OkStatus();
}

StatusOr<ApiConfig> FromYaml(const YAML::Node& root, std::string_view dir, std::string_view wanted) {
  if (!root.IsMap()) return InvalidArgumentError("kubeconfig: want a mapping");
  std::string context_name = wanted.empty() ? Str(root, "current-context") : std::string(wanted);
  if (context_name.empty()) return InvalidArgumentError("kubeconfig current-context: missing (pass a context)");
  GPUSCHED_ASSIGN_OR_RETURN(YAML::Node context, Named(root, "contexts", "context", context_name));
  std::string cluster_name = Str(context, "cluster");
  std::string user_name = Str(context, "user");
  GPUSCHED_ASSIGN_OR_RETURN(YAML::Node cluster, Named(root, "clusters", "cluster", cluster_name));

  ApiConfig c;
  c.namespace_name = Str(context, "namespace");
  std::string where = fmt::format("clusters[{}]", cluster_name);
  std::string server = Str(cluster, "server");
  if (server.empty()) return InvalidArgumentError(fmt::format("kubeconfig {}.server: missing", where));
  GPUSCHED_RETURN_IF_ERROR(ParseServerUrl(server, &c).WithContext(fmt::format("kubeconfig {}.server", where)));
  GPUSCHED_RETURN_IF_ERROR(ReadPem(cluster, "certificate-authority", where, dir, &c.ca_pem));
  c.insecure_skip_verify = Str(cluster, "insecure-skip-tls-verify") == "true";
  c.server_name = Str(cluster, "tls-server-name");

  if (user_name.empty()) return c;
  GPUSCHED_ASSIGN_OR_RETURN(YAML::Node user, Named(root, "users", "user", user_name));
  where = fmt::format("users[{}]", user_name);
  for (const char* unsupported : {"exec", "auth-provider", "username"}) {
    if (user[unsupported]) {
      return InvalidArgumentError(fmt::format(
          "kubeconfig {}.{}: not supported; use a token, tokenFile or a client certificate", where, unsupported));
    }
  }
  c.token = Str(user, "token");
  std::string token_file = Str(user, "tokenFile");
  if (!token_file.empty()) c.token_file = Join(dir, token_file);
  GPUSCHED_RETURN_IF_ERROR(ReadPem(user, "client-certificate", where, dir, &c.client_cert_pem));
  GPUSCHED_RETURN_IF_ERROR(ReadPem(user, "client-key", where, dir, &c.client_key_pem));
  if (c.client_cert_pem.empty() != c.client_key_pem.empty()) {
    return InvalidArgumentError(fmt::format("kubeconfig {}: client-certificate and client-key go together", where));
  }
  return c;
}

}  // namespace

std::string ApiConfig::Url() const {
  bool v6 = host.find(':') != std::string::npos;
  return fmt::format("{}://{}{}{}:{}", tls ? "https" : "http", v6 ? "[" : "", host, v6 ? "]" : "", port);
}

Status ParseServerUrl(std::string_view url, ApiConfig* config) {
  std::string_view rest = url;
  if (rest.starts_with("https://")) {
    config->tls = true;
    rest.remove_prefix(8);
  } else if (rest.starts_with("http://")) {
    config->tls = false;
    rest.remove_prefix(7);
  } else {
    return InvalidArgumentError(fmt::format("\"{}\": want https://host[:port]", url));
  }
  if (size_t slash = rest.find('/'); slash != std::string_view::npos) {
    if (rest.substr(slash) != "/") {
      return InvalidArgumentError(fmt::format("\"{}\": a path after the host is not supported", url));
    }
    rest = rest.substr(0, slash);
  }
  std::string_view host = rest;
  std::string_view port;
  if (rest.starts_with('[')) {
    size_t close = rest.find(']');
    if (close == std::string_view::npos) return InvalidArgumentError(fmt::format("\"{}\": unclosed [", url));
    host = rest.substr(1, close - 1);
    std::string_view after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return InvalidArgumentError(fmt::format("\"{}\": junk after ]", url));
      port = after.substr(1);
    }
  } else if (size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.empty()) return InvalidArgumentError(fmt::format("\"{}\": no host", url));
  if (!port.empty()) {
    int p = 0;
    for (char ch : port) {
      if (ch < '0' || ch > '9' || p > 65535) return InvalidArgumentError(fmt::format("\"{}\": bad port", url));
      p = p * 10 + (ch - '0');
    }
    if (p < 1 || p > 65535) return InvalidArgumentError(fmt::format("\"{}\": bad port", url));
  }
  config->host = std::string(host);
  config->port = port.empty() ? (config->tls ? "443" : "80") : std::string(port);
  return OkStatus();
}

StatusOr<std::string> DecodeBase64(std::string_view text) {
  static constexpr std::array<int8_t, 256> kValue = [] {
    std::array<int8_t, 256> v{};
    v.fill(-1);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) v[static_cast<unsigned char>(alphabet[i])] = static_cast<int8_t>(i);
    return v;
  }();
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  int padding = 0;
  for (char ch : text) {
    if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') continue;
    if (ch == '=') {
      ++padding;
      continue;
    }
    int8_t v = kValue[static_cast<unsigned char>(ch)];
    if (v < 0 || padding > 0) return InvalidArgumentError(fmt::format("not base64: unexpected '{}'", ch));
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  if (padding > 2 || bits >= 6) return InvalidArgumentError("not base64: truncated");
  return out;
}

StatusOr<ApiConfig> InClusterConfig(const std::function<std::optional<std::string>(const char*)>& getenv,
                                    std::string_view sa_dir) {
  std::string host = getenv("KUBERNETES_SERVICE_HOST").value_or("");
  std::string port = getenv("KUBERNETES_SERVICE_PORT").value_or("");
  if (host.empty() || port.empty()) {
    return FailedPreconditionError(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set");
  }
  ApiConfig c;
  c.host = host;
  c.port = port;
  std::string dir(sa_dir);
  GPUSCHED_ASSIGN_OR_RETURN(c.ca_pem, ReadFile(dir + "/ca.crt", "in-cluster CA"));
  c.token_file = dir + "/token";
  GPUSCHED_RETURN_IF_ERROR(ReadFile(c.token_file, "in-cluster token").status());
  StatusOr<std::string> ns = ReadFile(dir + "/namespace", "in-cluster namespace");
  if (ns.ok()) c.namespace_name = std::move(ns).value();
  while (!c.namespace_name.empty() && std::isspace(static_cast<unsigned char>(c.namespace_name.back()))) {
    c.namespace_name.pop_back();
  }
  return c;
}

StatusOr<ApiConfig> InClusterConfig() {
  return InClusterConfig([](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  });
}

StatusOr<ApiConfig> ParseKubeconfig(std::string_view yaml, std::string_view dir, std::string_view context) {
  try {
    return FromYaml(YAML::Load(std::string(yaml)), dir, context);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(fmt::format("kubeconfig: {}", e.what()));
  }
}

StatusOr<ApiConfig> LoadKubeconfig(std::string_view path, std::string_view context) {
  std::string p(path);
  GPUSCHED_ASSIGN_OR_RETURN(std::string text, ReadFile(p, "kubeconfig"));
  size_t slash = p.rfind('/');
  std::string dir = slash == std::string::npos ? "." : p.substr(0, slash);
  return ParseKubeconfig(text, dir, context);
}

}  // namespace gpusched::kubeapi
