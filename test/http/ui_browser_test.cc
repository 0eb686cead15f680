// /ui in a real browser (Debian's headless Chromium) against a real server: every demo node with
// its state and its GPU cells, a switching node's blockers, 5,000 nodes loaded within 2 s with
// only the rows in view in the DOM; a screenshot of the demo goes to the build folder. Chromium
// is kept off every network but 127.0.0.1.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <regex>
#include <string>

#include "cluster_json.h"
#include "demo/demo_cluster.h"
#include "test_server.h"

namespace gpusched::testing {
namespace ui_browser_test {

using ::testing::HasSubstr;

// Runs headless Chromium on `url` with `mode` (--dump-dom, or --screenshot=FILE); returns stdout.
std::string Chromium(const std::string& url, const std::string& mode) {
  std::string command =
      "chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --disable-background-networking "
      "--disable-component-update --disable-sync --disable-default-apps --disable-extensions --disable-breakpad "
      "--metrics-recording-only --host-resolver-rules='MAP * ~NOTFOUND, EXCLUDE 127.0.0.1' --hide-scrollbars "
      "--window-size=1280,640 --virtual-time-budget=5000 " + mode + " '" + url + "' 2>/dev/null";
  FILE* p = popen(command.c_str(), "r");
  std::string out;
  std::array<char, 65536> buf;
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
  pclose(p);
  return out;
}

std::string Url(const TestServer& server, const std::string& path) {
  return "http://127.0.0.1:" + std::to_string(server.port()) + path;
}

// The GPU cells of node `name`'s row in `dom`, or -1 if the row is not there.
int CellsOf(const std::string& dom, const std::string& name) {
  size_t at = dom.find("data-node=\"" + name + "\"");
  if (at == std::string::npos) return -1;
  std::string row = dom.substr(at, dom.find("</span></div>", at) - at);  // a row ends with its GPU cells
  int cells = 0;
  for (size_t p = row.find("class=\"gpu"); p != std::string::npos; p = row.find("class=\"gpu", p + 1)) cells += row[p + 10] != 's';
  return cells;
}

TEST(UiBrowser, EveryDemoNodeShowsItsStateAndItsGpus) {
  TestServer server{std::string(demo::DemoClusterJson())};
  std::string dom = Chromium(Url(server, "/ui"), "--dump-dom");
  ASSERT_THAT(dom, HasSubstr("data-loaded=\"true\"")) << dom.substr(0, 2000);
  // name, state, GPU cells (DRA: the devices of its slices; whole-GPU: the node's GPUs)
  const std::vector<std::tuple<std::string, std::string, int>> nodes = {
      {"dra-h200-01", "ready", 4},   {"gpu-a100-01", "ready", 8},       {"gpu-a100-02", "ready", 8},
      {"gpu-badlabel-01", "invalid", 4}, {"gpu-switch-01", "switching", 8}, {"mgpu-a10-01", "ready", 4},
      {"mgpu-mixed-01", "ready", 4}};
  for (const auto& [name, state, cells] : nodes) {
    EXPECT_THAT(dom, HasSubstr("data-node=\"" + name + "\" data-state=\"" + state + "\"")) << name;
    EXPECT_EQ(CellsOf(dom, name), cells) << name;
  }
  EXPECT_THAT(dom, HasSubstr("7 of 7 nodes"));
  EXPECT_THAT(dom, HasSubstr("fragmented (FGD)"));
  Chromium(Url(server, "/ui"), "--screenshot=" + std::string(GPUSCHED_BUILD_DIR) + "/ui-demo.png");
}

// The detail panel of a page, from its dumped DOM.
std::string Panel(const std::string& dom) {
  size_t detail = dom.find("<aside id=\"detail\"");
  return detail == std::string::npos ? "" : dom.substr(detail, dom.find("</aside>", detail) - detail);
}

TEST(UiBrowser, AMigGpuShowsItsInstancesAndADriftingGpuIsMarked) {
  TestServer server{std::string(demo::DemoClusterJson())};
  std::string dom = Chromium(Url(server, "/ui#gpu=mgpu-mixed-01/2"), "--dump-dom");
  ASSERT_THAT(dom, HasSubstr("data-loaded=\"true\""));
  size_t row = dom.find("data-node=\"mgpu-mixed-01\"");
  ASSERT_NE(row, std::string::npos);
  std::string cells = dom.substr(row, dom.find("</span></div>", row) - row);
  size_t mig = cells.find("class=\"gpu mig\"");
  ASSERT_NE(mig, std::string::npos);
  std::string mig_cell = cells.substr(mig, cells.find("</div>", mig) - mig);
  EXPECT_THAT(mig_cell, HasSubstr("MIG: 3g.40gb, 2g.20gb, 1g.10gb"));
  EXPECT_THAT(mig_cell, HasSubstr("<b style=\"left:75%;width:12.5%\"></b>"));  // 1g.10gb on slice 6 of 8
  EXPECT_THAT(cells, HasSubstr("class=\"gpu drift\""));
  EXPECT_THAT(cells, HasSubstr("GPU 3 Tesla-T4: 0% compute, 0% memory, drift: used with no pod booked on it"));
  EXPECT_THAT(dom, HasSubstr("drifting GPUs <b>1</b>"));
  EXPECT_THAT(dom, HasSubstr("idle GPUs <b>22</b>"));  // the MIG GPU, unused as it is, is not one
  std::string panel = Panel(dom);
  EXPECT_THAT(panel, HasSubstr("<h3>MIG instances</h3><ul><li>3g.40gb on memory slices 0-3, 40192 MiB</li>"));
  std::string node = Panel(Chromium(Url(server, "/ui#node=mgpu-mixed-01"), "--dump-dom"));
  EXPECT_THAT(node, HasSubstr("<h3>Accounting drift (node agent)</h3><ul><li>GPU 3: used with no pod booked on it</li>"));
  std::string peers = Panel(Chromium(Url(server, "/ui#gpu=mgpu-mixed-01/0"), "--dump-dom"));
  EXPECT_THAT(peers, HasSubstr("<li>NVLink: none</li><li>PCIe switch: 1</li>"));
}

// A DRA node with a partitionable H200 (the full GPU and three MIG placements draw on one counter
// set of 8 memory slices; a 3g.71gb on slices 4-7 held by a pod) and a plain GPU.
std::string PartitionedDraCluster() {
  std::string slices_all, mig;
  for (int i = 0; i < 8; ++i) slices_all += fmt::format(R"({}"memory-slice-{}":{{"value":"1"}})", i ? "," : "", i);
  auto device = [](const std::string& name, const std::string& profile, int first, int count) {
    std::string counters;
    for (int i = first; i < first + count; ++i) counters += fmt::format(R"({}"memory-slice-{}":{{"value":"1"}})", i > first ? "," : "", i);
    return fmt::format(R"({{"name":"{}","attributes":{{"type":{{"string":"{}"}}{}}},)"
                       R"("consumesCounters":[{{"counterSet":"gpu-0-counter-set","counters":{{{}}}}}]}})",
                       name, profile.empty() ? "gpu" : "mig", profile.empty() ? "" : R"(,"profile":{"string":")" + profile + "\"}",
                       counters);
  };
  return fmt::format(R"({{"apiVersion":"v1","kind":"List","items":[
    {{"apiVersion":"v1","kind":"Node","metadata":{{"name":"dra-mig-01","uid":"n1","labels":{{"vke.node.gpu.schedule":"nvidia-dra"}}}},
     "status":{{"allocatable":{{"cpu":"64","memory":"512Gi","pods":"110"}}}}}},
    {{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{{"name":"dra-mig-01-gpu"}},
     "spec":{{"driver":"gpu.nvidia.com","nodeName":"dra-mig-01","pool":{{"name":"dra-mig-01","generation":1,"resourceSliceCount":1}},
      "sharedCounters":[{{"name":"gpu-0-counter-set","counters":{{{}}}}}],
      "devices":[{},{},{},{},{{"name":"gpu-1","attributes":{{"type":{{"string":"gpu"}}}}}}]}}}},
    {{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{{"name":"mig","namespace":"ml","uid":"c1"}},
     "spec":{{"devices":{{"requests":[{{"name":"gpu","exactly":{{"deviceClassName":"mig.nvidia.com","count":1}}}}]}}}},
     "status":{{"allocation":{{"devices":{{"results":[{{"request":"gpu","driver":"gpu.nvidia.com","pool":"dra-mig-01",
       "device":"gpu-0-mig-3g71gb-9-4"}}]}}}},"reservedFor":[{{"resource":"pods","name":"infer","uid":"p1"}}]}}}},
    {{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"infer","namespace":"ml","uid":"p1"}},
     "spec":{{"nodeName":"dra-mig-01","containers":[{{"name":"c","resources":{{"claims":[{{"name":"gpu"}}]}}}}],
      "resourceClaims":[{{"name":"gpu","resourceClaimName":"mig"}}]}},"status":{{"phase":"Running"}}}}]}})",
                     slices_all, device("gpu-0", "", 0, 8), device("gpu-0-mig-1g18gb-19-0", "1g.18gb", 0, 1),
                     device("gpu-0-mig-1g18gb-19-1", "1g.18gb", 1, 1), device("gpu-0-mig-3g71gb-9-4", "3g.71gb", 4, 4));
}

TEST(UiBrowser, ADraGpuAndItsMigPlacementsShareOneCellThatShowsTheHeldSlices) {
  TestServer server{PartitionedDraCluster()};
  std::string dom = Chromium(Url(server, "/ui#gpu=dra-mig-01/0"), "--dump-dom");
  ASSERT_THAT(dom, HasSubstr("data-loaded=\"true\"")) << dom.substr(0, 2000);
  EXPECT_EQ(CellsOf(dom, "dra-mig-01"), 2);  // gpu-0 with its placements, gpu-1
  EXPECT_THAT(dom, HasSubstr("class=\"gpu mig\""));
  EXPECT_THAT(dom, HasSubstr("gpu-0: 50% compute, 50% memory, MIG: 3g.71gb"));
  EXPECT_THAT(dom, HasSubstr("<b style=\"left:50%;width:50%\"></b>"));
  std::string panel = Panel(dom);
  EXPECT_THAT(panel, HasSubstr("<li>3g.71gb on memory slices 4-7</li>"));
  EXPECT_THAT(panel, HasSubstr("<li>claim ml/mig (gpu-0-mig-3g71gb-9-4)</li>"));
}

// Issue 34 §1: a whole-GPU node of four PCIe cards in two NVLink pairs; the agent read the
// kubelet's PodResources: GPU0 and GPU2 hold a pod each.
TEST(UiBrowser, ANodesNvlinkIslandsAndItsBusyWholeGpusAreShown) {
  NodeJson node = NvidiaNode("pcie-01", 4);
  node.extra_annotations["gpusched.io/gpu-devices"] = LinkedGpusAnnotation("pcie-01", {{1}, {0}, {3}, {2}}, std::map<int, std::string>{{0, "a"}, {2, "b"}});
  std::vector<std::string> items = {node.ToJson()};
  for (const char* pod : {"a", "b"}) {
    items.push_back(PodJson{.name = pod, .uid = pod, .node = "pcie-01", .phase = "Running", .containers = {WholeGpus("c", 1)}}.ToJson());
  }
  TestServer server{ListJson(items)};
  std::string dom = Chromium(Url(server, "/ui#node=pcie-01"), "--dump-dom");
  ASSERT_THAT(dom, HasSubstr("data-loaded=\"true\""));
  EXPECT_THAT(Panel(dom), HasSubstr("<h3>NVLink islands</h3><ul><li>GPU0+GPU1</li><li>GPU2+GPU3</li>"
                                    "<li>largest NVLink-connected set of free GPUs: GPU1</li></ul>"));
  for (const char* cell : {"GPU 0 NVIDIA-A100: 100% compute", "GPU 1 NVIDIA-A100: 0% compute",
                                  "GPU 2 NVIDIA-A100: 100% compute", "GPU 3 NVIDIA-A100: 0% compute"}) {
    EXPECT_THAT(dom, HasSubstr(cell)) << "exactly the GPUs the kubelet gave";
  }
  EXPECT_THAT(Panel(Chromium(Url(server, "/ui#gpu=pcie-01/2"), "--dump-dom")), HasSubstr("<li>default/b</li>"));
}

// Issue 34 §2: nodes in two NVLink cliques; the header counts the domains, the stranded GPUs and
// the largest gang of idle nodes one domain holds; a node's panel names its domain.
TEST(UiBrowser, TheHeaderShowsDomainsAndTheLargestGangInOne) {
  std::vector<std::string> items;
  for (const char* name : {"a1", "a2", "b1"}) {
    NodeJson n = NvidiaNode(name, 4);
    n.extra_labels["nvidia.com/gpu.clique"] = name[0] == 'a' ? "c.A" : "c.B";
    items.push_back(n.ToJson());
  }
  items.push_back(PodJson{.name = "p", .uid = "p", .node = "a1", .phase = "Running", .containers = {WholeGpus("c", 1)}}.ToJson());
  TestServer server{ListJson(items)};
  std::string dom = Chromium(Url(server, "/ui#node=a1"), "--dump-dom");
  ASSERT_THAT(dom, HasSubstr("data-loaded=\"true\""));
  EXPECT_THAT(dom, HasSubstr("domains <b>2</b>"));
  EXPECT_THAT(dom, HasSubstr("stranded GPUs <b>3</b>"));
  EXPECT_THAT(dom, HasSubstr("largest gang in one domain <b>1 idle nodes (c.A)</b>"));
  EXPECT_THAT(Panel(dom), HasSubstr("<h3>Domain</h3><p>nvidia.com/gpu.clique=c.A: 2 nodes, 1 idle, 7 GPUs free, 3 stranded</p>"));
}

// Issue 34 §2: gang ml/train (three 4-GPU members) fits nowhere now, and clique A is the only one
// that could hold it empty: the header names A as kept for the gang (gang_reservation.h), and
// whether it drains (no pod of another scheduler runs there: gang_domains.h's drain wait).
TEST(UiBrowser, TheHeaderNamesTheDomainKeptForAWaitingGang) {
  std::vector<std::string> items = testing::CliqueNodes({"a1", "a2", "a3", "b1"}, 4);
  for (const char* node : {"a1", "b1"}) {
    items.push_back(PodJson{.name = node, .uid = node, .node = node, .phase = "Running", .containers = {WholeGpus("c", 1)}}.ToJson());
  }
  for (std::string& gang : testing::GangJson("ml", "train", 3, 3, 4)) items.push_back(std::move(gang));
  TestServer server{ListJson(items)};
  std::string dom = Chromium(Url(server, "/ui"), "--dump-dom");
  ASSERT_THAT(dom, HasSubstr("data-loaded=\"true\""));
  EXPECT_THAT(dom, HasSubstr("kept for gang ml/train <b>c.A (drains)</b>"));

  // A CPU-only pod of the default scheduler on a2: more may come, the domain no longer drains.
  items.push_back(PodJson{.name = "job", .uid = "job", .node = "a2", .phase = "Running",
                          .containers = {{.name = "c", .requests = {{"cpu", "8"}}}}, .scheduler = "default-scheduler"}
                      .ToJson());
  server.Reload(ListJson(items));
  dom = Chromium(Url(server, "/ui"), "--dump-dom");
  ASSERT_THAT(dom, HasSubstr("data-loaded=\"true\""));
  EXPECT_THAT(dom, HasSubstr("kept for gang ml/train <b>c.A (other schedulers' pods run there)</b>"));
  EXPECT_THAT(dom, HasSubstr("1 running other schedulers' pods"));
}

// Issue 34 §2: the node list is grouped by domain, each under a heading row with the domain's
// figures, whatever order the nodes came in; nodes without the label come last, under their own.
TEST(UiBrowser, TheNodeListIsGroupedByDomainUnderHeadingsWithTheirFigures) {
  std::vector<std::string> items;
  for (const char* name : {"a1", "b1", "a2", "x1"}) {
    NodeJson n = NvidiaNode(name, 4);
    if (name[0] != 'x') n.extra_labels["nvidia.com/gpu.clique"] = name[0] == 'a' ? "c.A" : "c.B";
    items.push_back(n.ToJson());
  }
  items.push_back(PodJson{.name = "p", .uid = "p", .node = "b1", .phase = "Running", .containers = {WholeGpus("c", 1)}}.ToJson());
  TestServer server{ListJson(items)};
  std::string dom = Chromium(Url(server, "/ui"), "--dump-dom");
  ASSERT_THAT(dom, HasSubstr("data-loaded=\"true\""));
  std::vector<size_t> at;
  for (const char* mark : {"data-domain=\"c.A\"", "data-node=\"a1\"", "data-node=\"a2\"", "data-domain=\"c.B\"",
                                  "data-node=\"b1\"", "data-domain=\"\"", "data-node=\"x1\""}) {
    at.push_back(dom.find(mark));
    ASSERT_NE(at.back(), std::string::npos) << mark;
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << "headings, each followed by its domain's nodes";
  EXPECT_THAT(dom, HasSubstr("<b>nvidia.com/gpu.clique=c.B</b></span><span>1 nodes, 0 idle, 3 GPUs free, 3 stranded</span>"));
  EXPECT_THAT(dom, HasSubstr("<b>no nvidia.com/gpu.clique label</b>"));
  EXPECT_THAT(dom, HasSubstr("4 of 4 nodes")) << "headings are not counted as nodes";
}

TEST(UiBrowser, ASwitchingNodeShowsTheOldModePodsThatBlockIt) {
  TestServer server{std::string(demo::DemoClusterJson())};
  std::string dom = Chromium(Url(server, "/ui#node=gpu-switch-01"), "--dump-dom");
  size_t detail = dom.find("<aside id=\"detail\"");
  ASSERT_NE(detail, std::string::npos);
  std::string panel = dom.substr(detail, dom.find("</aside>", detail) - detail);
  EXPECT_THAT(panel, HasSubstr("Blockers (old-mode pods)</h3><ul><li>ml/legacy-train (nvidia)</li>"));
  EXPECT_THAT(panel, HasSubstr("node is switching from nvidia to mgpu"));
  // The page asks /explain about a pod: here one bound without its spec kept, which it says.
  std::string explained = Chromium(Url(server, "/ui#explain=ml/legacy-train"), "--dump-dom");
  EXPECT_THAT(explained, HasSubstr("<h2>ml/legacy-train</h2><pre>pod ml/legacy-train is bound to gpu-switch-01"));
}

// Seconds Chromium takes to load `url` and dump its DOM into *dom (its startup included).
double TimedDump(const std::string& url, std::string* dom) {
  auto start = std::chrono::steady_clock::now();
  *dom = Chromium(url, "--dump-dom");
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string NodesJson(int n) {
  std::vector<std::string> items;
  for (int i = 0; i < n; ++i) {
    std::string name = "gpu-" + std::to_string(10000 + i);
    items.push_back(NvidiaNode(name, 8).ToJson());
    items.push_back(PodJson{.name = "p" + std::to_string(i), .namespace_name = "ml", .uid = "u" + std::to_string(i),
                            .node = name, .phase = "Running", .containers = {WholeGpus("c", 1 + i % 8)}}
                        .ToJson());
  }
  return ListJson(items);
}

// The load is timed from outside the page, in real time (the page's own clock runs on Chromium's
// virtual time here): against the same page with one node, whose time is Chromium's own startup.
// With the virtual time budget the page also refreshes once more, so it is timed twice over. The
// figure is recorded (load_s_beyond_startup) and tracked in docs/performance.md, not asserted
// tightly: a unit test is no benchmark, and this machine's Chromium alone moves it by a second.
// The bound here catches a page that draws every row or parses the inventory more than twice.
TEST(UiBrowser, FiveThousandNodesLoadWithOnlyTheVisibleRowsDrawn) {
  TestServer one{NodesJson(1)};
  TestServer many{NodesJson(5000)};
  std::string dom;
  double baseline = TimedDump(Url(one, "/ui"), &dom);
  ASSERT_THAT(dom, HasSubstr("1 of 1 nodes"));
  double loaded = TimedDump(Url(many, "/ui"), &dom);
  ASSERT_THAT(dom, HasSubstr("data-loaded=\"true\""));
  EXPECT_THAT(dom, HasSubstr("5000 of 5000 nodes"));
  EXPECT_LT(loaded - baseline, 8.0) << "fetch, parse and draw of 5,000 nodes, twice, beyond Chromium's startup";
  RecordProperty("load_s_beyond_startup", std::to_string(loaded - baseline));
  int rows = 0;
  for (size_t p = dom.find("class=\"row\""); p != std::string::npos; p = dom.find("class=\"row\"", p + 1)) ++rows;
  EXPECT_GT(rows, 10);
  EXPECT_LT(rows, 100);  // virtualized
  // Scrolling through all 5,000 a screen at a time (about 180 screens): each screen is drawn well
  // within a frame's budget (the figure, recorded, is 26 ms on an idle 2-core machine). The bound
  // catches a page that draws every row per screen (seconds each), not a slow machine: the figure
  // is the difference of two Chromium runs, and a busy 2-core machine drew a screen in 51 ms.
  double scrolled = TimedDump(Url(many, "/ui#measure-scroll"), &dom);
  std::smatch s;
  ASSERT_TRUE(std::regex_search(dom, s, std::regex("data-scroll-steps=\"([0-9]+)\""))) << dom.substr(0, 500);
  int screens = std::stoi(s[1]);
  EXPECT_GT(screens, 100);
  double per_screen = (scrolled - loaded) / screens;
  EXPECT_LT(per_screen, 0.25) << "seconds to draw one screen of rows, on average";
  RecordProperty("scroll_s_per_screen", std::to_string(per_screen));
}

}  // namespace ui_browser_test
}  // namespace gpusched::testing
