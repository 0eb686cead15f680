// Limits, hostile input, metrics and the admission guard, on a real socket.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "cluster_json.h"
#include "gpusched/common/mutex.h"
#include "gpusched/extender/pod_binder.h"
#include "http_client.h"
#include "test_server.h"

namespace gpusched::testing {
namespace hardening_test {

using ::testing::HasSubstr;

// A raw TCP connection for requests a well-behaved client would never send.
class RawConnection {
 public:
  explicit RawConnection(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawConnection() { ::close(fd_); }
  bool connected() const { return connected_; }
  void Send(std::string_view bytes) { (void)!::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL); }
  // Returns what arrives within `ms` until the peer closes; sets *closed when it did.
  std::string Receive(int ms, bool* closed) {
    std::string out;
    *closed = false;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
      if (::poll(&p, 1, std::max(1, left)) <= 0) continue;
      char buf[4096];
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        *closed = true;
        break;
      }
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

std::string Cluster() {
  return ListJson({NvidiaNode("n1", 8, "nvidia").ToJson(), MgpuNode("m1", 2, 20000).ToJson(),
                   PodJson{.name = "train", .uid = "u-train", .node = "n1", .phase = "Running",
                           .containers = {WholeGpus("c", 2)}}.ToJson()});
}

uint64_t Refused(TestServer& s, const std::string& reason) { return s.telemetry().http_refused.With({reason}).Value(); }

TEST(Limits, HeaderOverTheLimitGets431) {
  TestServer server(Cluster(), {}, "", http::ServerOptions{.header_limit = 2048});
  RawConnection c(server.port());
  c.Send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(4096, 'a') + "\r\n\r\n");
  bool closed = false;
  EXPECT_THAT(c.Receive(2000, &closed), HasSubstr("HTTP/1.1 431"));
  EXPECT_EQ(Refused(server, "header_too_large"), 1u);
}

TEST(Limits, BodyOverTheLimitGets413AndIsCounted) {
  TestServer server(Cluster(), {}, "", http::ServerOptions{.body_limit = 4096});
  HttpClient client(server.port());
  EXPECT_EQ(client.Post("/filter", std::string(8192, ' ')).status, 413);
  EXPECT_EQ(Refused(server, "body_too_large"), 1u);
}

TEST(Limits, ConnectionsOverTheLimitGet503) {
  TestServer server(Cluster(), {}, "", http::ServerOptions{.max_connections = 2});
  RawConnection a(server.port());
  RawConnection b(server.port());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  RawConnection c(server.port());
  c.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  bool closed = false;
  EXPECT_THAT(c.Receive(2000, &closed), HasSubstr("HTTP/1.1 503"));
  EXPECT_EQ(Refused(server, "too_many_connections"), 1u);
}

TEST(Limits, ASlowRequestIsCutOffAtTheReadTimeout) {
  TestServer server(Cluster(), {}, "", http::ServerOptions{.read_timeout = std::chrono::seconds(1)});
  RawConnection c(server.port());
  c.Send("POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"Pod\":");
  bool closed = false;
  c.Receive(3000, &closed);
  EXPECT_TRUE(closed);
  // The stream closes the socket when its timer fires, before the handler counts the refusal.
  for (int i = 0; i < 100 && Refused(server, "read_timeout") == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Refused(server, "read_timeout"), 1u);
}

TEST(Limits, AnIdleConnectionIsClosedAfterTheIdleTimeout) {
  TestServer server(Cluster(), {}, "", http::ServerOptions{.idle_timeout = std::chrono::seconds(1)});
  RawConnection c(server.port());
  c.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  bool closed = false;
  EXPECT_THAT(c.Receive(300, &closed), HasSubstr("200 OK"));
  EXPECT_FALSE(closed);  // kept alive ...
  c.Receive(2500, &closed);
  EXPECT_TRUE(closed);  // ... until idle too long
  EXPECT_EQ(Refused(server, "read_timeout"), 0u);  // idle is not a refusal
}

TEST(Limits, GarbageGets400AndTheServerKeepsServing) {
  TestServer server(Cluster());
  RawConnection c(server.port());
  c.Send("\x16\x03\x01 not http at all\r\n\r\n");
  bool closed = false;
  EXPECT_THAT(c.Receive(2000, &closed), HasSubstr("HTTP/1.1 400"));
  EXPECT_EQ(Refused(server, "bad_request"), 1u);
  HttpClient client(server.port());
  EXPECT_EQ(client.Get("/healthz").status, 200);
}

TEST(RequestId, TheCallersIdIsEchoedAndAMissingOrUnusableOneIsGenerated) {
  TestServer server(Cluster());
  HttpClient client(server.port());
  EXPECT_EQ(client.Send("GET", "/healthz", "", "sched-42").request_id, "sched-42");
  std::string generated = client.Get("/healthz").request_id;
  EXPECT_FALSE(generated.empty());
  EXPECT_NE(client.Get("/healthz").request_id, generated);
  std::string too_long(200, 'x');
  std::string replaced = client.Send("GET", "/healthz", "", too_long).request_id;
  EXPECT_FALSE(replaced.empty());
  EXPECT_NE(replaced, too_long);
}

TEST(Hostile, BodiesAreAnsweredWithErrors) {
  TestServer server(Cluster());
  HttpClient client(server.port());
  // {"Pod": <pod whose limit is VALUE>, ...}: the prefix below, then VALUE, then the closing braces.
  std::string pod = R"({"Pod":{"metadata":{"name":"p","namespace":"d","uid":"u"},"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":)";
  struct Case {
    std::string body;
    std::string want;
  };
  std::vector<Case> cases = {
      {pod + R"(1e999}}}]}},"NodeNames":["n1"]})", "malformed JSON"},
      {pod + R"(99999999999999999999}}}]}},"NodeNames":["n1"]})", "above the largest quantity gpusched accepts"},
      {pod + R"("1"}}}]}},"NodeNames":["n1"],"NodeNames":7})", R"("NodeNames":["n1"])"},  // the first key wins
      {std::string(200000, '[') + std::string(200000, ']'), "nests deeper than 64 levels"},
      {"{\"Pod\":{},\"NodeNames\":[\"\xc3\x28\"]}", "malformed JSON"},
      {R"({"Pod":{},"NodeNames":["n1")", "malformed JSON"},
      {R"({"Pod":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},"Nodes":{"items":[{"metadata":{"name":"n1"},"status":{"allocatable":[]}}]}})",
       R"("FailedAndUnresolvableNodes":{"n1":"node GPU inventory is inconsistent: Nodes.items[0].status.allocatable: want object, got array"})"},
  };
  for (const Case& c : cases) {
    HttpReply r = client.Post("/filter", c.body);
    EXPECT_EQ(r.status, 200) << c.body.substr(0, 60);
    EXPECT_THAT(r.body, HasSubstr(c.want)) << c.body.substr(0, 60);
  }
  EXPECT_EQ(client.Get("/healthz").status, 200);
}

TEST(Telemetry, MetricsCountRequestsDecisionsAndInventory) {
  TestServer server(Cluster());
  HttpClient client(server.port());
  PodJson pod{.name = "p", .uid = "u-p", .containers = {WholeGpus("c", 1)}};
  client.Post("/filter", ArgsWithNames(pod.ToJson(), {"n1", "m1", "gone"}));
  client.Post("/filter", "{");
  client.Post("/bind", BindJson("p", "default", "u-p", "n1"));
  HttpReply m = client.Get("/metrics");
  EXPECT_EQ(m.status, 200);
  EXPECT_THAT(m.content_type, HasSubstr("text/plain; version=0.0.4"));
  EXPECT_THAT(m.body, HasSubstr(R"(gpusched_http_requests_total{verb="filter",code="200"} 2)"));
  EXPECT_THAT(m.body, HasSubstr(R"(gpusched_http_request_duration_seconds_count{verb="filter"} 2)"));
  EXPECT_THAT(m.body, HasSubstr(R"(gpusched_filter_decisions_total{result="fit"} 1)"));
  EXPECT_THAT(m.body, HasSubstr(R"(gpusched_filter_decisions_total{result="mode_mismatch"} 1)"));
  EXPECT_THAT(m.body, HasSubstr(R"(gpusched_filter_decisions_total{result="unknown_node"} 1)"));
  EXPECT_THAT(m.body, HasSubstr(R"(gpusched_extender_errors_total{verb="filter"} 1)"));
  EXPECT_THAT(m.body, HasSubstr(R"(gpusched_binds_total{result="ok"} 1)"));
  EXPECT_THAT(m.body, HasSubstr(R"(gpusched_nodes{mode="mgpu",state="ready"} 1)"));
  EXPECT_THAT(m.body, HasSubstr(R"(gpusched_node_whole_gpus{node="n1",kind="used"} 3)"));
  EXPECT_THAT(m.body, HasSubstr(R"(gpusched_gpu_allocated_core_percent{node="m1",gpu="0"} 0)"));
  EXPECT_THAT(m.body, HasSubstr("gpusched_ledger_allocations 2"));
  EXPECT_THAT(m.body, HasSubstr("gpusched_build_info{version="));
}

std::string Review(const std::string& uid, const std::string& op, const std::string& old_label, const std::string& new_label,
                   const std::string& node = "n1") {
  auto node_json = [&](const std::string& label) {
    return label.empty() ? fmt::format(R"({{"metadata":{{"name":"{}"}}}})", node)
                         : fmt::format(R"({{"metadata":{{"name":"{}","labels":{{"vke.node.gpu.schedule":"{}"}}}}}})", node, label);
  };
  return fmt::format(R"({{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"{}","kind":{{"group":"","version":"v1","kind":"Node"}},"operation":"{}","object":{},"oldObject":{}}}}})",
                     uid, op, node_json(new_label), node_json(old_label));
}

TEST(AdmissionGuard, DeniesAModeSwitchWhileGpuPodsOfTheOldModeRun) {
  TestServer server(Cluster());
  HttpClient client(server.port());
  HttpReply r = client.Post("/validate/node", Review("r1", "UPDATE", "nvidia", "mgpu"));
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.body, HasSubstr(R"("uid":"r1","allowed":false)"));
  EXPECT_THAT(r.body, HasSubstr(R"("code":403)"));
  EXPECT_THAT(r.body, HasSubstr(R"(changing vke.node.gpu.schedule from \"nvidia\" to \"mgpu\" on node n1 is denied: 1 GPU pod of mode nvidia still runs (default/train))"));
}

TEST(AdmissionGuard, AllowsWhatDoesNotSwitchARunningMode) {
  TestServer server(Cluster());
  HttpClient client(server.port());
  // Same mode spelled differently (absent means nvidia), other labels, an idle node, other verbs.
  EXPECT_THAT(client.Post("/validate/node", Review("a", "UPDATE", "nvidia", "")).body, HasSubstr(R"("allowed":true)"));
  EXPECT_THAT(client.Post("/validate/node", Review("b", "UPDATE", "mgpu", "nvidia", "m1")).body, HasSubstr(R"("allowed":true)"));
  EXPECT_THAT(client.Post("/validate/node", Review("c", "CREATE", "", "mgpu")).body, HasSubstr(R"("uid":"c","allowed":true)"));
  EXPECT_THAT(client.Post("/validate/node", Review("d", "UPDATE", "nvidia", "mgpu", "unknown")).body,
              HasSubstr(R"("allowed":true)"));
  HttpReply bad = client.Post("/validate/node", R"({"kind":"AdmissionReview"})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_THAT(bad.body, HasSubstr("AdmissionReview.request: missing"));
}

// A binder that waits until released, as a bind backing off on a slow API server does.
class GatedBinder : public extender::PodBinder {
 public:
  Status Bind(const extender::BindTarget&) override {
    MutexLock lock(&mu_);
    entered_ = true;
    cv_.SignalAll();
    while (!released_) cv_.Wait();
    return OkStatus();
  }
  // Returns false if no bind arrived within 5 s.
  bool AwaitEntered() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    MutexLock lock(&mu_);
    while (!entered_ && std::chrono::steady_clock::now() < deadline) cv_.WaitFor(std::chrono::milliseconds(100));
    return entered_;
  }
  void Release() {
    MutexLock lock(&mu_);
    released_ = true;
    cv_.SignalAll();
  }

 private:
  Mutex mu_;
  CondVar cv_{&mu_};
  bool entered_ GPUSCHED_GUARDED_BY(mu_) = false;
  bool released_ GPUSCHED_GUARDED_BY(mu_) = false;
};

TEST(Server, ABindWaitingOnTheApiServerNeverHoldsAnIoThread) {
  GatedBinder binder;
  TestServer server(Cluster(), {}, "", http::ServerOptions{.port = 0, .threads = 1}, extender::ServiceCollaborators{.binder = &binder});
  PodJson pod{.name = "p", .uid = "u-p", .containers = {WholeGpus("c", 1)}};
  ASSERT_EQ(HttpClient(server.port()).Post("/filter", ArgsWithNames(pod.ToJson(), {"n1"})).status, 200);  // bind books what filter saw
  std::future<HttpReply> bind = std::async(std::launch::async, [&] {
    return HttpClient(server.port()).Post("/bind", BindJson("p", "default", "u-p", "n1"));
  });
  if (!binder.AwaitEntered()) {
    binder.Release();
    FAIL() << "the bind never reached the binder: " << bind.get().body;
  }
  // The only I/O thread is free: filter answers while the bind still waits.
  std::future<HttpReply> filter = std::async(std::launch::async, [&] {
    return HttpClient(server.port()).Post("/filter", ArgsWithNames(pod.ToJson(), {"n1"}));
  });
  bool answered = filter.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  binder.Release();
  ASSERT_TRUE(answered) << "filter waited behind a bind";
  EXPECT_EQ(filter.get().status, 200);
  HttpReply bound = bind.get();
  EXPECT_EQ(bound.status, 200);
  EXPECT_THAT(bound.body, HasSubstr(R"("Error":"")"));
}

}  // namespace hardening_test
}  // namespace gpusched::testing
