// File: server.h
//
// The HTTP/1.1 server (Boost.Beast) in front of a Handler (the extender's Router, handler.h): a listener, one session per connection
// on its own strand, keep-alive with an idle timeout longer than Go's 90 s client idle timeout,
// and N worker threads. Beast and OpenSSL stay in server.cc; this header has none of them.
//
// TLS: with a certificate and key the server speaks HTTPS only; with a client CA too, it refuses
// connections that do not present a certificate that CA signed (mTLS). ALPN offers only
// http/1.1, never h2 (Go's client would otherwise try HTTP/2, which Beast does not speak). The
// files are re-read when they change; new connections use the new ones.
//
// Limits, each refusal answered with an HTTP error where the protocol allows and counted in the
// telemetry: request body size (413), header size (431), malformed requests (400), concurrent
// connections (503), the time a started request may take to arrive (the connection is closed),
// and the keep-alive idle time.
//
// Thread-safe: Start/Shutdown/Stop/Wait may be called from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "gpusched/common/status.h"
#include "gpusched/http/handler.h"

namespace gpusched::http {

struct ServerOptions {
  std::string host = "127.0.0.1";  // Default: loopback (the sidecar topology).
  uint16_t port = 8888;            // 0 picks a free port; see Server::port().
  int threads = 2;                 // Default: 2 worker threads.
  // Threads for requests that wait on the API server (bind): they never hold an I/O thread.
  // Default: 4.
  int blocking_threads = 4;
  // A non-cache filter for 5,000 nodes with 50 images each is about 60 MB. Default: 128 MiB.
  size_t body_limit = 128u << 20;
  size_t header_limit = 64u << 10;  // Default: 64 KiB.
  // Keep-alive idle time before a request starts. Default: 120 s (Go's client closes at 90 s).
  std::chrono::seconds idle_timeout{120};
  // Time a request may take to arrive once its first bytes came. Default: 30 s.
  std::chrono::seconds read_timeout{30};
  size_t max_connections = 1024;  // Default: 1024 concurrent connections.
  // How long Shutdown() waits for requests in flight. Default: 20 s.
  std::chrono::seconds shutdown_grace{20};

  // TLS (all paths; empty = plain HTTP). client_ca_file turns on mTLS.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string client_ca_file;
  // How often the TLS files are checked for changes. Default: 10 s.
  std::chrono::seconds tls_reload_interval{10};
};

class Server {
 public:
  // REQUIRES: `handler` outlives the server.
  Server(ServerOptions options, const Handler* handler);
  ~Server();  // Stops and joins.
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Loads the TLS files, binds, listens and starts the worker threads. Errors: InvalidArgument
  // for a bad host or TLS file (the message names the file), Unavailable if the address cannot
  // be bound.
  Status Start();
  // Returns the bound port (the real one when options.port was 0). REQUIRES: Start() succeeded.
  uint16_t port() const;
  // Stops accepting, lets requests in flight finish (up to shutdown_grace), then stops.
  // Returns the number of requests that were still in flight when the grace ran out.
  size_t Shutdown();
  // Stops at once, closing every connection. Idempotent.
  void Stop();
  // Blocks until the server stopped.
  void Wait();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched::http
