#include "gpusched/json/writer.h"

#include <gtest/gtest.h>

#include <limits>

#include "gpusched/json/json.h"

namespace gpusched::json {
namespace writer_test {

TEST(JsonWriter, WritesCompactJsonWithCommasAndEscapes) {
  Writer w;
  w.StartObject().Member("name", "a\"b\\c\n").Member("n", int64_t{-3}).Member("ok", true);
  w.Key("list").StartArray().Int(1).Null().String("x").EndArray();
  w.Key("empty").StartObject().EndObject().Member("k\"ey", uint64_t{7}).EndObject();
  EXPECT_EQ(w.Take(), R"({"name":"a\"b\\c\n","n":-3,"ok":true,"list":[1,null,"x"],"empty":{},"k\"ey":7})");
}

TEST(JsonWriter, FixedWritesExactDecimalsAndNullForWhatJsonCannotHold) {
  Writer w;
  w.StartArray().Fixed(0.5, 6).Fixed(-12.34567, 4).Fixed(std::numeric_limits<double>::quiet_NaN(), 2);
  w.Fixed(std::numeric_limits<double>::infinity(), 2).Fixed(1e300, 1).Double(12.5).Double(-0.1);
  w.Double(std::numeric_limits<double>::infinity()).EndArray();
  std::string out = w.Take();
  EXPECT_EQ(out.substr(0, 30), "[0.500000,-12.3457,null,null,1");
  rapidjson::Document doc;
  ASSERT_TRUE(Parse(out, &doc).ok()) << out;
  EXPECT_DOUBLE_EQ(doc[4].GetDouble(), 1e300);
  EXPECT_EQ(out.substr(out.size() - 16), ",12.5,-0.1,null]");
}

TEST(JsonWriter, SplicesValuesAndElementsWrittenElsewhere) {
  Writer inner;
  inner.StartObject().Member("k", "v").EndObject();
  Writer half;
  half.StartArray().Int(3).Int(4).EndArray();
  std::string elements = half.Take();
  Writer w;
  w.StartObject().Key("one").Raw(inner.Take()).Key("all").StartArray().Int(1).Int(2);
  w.RawElements(std::string_view(elements).substr(1, elements.size() - 2)).RawElements("").EndArray().EndObject();
  EXPECT_EQ(w.TakeLine(), "{\"one\":{\"k\":\"v\"},\"all\":[1,2,3,4]}\n");
}

TEST(JsonWriter, CheckedStringsAndKeysAreCopiedAsTheyAre) {
  rapidjson::Document node;
  ASSERT_TRUE(Parse(R"({"metadata": {"name": "n1"}})", &node).ok());
  Writer w;
  w.StartObject().CheckedKey("n1").CheckedString("n2").CheckedKey("n3").Value(node).EndObject();
  EXPECT_EQ(w.Take(), R"({"n1":"n2","n3":{"metadata":{"name":"n1"}}})");
}

}  // namespace writer_test
}  // namespace gpusched::json
