// ExplanationJson: a large explanation is written in two halves, the second on the helper thread;
// the text is the one written on one thread.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <fmt/format.h>

#include <limits>

#include "gpusched/common/helper_thread.h"
#include "gpusched/extender/explain.h"
#include "gpusched/json/json.h"

namespace gpusched::extender {
namespace explain_json_test {

Explanation ManyNodes(size_t count) {
  Explanation e{.pod = "ml/why", .request_json = "{}", .summary = "made up"};
  for (size_t i = 0; i < count; ++i) {
    e.nodes.push_back(NodeExplanation{.node = fmt::format("n{:04}", i), .fits = i % 3 != 0, .mode = "mgpu", .state = "ready"});
    if (i % 3 == 0) e.nodes.back().reasons.push_back(fmt::format("reason {}", i));
  }
  return e;
}

TEST(ExplanationJson, TheHelpersHalfJoinsTheTextWrittenOnOneThread) {
  HelperThread helper;
  for (size_t count : {0, 1, 511, 512, 513, 2000}) {
    Explanation e = ManyNodes(count);
    std::string alone = ExplanationJson(e);
    EXPECT_EQ(ExplanationJson(e, &helper), alone) << count;
    rapidjson::Document d;
    ASSERT_TRUE(json::Parse(alone, &d).ok()) << count;
    ASSERT_EQ(d["nodes"].Size(), count);
    if (count > 0) {
      const auto& last = d["nodes"][static_cast<rapidjson::SizeType>(count - 1)];
      EXPECT_EQ(std::string(last["node"].GetString()), fmt::format("n{:04}", count - 1));
    }
  }
}

// A soft policy scores a node where the pod fits but no GPU share suits it at -infinity: the answer
// stays JSON, with a null score beside the rank (it used to read "-inf", which no parser takes).
TEST(ExplanationJson, AScoreThatIsNotANumberIsNullAndTheAnswerStaysJson) {
  Explanation e{.pod = "ml/why", .request_json = "{}", .summary = "1/1 nodes fit"};
  e.nodes.push_back(NodeExplanation{.node = "n1", .fits = true, .mode = "mgpu", .state = "ready",
                                    .score = -std::numeric_limits<double>::infinity(), .rank = 1});
  std::string out = ExplanationJson(e);
  rapidjson::Document d;
  ASSERT_TRUE(json::Parse(out, &d).ok()) << out;
  EXPECT_TRUE(d["nodes"][0]["score"].IsNull());
  EXPECT_EQ(d["nodes"][0]["rank"].GetInt(), 1);
}

}  // namespace explain_json_test
}  // namespace gpusched::extender
