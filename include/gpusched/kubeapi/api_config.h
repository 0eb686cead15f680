// File: api_config.h
//
// Where the Kubernetes API server is and how to authenticate to it, from the two places a
// program learns it: the pod's service account (in-cluster, as client-go's InClusterConfig) or a
// kubeconfig file (as kubectl reads it).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "gpusched/common/status.h"

namespace gpusched::kubeapi {

inline constexpr std::string_view kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

struct ApiConfig {
  std::string host;  // a DNS name or an IP address, without brackets
  std::string port = "443";
  bool tls = true;
  std::string server_name;  // the name the server certificate must carry; empty = host
  std::string ca_pem;       // trusted CAs (PEM); empty = the system's trust store
  bool insecure_skip_verify = false;
  std::string token;       // a bearer token, fixed
  std::string token_file;  // a bearer token re-read every minute and after a 401 (takes precedence)
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string namespace_name;  // the context's (or the pod's) namespace; informational

  // Returns "https://host:port" (IPv6 literals bracketed).
  std::string Url() const;
};

// Returns the in-cluster configuration: KUBERNETES_SERVICE_HOST/PORT from `getenv`, ca.crt,
// token (as token_file) and namespace from `sa_dir`.
// Errors: FailedPrecondition when either variable is empty (not running in a pod), NotFound
// naming a missing file.
StatusOr<ApiConfig> InClusterConfig(const std::function<std::optional<std::string>(const char*)>& getenv,
                                    std::string_view sa_dir = kServiceAccountDir);
StatusOr<ApiConfig> InClusterConfig();

// Returns the configuration of `context` (empty: current-context) in the kubeconfig at `path`.
// Relative file paths are relative to the file's directory. Supported credentials: token,
// tokenFile, client-certificate(-data) + client-key(-data). Errors: InvalidArgument naming the
// field (an exec or auth-provider user is refused by name), NotFound for a missing file.
StatusOr<ApiConfig> LoadKubeconfig(std::string_view path, std::string_view context = "");
// Same, from the file's text; `dir` resolves relative paths.
StatusOr<ApiConfig> ParseKubeconfig(std::string_view yaml, std::string_view dir, std::string_view context = "");

// Splits "https://host:port" (port optional; IPv6 bracketed) into config->host/port/tls.
Status ParseServerUrl(std::string_view url, ApiConfig* config);

// Returns the bytes of standard base64 `text` (whitespace ignored). Errors: InvalidArgument.
StatusOr<std::string> DecodeBase64(std::string_view text);

}  // namespace gpusched::kubeapi
