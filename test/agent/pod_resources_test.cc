// The kubelet's PodResources API as the agent reads it (agent/pod_resources.h, grpc_call.h):
// the List messages, device IDs matched to GPUs, and the call over real HTTP/2 on a unix socket.
#include "gpusched/agent/pod_resources.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fake_pod_resources.h"
#include "gpusched/agent/grpc_call.h"
#include "temp_dir.h"

namespace gpusched::agent {
namespace pod_resources_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;

std::vector<ContainerDevices> Sample() {
  return {{"ml", "train", "worker", "nvidia.com/gpu", {"GPU-aaa", "GPU-bbb"}},
          {"ml", "train", "sidecar", "example.com/nic", {"nic-0"}},
          {"web", "infer", "app", "nvidia.com/gpu", {"GPU-ccc::3"}}};
}

std::vector<GpuDevice> Gpus() {
  return {{.index = 0, .uuid = "GPU-aaa"}, {.index = 1, .uuid = "GPU-bbb"}, {.index = 2, .uuid = "GPU-ccc"},
          {.index = 3, .uuid = "GPU-ddd"}};
}

TEST(PodResources, ListResponsesRoundTrip) {
  StatusOr<std::vector<ContainerDevices>> decoded = DecodeListPodResources(EncodeListPodResources(Sample()));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded, Sample());
}

TEST(PodResources, FieldsTheAgentDoesNotReadAreSkipped) {
  // A container with cpu_ids (field 3, packed varints) and memory (field 4) beside its devices.
  std::string container = std::string("\x0a\x01" "c", 3) + std::string("\x1a\x02\x01\x02", 4) +
                          std::string("\x12\x13\x0a\x0envidia.com/gpu\x12\x01" "0", 21) + std::string("\x20\x07", 2);
  std::string pod = std::string("\x0a\x01p\x12\x02ns\x1a", 8) + static_cast<char>(container.size()) + container;
  std::string message = std::string("\x0a", 1) + static_cast<char>(pod.size()) + pod;
  StatusOr<std::vector<ContainerDevices>> decoded = DecodeListPodResources(message);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_THAT(*decoded, ElementsAre(ContainerDevices{"ns", "p", "c", "nvidia.com/gpu", {"0"}}));
}

TEST(PodResources, AMalformedMessageIsAnErrorThatSaysWhere) {
  EXPECT_THAT(DecodeListPodResources(std::string("\x0a\x05\x0a", 3)).status().message(),
              HasSubstr("length 5 beyond the message"));
}

TEST(PodResources, DeviceIdsNameGpusByUuidReplicaOrIndex) {
  std::vector<GpuDevice> gpus = Gpus();
  std::vector<ContainerDevices> devices = Sample();
  devices.push_back({"ml", "indexed", "c", "nvidia.com/gpu", {"3"}});
  devices.push_back({"ml", "indexed-replica", "c", "nvidia.com/gpu", {"3::2"}});
  devices.push_back({"ml", "mig", "c", "nvidia.com/gpu", {"MIG-0c1f2e"}});
  AttachPods(devices, &gpus);
  EXPECT_THAT(gpus[0].pods, Optional(ElementsAre("ml/train")));
  EXPECT_THAT(gpus[1].pods, Optional(ElementsAre("ml/train")));
  EXPECT_THAT(gpus[2].pods, Optional(ElementsAre("web/infer"))) << "a shared replica is its GPU's";
  EXPECT_THAT(gpus[3].pods, Optional(ElementsAre("ml/indexed", "ml/indexed-replica"))) << "--device-id-strategy=index";
  std::vector<GpuDevice> idle = Gpus();
  AttachPods({}, &idle);
  EXPECT_THAT(idle[0].pods, Optional(ElementsAre())) << "read: free";
}

class PodResourcesCall : public ::testing::Test {
 protected:
  std::string socket_ = testing::TestTempDir("pod-resources") + "/kubelet.sock";
  testing::FakePodResources kubelet_{socket_};
};

TEST_F(PodResourcesCall, ListAnswersOverHttp2OnTheKubeletSocket) {
  ASSERT_TRUE(kubelet_.Start().ok());
  kubelet_.Set(Sample());
  StatusOr<std::string> reply = GrpcUnaryCall(socket_, kPodResourcesList, "");
  ASSERT_TRUE(reply.ok()) << reply.status().message();
  EXPECT_EQ(DecodeListPodResources(*reply).value(), Sample());
}

TEST_F(PodResourcesCall, AResponseBeyondTheFlowControlWindowArrivesWhole) {
  ASSERT_TRUE(kubelet_.Start().ok());
  std::vector<ContainerDevices> many;
  for (int i = 0; i < 3000; ++i) many.push_back({"ns", fmt::format("pod-{}", i), "c", "nvidia.com/gpu", {fmt::format("GPU-{:036}", i)}});
  kubelet_.Set(many);
  StatusOr<std::string> reply = GrpcUnaryCall(socket_, kPodResourcesList, "");
  ASSERT_TRUE(reply.ok()) << reply.status().message();
  EXPECT_GT(reply->size(), 150000u);
  EXPECT_EQ(DecodeListPodResources(*reply).value(), many);
}

TEST_F(PodResourcesCall, ErrorsSayWhatFailed) {
  EXPECT_EQ(GrpcUnaryCall(socket_, kPodResourcesList, "").status().code(), StatusCode::kUnavailable) << "no kubelet yet";
  ASSERT_TRUE(kubelet_.Start().ok());
  StatusOr<std::string> unknown = GrpcUnaryCall(socket_, "/v1.PodResourcesLister/Nope", "");
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(unknown.status().message(), HasSubstr("grpc-status 12: unknown method /v1.PodResourcesLister/Nope"));
  kubelet_.Fail(14, "kubelet is shutting down");
  EXPECT_EQ(GrpcUnaryCall(socket_, kPodResourcesList, "").status().code(), StatusCode::kUnavailable);
  kubelet_.Fail(0, "");
  EXPECT_TRUE(GrpcUnaryCall(socket_, kPodResourcesList, "").ok());
  EXPECT_EQ(kubelet_.calls(), 3);
}

// Review finding: connect() blocked, outside the deadline, on a server whose backlog was full.
TEST(PodResourcesDeadline, AServerThatAcceptsNothingNeverHoldsTheCallerPastTheTimeout) {
  std::string path = testing::TestTempDir("pod-resources") + "/stuck.sock";
  ::unlink(path.c_str());
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_EQ(::bind(listener, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(listener, 0), 0);
  std::vector<int> queued;  // fill the backlog: nothing is ever accepted
  for (int i = 0; i < 64; ++i) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd);
      break;
    }
    queued.push_back(fd);
  }
  auto start = std::chrono::steady_clock::now();
  StatusOr<std::string> reply = GrpcUnaryCall(path, kPodResourcesList, "", GrpcCallOptions{.timeout = std::chrono::milliseconds(300)});
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(reply.status().code(), StatusCode::kDeadlineExceeded) << reply.status().message();
  EXPECT_THAT(reply.status().message(), HasSubstr("the server accepts no connection"));
  EXPECT_LT(took, std::chrono::seconds(3));
  for (int fd : queued) ::close(fd);
  ::close(listener);
}

}  // namespace pod_resources_test
}  // namespace gpusched::agent
