// File: fake_pod_resources.h
//
// The kubelet's PodResources API for tests: a gRPC server on a unix socket speaking real HTTP/2
// (libnghttp2's server session: HPACK with Huffman coding, flow control, trailers), answering
// /v1.PodResourcesLister/List with the devices it is given, or a gRPC error when told to fail.
// Other methods answer UNIMPLEMENTED, as a kubelet without them does.
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gpusched/agent/pod_resources.h"
#include "gpusched/common/mutex.h"
#include "gpusched/common/status.h"

namespace gpusched::testing {

class FakePodResources {
 public:
  explicit FakePodResources(std::string socket_path) : path_(std::move(socket_path)) {}
  ~FakePodResources();
  FakePodResources(const FakePodResources&) = delete;
  FakePodResources& operator=(const FakePodResources&) = delete;

  // Listens on the socket (replacing a stale file) and serves connections one at a time.
  Status Start();
  void Set(std::vector<agent::ContainerDevices> devices) GPUSCHED_EXCLUDES(mu_);
  // From now on List answers grpc-status `code` with `message` (0: the devices again).
  void Fail(int code, std::string message) GPUSCHED_EXCLUDES(mu_);
  int calls() const { return calls_.load(); }

  // The answer to one request on `path`: {grpc-status, grpc-message, message}. Public for the
  // connection handler.
  struct Answer {
    int code = 0;
    std::string message;
    std::string body;
  };
  Answer Respond(const std::string& path) GPUSCHED_EXCLUDES(mu_);

 private:
  void Serve();

  std::string path_;
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  std::thread thread_;
  std::atomic<int> calls_{0};
  Mutex mu_;
  std::vector<agent::ContainerDevices> devices_ GPUSCHED_GUARDED_BY(mu_);
  int fail_code_ GPUSCHED_GUARDED_BY(mu_) = 0;
  std::string fail_message_ GPUSCHED_GUARDED_BY(mu_);
};

}  // namespace gpusched::testing
