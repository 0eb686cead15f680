// gpusched-load: drives a running gpusched with filter, prioritize and bind requests at a target
// rate over several keep-alive connections for a fixed time, and prints the achieved rate,
// latency percentiles, errors and the server's RSS before and after.
//
//   gpusched-load --write-cluster FILE --nodes 5000 [--kind whole|mgpu] [--gangs N:MIN-MAX]   a cluster to serve
//   gpusched-load --closed-loop 1 --gangs N:MIN-MAX [--flow podgroup|coscheduling]   gangs, as kube-scheduler
//   gpusched-load --port P --nodes 5000 --names 500 --rate 2000 --connections 4 --duration 60
//                 [--kind whole|mgpu] [--prioritize 1] [--bind 0.1] [--pid PID]
//
// Latency is measured from each request's scheduled start (open loop), so a slow server cannot
// hide its queueing: a request that had to wait counts its wait.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_cluster.h"
#include "cluster_json.h"
#include "gpusched/json/json.h"
#include "http_client.h"
#include "scheduler_emulator.h"

namespace {

constexpr const char* kUsage = R"(usage:
  gpusched-load --write-cluster FILE [--nodes 5000] [--kind whole|mgpu]
      writes the benchmark cluster (Kubernetes List JSON) for gpusched serve --snapshot FILE
  gpusched-load [--port 8888] [--nodes 5000] [--names N] [--rate 1000] [--connections 4]
                [--duration 10] [--kind whole|mgpu] [--prioritize 1] [--bind 0] [--pid PID]
      sends --rate filter requests per second (open loop) with N node names each (0: all),
      --prioritize and --bind calls per filter, and prints rates, latency percentiles, errors
      and, with --pid, the server's RSS before and after
  gpusched-load --closed-loop 1 [--port 8888] [--nodes 5000] [--duration 10] [--kind whole|mgpu] [--pid PID]
      schedules pods one at a time over one connection as kube-scheduler does: filter with every
      node name, prioritize with the nodes filter kept, bind to the best; prints pods/s, the
      time per pod and per-verb latency
  gpusched-load --write-cluster FILE --gangs N[:MIN-MAX] [--flow podgroup|coscheduling] ...
  gpusched-load --closed-loop 1 --gangs N[:MIN-MAX] [--flow podgroup|coscheduling] [--port 8888] ...
      N gangs of MIN-MAX members (default 2-16; mGPU shares or whole GPUs as --kind), every
      member needed: written into the cluster file as pending pods with their PodGroups (1.37's,
      or Coscheduling's), then scheduled through an emulated kube-scheduler (the 1.37 pod-group
      cycle, or Coscheduling's Permit) against the server that serves that file; prints gangs
      placed, gangs partly bound, failed binds, GPUs over-booked (/debug/inventory) and pods/s,
      and exits 1 if any gang was partly bound, a bind failed or a GPU was over-booked
)";

using Clock = std::chrono::steady_clock;

struct Options {
  uint16_t port = 8888;
  int nodes = 5000;
  int names = 0;  // node names per request; 0 = all
  double rate = 1000;
  int connections = 4;
  double duration = 10;
  double prioritize = 1;  // prioritize calls per filter
  double bind = 0;        // bind calls per filter
  std::string kind = "whole";
  long pid = 0;
  std::string write_cluster;
  bool closed_loop = false;
  int gangs = 0;  // --gangs N:MIN-MAX
  int gang_min = 2;
  int gang_max = 16;
  std::string flow = "podgroup";
};

// "N" or "N:MIN-MAX" into o; false when malformed.
bool ParseGangs(const std::string& v, Options* o) {
  int n = 0, lo = 2, hi = 16;
  int read = std::sscanf(v.c_str(), "%d:%d-%d", &n, &lo, &hi);
  if (read != 1 && read != 3) return false;
  if (n < 0 || lo < 1 || hi < lo) return false;
  o->gangs = n;
  o->gang_min = lo;
  o->gang_max = hi;
  return true;
}

long RssKiB(long pid) {
  if (pid <= 0) return -1;
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return v[i];
}

struct Stats {
  std::mutex mu;
  std::map<std::string, std::vector<double>> latency_ms;  // by verb
  std::map<std::string, long> errors;
};

void Connection(const Options& o, int id, const std::vector<std::string>& names, Clock::time_point start, Stats* stats) {
  gpusched::testing::HttpClient client(o.port);
  gpusched::bench::Kind kind = o.kind == "mgpu" ? gpusched::bench::Kind::kMgpu : gpusched::bench::Kind::kWhole;
  std::mt19937_64 rng(static_cast<uint64_t>(id) * 7919 + 1);
  std::uniform_real_distribution<double> unit(0, 1);
  double interval = static_cast<double>(o.connections) / o.rate;  // seconds between this connection's requests
  std::map<std::string, std::vector<double>> latency;
  std::map<std::string, long> errors;
  size_t per = o.names > 0 ? static_cast<size_t>(o.names) : names.size();
  for (long i = 0;; ++i) {
    auto due = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(i * interval));
    if (due >= start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration))) break;
    std::this_thread::sleep_until(due);
    std::string uid = fmt::format("load-{}-{}", id, i);
    // A window of the node names, as kube-scheduler samples them.
    size_t first = static_cast<size_t>(rng() % names.size());
    std::vector<std::string> window;
    for (size_t k = 0; k < per; ++k) window.push_back(names[(first + k) % names.size()]);
    std::string body = gpusched::testing::ArgsWithNames(gpusched::bench::PendingPodJson(kind, uid), window);
    auto timed = [&](const std::string& verb, const std::string& path, const std::string& payload, auto ok) {
      gpusched::testing::HttpReply r = client.Post(path, payload);
      double ms = std::chrono::duration<double, std::milli>(Clock::now() - due).count();
      latency[verb].push_back(ms);
      if (r.status != 200 || !ok(r.body)) ++errors[verb];
      return r;
    };
    gpusched::testing::HttpReply f = timed("filter", "/filter", body, [](const std::string& b) {
      return b.find(R"("Error":"")") != std::string::npos;
    });
    if (unit(rng) < o.prioritize) timed("prioritize", "/prioritize", body, [](const std::string& b) { return !b.empty() && b[0] == '['; });
    if (unit(rng) < o.bind) {
      size_t at = f.body.find(R"("NodeNames":[")");
      if (at != std::string::npos) {
        size_t begin = at + 14;
        std::string node = f.body.substr(begin, f.body.find('"', begin) - begin);
        timed("bind", "/bind", gpusched::testing::BindJson(uid, "bench", uid, node),
              [](const std::string& b) { return b.find(R"("Error":"")") != std::string::npos; });
      }
    }
  }
  std::lock_guard<std::mutex> lock(stats->mu);
  for (auto& [verb, v] : latency) stats->latency_ms[verb].insert(stats->latency_ms[verb].end(), v.begin(), v.end());
  for (auto& [verb, n] : errors) stats->errors[verb] += n;
}

// Returns the NodeNames array of a filter reply as JSON text ("[\"a\",\"b\"]"), or "" if it
// kept none. The client passes it on to prioritize as it is, so that its own work stays small
// beside the server's.
std::string KeptNames(const std::string& body) {
  size_t at = body.find(R"("NodeNames":[)");
  if (at == std::string::npos) return "";
  size_t begin = at + 12;
  size_t end = body.find(']', begin);
  if (end == std::string::npos || end == begin + 1) return "";
  return body.substr(begin, end + 1 - begin);
}

// Returns the host with the highest score of a HostPriorityList, or "".
std::string BestHost(const std::string& body) {
  rapidjson::Document doc;
  std::string best;
  int64_t best_score = -1;
  if (!gpusched::json::Parse(body, &doc).ok() || !doc.IsArray()) return best;
  for (const auto& v : doc.GetArray()) {
    if (v["Score"].GetInt64() > best_score) {
      best_score = v["Score"].GetInt64();
      best = v["Host"].GetString();
    }
  }
  return best;
}

// kube-scheduler's cycle, one pod at a time: filter (every node), prioritize (the nodes filter
// kept), bind (the best of them). Latency is measured per call, from its start.
void ClosedLoop(const Options& o, const std::vector<std::string>& names, Stats* stats) {
  gpusched::testing::HttpClient client(o.port);
  gpusched::bench::Kind kind = o.kind == "mgpu" ? gpusched::bench::Kind::kMgpu : gpusched::bench::Kind::kWhole;
  auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration));
  auto timed = [&](const std::string& verb, const std::string& path, const std::string& payload) {
    auto begin = Clock::now();
    gpusched::testing::HttpReply r = client.Post(path, payload);
    stats->latency_ms[verb].push_back(std::chrono::duration<double, std::milli>(Clock::now() - begin).count());
    if (r.status != 200) ++stats->errors[verb];
    return r;
  };
  std::string all = gpusched::testing::ArgsWithNames("{}", names);
  std::string all_names = all.substr(all.find(R"("NodeNames":)") + 12, std::string::npos);
  all_names.pop_back();
  auto args = [](const std::string& pod, const std::string& names_json) {
    return fmt::format(R"({{"Pod":{},"Nodes":null,"NodeNames":{}}})", pod, names_json);
  };
  for (long i = 0; Clock::now() < end; ++i) {
    std::string uid = fmt::format("cycle-{}", i);
    std::string pod = gpusched::bench::PendingPodJson(kind, uid);
    auto begin = Clock::now();
    gpusched::testing::HttpReply f = timed("filter", "/filter", args(pod, all_names));
    std::string kept = KeptNames(f.body);
    if (kept.empty()) {
      ++stats->errors["unschedulable"];
      break;  // the cluster is full
    }
    std::string node = kept.substr(2, kept.find('"', 2) - 2);
    if (kept.find(',') != std::string::npos) {  // kube-scheduler does not prioritize a single feasible node
      std::string best = BestHost(timed("prioritize", "/prioritize", args(pod, kept)).body);
      if (!best.empty()) node = best;
    }
    gpusched::testing::HttpReply b = timed("bind", "/bind", gpusched::testing::BindJson(uid, "bench", uid, node));
    if (b.body.find(R"("Error":"")") == std::string::npos) ++stats->errors["bind"];
    stats->latency_ms["cycle"].push_back(std::chrono::duration<double, std::milli>(Clock::now() - begin).count());
  }
}

// GPUs booked beyond what they have in /debug/inventory's answer: shares or memory of a GPU,
// whole GPUs of a node.
size_t OverbookedGpus(const std::string& inventory) {
  rapidjson::Document d;
  if (!gpusched::json::Parse(inventory, &d).ok() || !d.IsObject() || !d.HasMember("nodes")) return 0;
  size_t out = 0;
  for (const auto& n : d["nodes"].GetArray()) {
    if (n.HasMember("wholeGpus") && n["wholeGpus"]["used"].GetInt64() > n["wholeGpus"]["total"].GetInt64()) ++out;
    if (!n.HasMember("gpus")) continue;
    for (const auto& g : n["gpus"].GetArray()) {
      if (g["usedCorePercent"].GetInt64() > 100 || g["usedMemoryMiB"].GetInt64() > g["memoryMiB"].GetInt64()) ++out;
    }
  }
  return out;
}

// Every gang of the cluster file through the emulated kube-scheduler (see kUsage). Returns the
// exit code.
int GangLoop(const Options& o, const gpusched::ClusterObjects& cluster) {
  namespace t = gpusched::testing;
  gpusched::bench::Kind kind = o.kind == "mgpu" ? gpusched::bench::Kind::kMgpu : gpusched::bench::Kind::kWhole;
  bool cosched = o.flow == "coscheduling";
  t::HttpClient client(o.port);
  t::SchedulerEmulator scheduler(
      [&](std::string_view verb, const std::string& body) { return client.Post("/" + std::string(verb), body).body; }, cluster);
  size_t placed = 0, partial = 0, failed = 0, pods = 0;
  auto start = Clock::now();
  for (const gpusched::bench::GangJson& g : gpusched::bench::MakeGangs(kind, o.gangs, o.gang_min, o.gang_max, cosched)) {
    std::vector<t::EmulatedPod> members;
    for (const std::string& m : g.members) members.push_back(t::Emulated(m));
    t::GangOutcome out =
        scheduler.ScheduleGang(members, members.size(), cosched ? t::GangFlow::kCoscheduling : t::GangFlow::kPodGroupCycle);
    placed += out.bound == out.members ? 1 : 0;
    partial += out.partial() ? 1 : 0;
    failed += out.failed_binds;
    pods += out.bound;
  }
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  size_t over = OverbookedGpus(client.Get("/debug/inventory").body);
  std::printf("%d gangs of %d-%d members (%s, %s cluster of %d nodes), %.1f s: %zu placed, %zu partly bound, %zu failed binds, "
              "%zu GPUs over-booked; %zu pods bound, %.0f pods/s\n",
              o.gangs, o.gang_min, o.gang_max, cosched ? "Coscheduling" : "pod-group cycle", o.kind.c_str(), o.nodes, elapsed,
              placed, partial, failed, over, pods, static_cast<double>(pods) / elapsed);
  return partial == 0 && failed == 0 && over == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h" || i + 1 == argc) {
      std::fprintf(flag == "--help" || flag == "-h" ? stdout : stderr, "%s", kUsage);
      return flag == "--help" || flag == "-h" ? 0 : 2;
    }
    std::string v = argv[i + 1];
    if (flag == "--port") o.port = static_cast<uint16_t>(std::atoi(v.c_str()));
    else if (flag == "--nodes") o.nodes = std::atoi(v.c_str());
    else if (flag == "--names") o.names = std::atoi(v.c_str());
    else if (flag == "--rate") o.rate = std::atof(v.c_str());
    else if (flag == "--connections") o.connections = std::max(1, std::atoi(v.c_str()));
    else if (flag == "--duration") o.duration = std::atof(v.c_str());
    else if (flag == "--prioritize") o.prioritize = std::atof(v.c_str());
    else if (flag == "--bind") o.bind = std::atof(v.c_str());
    else if (flag == "--kind") o.kind = v;
    else if (flag == "--pid") o.pid = std::atol(v.c_str());
    else if (flag == "--write-cluster") o.write_cluster = v;
    else if (flag == "--closed-loop") o.closed_loop = v == "1" || v == "true";
    else if (flag == "--flow" && (v == "podgroup" || v == "coscheduling")) o.flow = v;
    else if (flag == "--gangs" && ParseGangs(v, &o)) continue;
    else {
      std::fprintf(stderr, "unknown flag, or a value it does not take: %s %s\n", flag.c_str(), v.c_str());
      return 2;
    }
  }
  gpusched::bench::Kind kind = o.kind == "mgpu" ? gpusched::bench::Kind::kMgpu : gpusched::bench::Kind::kWhole;
  gpusched::ClusterObjects cluster = gpusched::bench::MakeCluster(kind, o.nodes);
  if (!o.write_cluster.empty()) {
    std::ofstream(o.write_cluster) << gpusched::bench::ClusterListJson(
        cluster, gpusched::bench::MakeGangs(kind, o.gangs, o.gang_min, o.gang_max, o.flow == "coscheduling"));
    std::printf("wrote %s: %zu nodes, %zu pods\n", o.write_cluster.c_str(), cluster.nodes.size(), cluster.pods.size());
    return 0;
  }
  if (o.closed_loop && o.gangs > 0) return GangLoop(o, cluster);
  std::vector<std::string> names = gpusched::bench::NodeNames(cluster);
  long rss_before = RssKiB(o.pid);
  Stats stats;
  auto start = Clock::now() + std::chrono::milliseconds(100);
  std::vector<std::thread> threads;
  if (o.closed_loop) {
    start = Clock::now();
    ClosedLoop(o, names, &stats);
  } else {
    for (int c = 0; c < o.connections; ++c) threads.emplace_back(Connection, std::cref(o), c, std::cref(names), start, &stats);
    for (auto& t : threads) t.join();
  }
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  long rss_after = RssKiB(o.pid);
  if (o.closed_loop) {
    size_t pods = stats.latency_ms["cycle"].size();
    std::printf("closed loop, 1 connection, %.1f s, %s cluster of %d nodes: %zu pods, %.0f pods/s, %.3f ms per pod\n",
                elapsed, o.kind.c_str(), o.nodes, pods, static_cast<double>(pods) / elapsed,
                pods > 0 ? elapsed * 1000 / static_cast<double>(pods) : 0.0);
  } else {
    std::printf("%d connections, %.0f s, target %.0f filter/s, %d node names per request, %s cluster of %d nodes\n",
                o.connections, elapsed, o.rate, o.names > 0 ? o.names : o.nodes, o.kind.c_str(), o.nodes);
  }
  std::printf("%-11s %9s %9s %9s %9s %9s %7s\n", "verb", "requests", "rate/s", "p50 ms", "p99 ms", "max ms", "errors");
  for (auto& [verb, v] : stats.latency_ms) {
    size_t n = v.size();
    double p50 = Percentile(v, 0.50);
    double p99 = Percentile(v, 0.99);
    double max = *std::max_element(v.begin(), v.end());
    std::printf("%-11s %9zu %9.0f %9.3f %9.3f %9.3f %7ld\n", verb.c_str(), n, static_cast<double>(n) / elapsed, p50, p99, max,
                stats.errors[verb]);
  }
  if (rss_before >= 0) {
    std::printf("server RSS: %.1f MiB before, %.1f MiB after (%+.1f MiB)\n", rss_before / 1024.0, rss_after / 1024.0,
                (rss_after - rss_before) / 1024.0);
  }
  long errors = 0;
  for (auto& [verb, n] : stats.errors) errors += n;
  return errors == 0 ? 0 : 1;
}
