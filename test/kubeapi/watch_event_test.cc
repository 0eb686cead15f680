#include "gpusched/kubeapi/watch_event.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpusched/kubeapi/backoff.h"

namespace gpusched::kubeapi {
namespace watch_event_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(LineSplitter, ReassemblesLinesCutAtEveryByte) {
  std::string stream = "{\"a\":1}\n{\"b\":\"x\\ny\"}\n\n{\"c\":3}\n";
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    for (size_t cut2 = cut; cut2 <= stream.size(); cut2 += 3) {
      LineSplitter s;
      std::vector<std::string> lines;
      auto on_line = [&](std::string_view l) { lines.emplace_back(l); };
      ASSERT_TRUE(s.Feed(std::string_view(stream).substr(0, cut), on_line).ok());
      ASSERT_TRUE(s.Feed(std::string_view(stream).substr(cut, cut2 - cut), on_line).ok());
      ASSERT_TRUE(s.Feed(std::string_view(stream).substr(cut2), on_line).ok());
      EXPECT_THAT(lines, ElementsAre("{\"a\":1}", "{\"b\":\"x\\ny\"}", "{\"c\":3}")) << cut << " " << cut2;
      EXPECT_EQ(s.buffered(), 0u);
    }
  }
}

TEST(WatchEvent, ParsesEveryTypeAndTheResourceVersion) {
  StatusOr<WatchEvent> added =
      ParseWatchEvent(R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"p","resourceVersion":"10596"}}})");
  ASSERT_TRUE(added.ok());
  EXPECT_EQ(added->type, WatchEventType::kAdded);
  EXPECT_EQ(added->resource_version, "10596");
  EXPECT_TRUE(added->object().IsObject());
  StatusOr<WatchEvent> bookmark =
      ParseWatchEvent(R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"12746"}}})");
  ASSERT_TRUE(bookmark.ok());
  EXPECT_EQ(bookmark->type, WatchEventType::kBookmark);
  EXPECT_EQ(bookmark->resource_version, "12746");
  StatusOr<WatchEvent> error = ParseWatchEvent(
      R"x({"type":"ERROR","object":{"kind":"Status","status":"Failure","message":"too old resource version: 1 (2)","reason":"Expired","code":410}})x");
  ASSERT_TRUE(error.ok());
  EXPECT_EQ(error->type, WatchEventType::kError);
  EXPECT_EQ(error->code, 410);
  EXPECT_THAT(error->message, HasSubstr("too old"));
  EXPECT_EQ(ParseWatchEvent(R"({"type":"DELETED","object":{}})")->type, WatchEventType::kDeleted);
  EXPECT_EQ(ParseWatchEvent(R"({"type":"MODIFIED","object":{}})")->type, WatchEventType::kModified);
}

TEST(WatchEvent, MalformedLinesAreErrorsNamingTheProblem) {
  EXPECT_THAT(ParseWatchEvent("{\"type\":").status().message(), HasSubstr("watch event"));
  EXPECT_THAT(ParseWatchEvent(R"({"type":"ADDED"})").status().message(), HasSubstr("watch event.object: missing"));
  EXPECT_THAT(ParseWatchEvent(R"({"type":"SYNC","object":{}})").status().message(), HasSubstr("\"SYNC\""));
  EXPECT_THAT(ParseWatchEvent(R"({"type":7,"object":{}})").status().message(), HasSubstr("watch event.type"));
}

TEST(Backoff, DoublesUpToTheCapWithBoundedJitterAndResets) {
  Rng rng(7);
  Backoff b(std::chrono::milliseconds(100), std::chrono::milliseconds(1000), 0.5, &rng);
  std::vector<int64_t> bases = {100, 200, 400, 800, 1000, 1000};
  for (int64_t base : bases) {
    int64_t d = b.Next().count();
    EXPECT_GE(d, base);
    EXPECT_LT(d, base * 3 / 2 + 1);
  }
  b.Reset();
  EXPECT_LT(b.Next().count(), 151);
}

}  // namespace watch_event_test
}  // namespace gpusched::kubeapi
