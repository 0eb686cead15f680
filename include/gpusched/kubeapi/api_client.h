// File: api_client.h
//
// A Kubernetes API client over HTTP/1.1 (Boost.Beast and OpenSSL, which stay in api_client.cc):
// one-shot requests over a small pool of keep-alive connections, and streamed GETs (watches),
// each on a connection of its own.
//
// Authentication: a bearer token (a token file is re-read every token_refresh, and at once after
// a 401, which is then retried once) or a client certificate. The server certificate is checked
// against the configured CAs and the server's name or IP address.
//
// Requests (not streams) pass a client-side rate limit: qps with a burst, as client-go does.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "gpusched/common/mutex.h"
#include "gpusched/common/status.h"
#include "gpusched/kubeapi/api_config.h"

namespace gpusched::kubeapi {

// The content type of a JSON merge patch (RFC 7386), which every writer of gpusched sends.
inline constexpr std::string_view kMergePatch = "application/merge-patch+json";

struct ApiClientOptions {
  std::chrono::milliseconds request_timeout{10'000};  // connect + send + receive of one request
  std::chrono::seconds token_refresh{60};
  double qps = 50;  // client-side rate limit of requests; 0 = none. Default: kube-scheduler's 50/100.
  int burst = 100;
  size_t max_idle_connections = 4;
  std::string user_agent = "gpusched";
};

struct ApiResponse {
  int status = 0;
  std::string body;
  std::chrono::seconds retry_after{0};  // from a Retry-After header, if any
};

// Returns the message of the Status object in an API error body, or the body's first 200 bytes.
std::string StatusMessage(const ApiResponse& r);

// Cancels a Stream from another thread. One per stream at a time.
class StreamCancel {
 public:
  void Cancel();
  bool cancelled() const { return cancelled_.load(); }
  void Reset();

 private:
  friend class ApiClient;
  void SetHook(std::function<void()> hook);

  std::atomic<bool> cancelled_{false};
  Mutex mu_;
  std::function<void()> hook_ GPUSCHED_GUARDED_BY(mu_);
};

class ApiClient {
 public:
  // Errors: InvalidArgument for unusable certificates or keys in `config`.
  static StatusOr<std::unique_ptr<ApiClient>> Create(ApiConfig config, ApiClientOptions options = {});
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // Sends one request and returns the response, whatever its HTTP status, within `timeout`
  // (0: options.request_timeout). Idle connections the server closed are not reused; a request
  // that fails on a kept-alive connection is sent again on a fresh one if it is a GET, or if it
  // could not be written at all (a PATCH or POST that may have arrived is never repeated).
  // Errors: Unavailable (connect, TLS, transport or timeout), naming the target.
  StatusOr<ApiResponse> Send(std::string_view method, std::string_view target, std::string_view body = {},
                             std::string_view content_type = "application/json",
                             std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  // GETs `target` and, on 200, hands every piece of the body to on_data as it arrives, until the
  // server ends the body (OK), on_data returns false (OK), `cancel` fires (Cancelled), or no
  // byte arrives for idle_timeout (DeadlineExceeded). On another status, returns that response
  // with its body and does not call on_data. Pieces do not follow any framing of the content.
  // on_header, if set, hears the status as soon as the response header arrived.
  StatusOr<ApiResponse> Stream(std::string_view target, std::chrono::seconds idle_timeout,
                               const std::function<bool(std::string_view)>& on_data, StreamCancel* cancel,
                               const std::function<void(int)>& on_header = nullptr);

  const ApiConfig& config() const;

 private:
  class Impl;
  explicit ApiClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched::kubeapi
