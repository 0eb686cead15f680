// File: server.h
//
// The HTTP/1.1 server (Boost.Beast) in front of a Router: a listener, one session per connection
// on its own strand, keep-alive with an idle timeout longer than Go's 90 s client idle timeout, a
// request body limit large enough for a 5,000-node NodeList, and N worker threads. Beast stays in
// server.cc; this header has none of it.
//
// Thread-safe: Start/Stop/Wait may be called from any thread; handlers run on worker threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "gpusched/common/status.h"
#include "gpusched/http/router.h"

namespace gpusched::http {

struct ServerOptions {
  std::string host = "127.0.0.1";  // Default: loopback (the sidecar topology).
  uint16_t port = 8888;            // 0 picks a free port; see Server::port().
  int threads = 2;                 // Default: 2 worker threads.
  // A non-cache filter for 5,000 nodes with 50 images each is about 60 MB. Default: 128 MiB.
  size_t body_limit = 128u << 20;
  // Keep-alive idle time, and the time a started request may take to arrive. Default: 120 s.
  std::chrono::seconds idle_timeout{120};
};

class Server {
 public:
  // REQUIRES: `router` outlives the server.
  Server(ServerOptions options, const Router* router);
  ~Server();  // Stops and joins.
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds, listens and starts the worker threads. Errors: Unavailable if the address cannot be
  // bound, InvalidArgument for a bad host.
  Status Start();
  // Returns the bound port (the real one when options.port was 0). REQUIRES: Start() succeeded.
  uint16_t port() const;
  // Stops accepting, closes connections and joins the workers. Idempotent.
  void Stop();
  // Blocks until Stop() was called (from another thread or a signal handler).
  void Wait();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched::http
