#include "gpusched/extender/wire.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <fstream>
#include <iterator>

#include "cluster_json.h"

namespace gpusched::extender {
namespace wire_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const char* kPod = R"({"metadata":{"name":"p","namespace":"ns","uid":"u"},"spec":{"containers":[{"name":"c"}]}})";

TEST(Wire, ParsesNodeNamesRequest) {
  auto args = ParseExtenderArgs(fmt::format(R"({{"Pod":{},"Nodes":null,"NodeNames":["a","b"]}})", kPod));
  ASSERT_TRUE(args.ok()) << args.status().ToString();
  EXPECT_FALSE((*args)->with_nodes);
  EXPECT_THAT((*args)->node_names, ElementsAre("a", "b"));
  EXPECT_EQ((*args)->pod.uid, "u");
}

// What one parse gives, as text: the pod's UID and name, the names, or the error.
std::string Outcome(const StatusOr<std::unique_ptr<ExtenderArgs>>& args) {
  if (!args.ok()) return "error: " + std::string(args.status().message());
  std::string out = (*args)->pod.uid + "/" + (*args)->pod.name + (*args)->pod.spec_error + ":";
  for (std::string_view n : (*args)->node_names) out += std::string(n) + ",";
  return out + ((*args)->with_nodes ? " with nodes" : "");
}

// A remembered NodeNames list is taken without parsing it again; every body still reads exactly
// as without the memo, whatever the key order, case or spacing, and whatever follows the list.
TEST(Wire, ARememberedNodeNamesListReadsExactlyAsAFullParse) {
  std::string other = R"({"metadata":{"name":"q","namespace":"ns","uid":"v"},"spec":{"containers":[{"name":"c"}]}})";
  std::vector<std::string> bodies = {
      fmt::format(R"({{"Pod":{},"Nodes":null,"NodeNames":["a","b"]}})", kPod),
      fmt::format(R"({{"Pod":{},"Nodes":null,"NodeNames":["a","b"]}})", other),
      fmt::format(R"({{ "nodenames" : ["a","b"] , "pod" : {} }})", kPod),
      fmt::format(R"({{"Pod":{},"NodeNames":["a","b","c"]}})", kPod),
      fmt::format(R"({{"Pod":{},"NodeNames":["a","b"],"Nodes":null}} x)", kPod),
      fmt::format(R"({{"Pod":{},"NodeNames":["a","b"],"Pod":{}}})", kPod, other),
      fmt::format(R"({{"Pod":{},"NodeNames":["a","b"],"Nodes":{{"items":[]}}}})", kPod),
      fmt::format(R"({{"Pod":null,"NodeNames":["a","b"]}})"),
      fmt::format(R"({{"Pod":{},"NodeNames":["a","b"]]}})", kPod),
      fmt::format(R"({{"Pod":{},"NodeNames":["a<b","b"]}})", kPod),
      fmt::format(R"({{"Pod":{},"NodeNames":["a<b","b"]}})", other),
      fmt::format(R"({{"Pod":{},"NodeNames":["a\u003cb","b"]}})", kPod),
      fmt::format(R"({{"Pod":{},"NodeNames":["a\u003cb","b"]}})", other),
      fmt::format(R"({{"Pod":{},"NodeNames":[]}})", kPod),
      fmt::format(R"({{"Pod":{},"NodeNames":[]}})", other),
  };
  NodeNamesMemo memo;
  for (const std::string& body : bodies) {
    EXPECT_EQ(Outcome(ParseExtenderArgs(body, &memo)), Outcome(ParseExtenderArgs(body))) << body;
  }
  // The second body above was read from the memo: its names point into the remembered list.
  auto args = ParseExtenderArgs(bodies[1], &memo);
  ASSERT_TRUE(args.ok());
  auto list = memo.Match(R"(["a","b"])");
  ASSERT_NE(list, nullptr);
  EXPECT_EQ((*args)->node_names[0].data(), list->names[0].data());
  // Names Go would escape are never remembered, written either way.
  EXPECT_EQ(memo.Match(R"(["a<b","b"])"), nullptr);
  EXPECT_EQ(memo.Match(R"(["a\u003cb","b"])"), nullptr);
  // Every node kept: the answer echoes the remembered text, byte for byte what it would write.
  FilterResult all{.kept = {0, 1}};
  EXPECT_EQ(EncodeFilterResult(**args, all), EncodeFilterResult(**ParseExtenderArgs(bodies[1]), all));
  FilterResult some{.kept = {1}, .failed = {{0, "full"}}};
  EXPECT_EQ(EncodeFilterResult(**args, some), EncodeFilterResult(**ParseExtenderArgs(bodies[1]), some));
}

// Pods as a real API server writes them (managedFields, canonical quantities such as "8k", a
// terminating pod, native sidecars, claims), in kube-scheduler's compact envelope: the second
// body of each pair is read through the remembered list and reads as the full parse does.
TEST(Wire, ApiServerPodsReadThroughARememberedListAsInFull) {
  std::ifstream in(std::string(GPUSCHED_SOURCE_DIR) + "/test/data/apiserver/pods.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  rapidjson::Document list;
  ASSERT_FALSE(list.Parse(text.c_str()).HasParseError());
  ASSERT_GT(list["items"].Size(), 5u);
  NodeNamesMemo memo;
  for (const rapidjson::Value& item : list["items"].GetArray()) {
    rapidjson::StringBuffer pod;
    rapidjson::Writer<rapidjson::StringBuffer> writer(pod);
    item.Accept(writer);
    std::string body = testing::ArgsWithNames(pod.GetString(), {"gpu-a100-01", "mgpu-a10-01", "dra-h200-01"});
    EXPECT_EQ(Outcome(ParseExtenderArgs(body, &memo)), Outcome(ParseExtenderArgs(body)));
    auto remembered = ParseExtenderArgs(body, &memo);
    ASSERT_TRUE(remembered.ok()) << remembered.status().ToString();
    EXPECT_NE((*remembered)->remembered, nullptr);  // read through the memo
    auto full = ParseExtenderArgs(body);
    ASSERT_TRUE(full.ok());
    EXPECT_EQ((*remembered)->pod, (*full)->pod) << (*full)->pod.name;
  }
}

// The list used last stays: the list of every node, matched by each filter, is never pushed out
// by the changing lists of kept nodes.
TEST(Wire, TheNodeNamesListUsedLastIsKept) {
  NodeNamesMemo memo(2);
  std::vector<std::string_view> all = {"a", "b", "c"}, one = {"a", "b"}, two = {"b", "c"};
  memo.Remember(all);
  memo.Remember(one);
  ASSERT_NE(memo.Match(R"(["a","b","c"])"), nullptr);
  memo.Remember(two);
  EXPECT_NE(memo.Match(R"(["a","b","c"])"), nullptr);
  EXPECT_EQ(memo.Match(R"(["a","b"])"), nullptr);
}

TEST(Wire, AcceptsKeysInAnyCase) {
  for (const char* keys : {R"({{"pod":{},"nodes":null,"nodenames":["a"]}})", R"({{"POD":{},"nodeNames":["a"]}})"}) {
    auto args = ParseExtenderArgs(fmt::format(fmt::runtime(keys), kPod));
    ASSERT_TRUE(args.ok()) << keys << args.status().ToString();
    EXPECT_THAT((*args)->node_names, ElementsAre("a"));
  }
}

TEST(Wire, ParsesNodesRequest) {
  std::string body = testing::ArgsWithNodes(kPod, {testing::NvidiaNode("n1", 8).ToJson(), testing::NvidiaNode("n2", 4).ToJson()});
  auto args = ParseExtenderArgs(body);
  ASSERT_TRUE(args.ok()) << args.status().ToString();
  EXPECT_TRUE((*args)->with_nodes);
  EXPECT_THAT((*args)->node_names, ElementsAre("n1", "n2"));
  EXPECT_EQ((*args)->nodes[1].allocatable.nvidia_gpus, 4);
}

TEST(Wire, RequestErrorsNameTheField) {
  EXPECT_THAT(ParseExtenderArgs("{").status().message(), HasSubstr("malformed JSON"));
  EXPECT_THAT(ParseExtenderArgs("[]").status().message(), HasSubstr("ExtenderArgs: want object, got array"));
  EXPECT_THAT(ParseExtenderArgs(R"({"NodeNames":[]})").status().message(), HasSubstr("ExtenderArgs.Pod: missing"));
  EXPECT_THAT(ParseExtenderArgs(fmt::format(R"({{"Pod":{},"Nodes":null,"NodeNames":null}})", kPod)).status().message(),
              HasSubstr("both Nodes and NodeNames are null"));
  EXPECT_THAT(ParseExtenderArgs(fmt::format(R"({{"Pod":{},"NodeNames":"a"}})", kPod)).status().message(),
              HasSubstr("ExtenderArgs.NodeNames: want array, got string"));
  EXPECT_THAT(ParseExtenderArgs(fmt::format(R"({{"Pod":{},"NodeNames":["a",7]}})", kPod)).status().message(),
              HasSubstr("ExtenderArgs.NodeNames[1]: want string, got number"));
  EXPECT_THAT(ParseExtenderArgs(fmt::format(R"({{"Pod":{},"Nodes":{{"items":[{{"metadata":{{}}}}]}}}})", kPod))
                  .status()
                  .message(),
              HasSubstr("Nodes.items[0].metadata.name: missing"));
}

TEST(Wire, FilterResultMirrorsNodeNames) {
  auto args = ParseExtenderArgs(fmt::format(R"({{"Pod":{},"Nodes":null,"NodeNames":["a","b","c"]}})", kPod));
  FilterResult r{.kept = {0}, .failed = {{1, "busy"}}, .unresolvable = {{2, "mode"}}};
  EXPECT_EQ(EncodeFilterResult(**args, r),
            R"({"Nodes":null,"NodeNames":["a"],"FailedNodes":{"b":"busy"},"FailedAndUnresolvableNodes":{"c":"mode"},"Error":""})");
}

TEST(Wire, FilterResultMirrorsNodesAndEchoesThemVerbatim) {
  std::string n1 = testing::NvidiaNode("n1", 8).ToJson();
  auto args = ParseExtenderArgs(testing::ArgsWithNodes(kPod, {n1, testing::NvidiaNode("n2", 4).ToJson()}));
  FilterResult r{.kept = {0}, .failed = {{1, "busy"}}};
  std::string out = EncodeFilterResult(**args, r);
  EXPECT_EQ(out, fmt::format(R"({{"Nodes":{{"metadata":{{}},"items":[{}]}},"NodeNames":null,"FailedNodes":{{"n2":"busy"}},"FailedAndUnresolvableNodes":{{}},"Error":""}})", n1));
}

TEST(Wire, FilterErrorSetsOnlyError) {
  EXPECT_EQ(EncodeFilterError("bad \"pod\""),
            R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":"bad \"pod\""})");
}

TEST(Wire, HostPrioritiesAreABareArrayWithIntegerScores) {
  std::vector<HostPriority> p = {{"a", 10}, {"b", 0}};
  EXPECT_EQ(EncodeHostPriorities(p), R"([{"Host":"a","Score":10},{"Host":"b","Score":0}])");
  EXPECT_EQ(EncodeHostPriorities({}), "[]");
}

TEST(Wire, BindingArgs) {
  auto b = ParseBindingArgs(R"({"PodName":"p","PodNamespace":"ns","PodUID":"u","Node":"n"})");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->pod_uid, "u");
  EXPECT_EQ(b->node, "n");
  EXPECT_TRUE(ParseBindingArgs(R"({"podname":"p","podnamespace":"ns","poduid":"u","node":"n"})").ok());
  EXPECT_THAT(ParseBindingArgs(R"({"PodName":"p","Node":"n"})").status().message(), HasSubstr("PodUID: missing"));
  EXPECT_THAT(ParseBindingArgs(R"({"PodUID":1,"Node":"n"})").status().message(),
              HasSubstr("ExtenderBindingArgs.PodUID: want string, got number"));
  EXPECT_EQ(EncodeBindingResult(""), R"({"Error":""})");
}

}  // namespace wire_test
}  // namespace gpusched::extender
