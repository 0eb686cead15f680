#include "gpusched/json/json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::json {
namespace json_test {

using ::testing::HasSubstr;

TEST(Json, ParsesAndFindsMembers) {
  rapidjson::Document doc;
  ASSERT_TRUE(Parse(R"({"a": "x", "B": 2, "n": null})", &doc).ok());
  EXPECT_EQ(View(*Find(doc, "a")), "x");
  EXPECT_EQ(Find(doc, "b"), nullptr);
  EXPECT_EQ(FindCaseInsensitive(doc, "b")->GetInt(), 2);
  EXPECT_EQ(Find(doc, "n"), nullptr);  // null reads as absent
}

TEST(Json, ReportsMalformedInputWithOffset) {
  rapidjson::Document doc;
  Status s = Parse(R"({"a": )", &doc);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("malformed JSON at offset"));
  EXPECT_FALSE(Parse("{} {}", &doc).ok());
  EXPECT_FALSE(Parse("", &doc).ok());
  EXPECT_FALSE(Parse(std::string_view("{\"a\":\"\0\"}", 9), &doc).ok());
}

// Records the events ParseInsituDiverting hands over, as text; stops at the first "stop" string.
class Recorder : public ValueEvents {
 public:
  std::string text;
  bool stopped = false;
  bool StartObject() override { return text += "{", true; }
  bool Key(std::string_view key) override { return text += std::string(key) + ":", true; }
  bool EndObject() override { return text += "}", true; }
  bool StartArray() override { return text += "[", true; }
  bool EndArray() override { return text += "]", true; }
  bool String(std::string_view s) override {
    if (s == "stop") return stopped = true, false;
    return text += "'" + std::string(s) + "'", true;
  }
  bool Scalar(const rapidjson::Value& v) override {
    std::string out;
    AppendValue(&out, v);
    return text += out, true;
  }
  Status status() const override { return stopped ? InvalidArgumentError("stopped") : OkStatus(); }
};

TEST(Json, ADivertedMemberGoesToTheEventsAndTheDocumentKeepsAnEmptyObject) {
  std::string body = R"({"a":1,"BIG":{"x":[1,"s",{"y":null}],"z":true},"big":{"again":1},"b":[2]})";
  Recorder events;
  rapidjson::Document doc;
  bool diverted = false;
  ASSERT_TRUE(ParseInsituDiverting(&body, "big", &events, &doc, &diverted).ok());
  EXPECT_TRUE(diverted);
  EXPECT_EQ(events.text, "{x:[1's'{y:null}]z:true}");
  std::string rest;
  AppendValue(&rest, doc);
  EXPECT_EQ(rest, R"({"a":1,"BIG":{},"big":{"again":1},"b":[2]})");  // only the first occurrence goes
}

TEST(Json, OnlyATopLevelObjectIsDiverted) {
  for (std::string body : {std::string(R"({"big":null})"), std::string(R"({"big":[1]})"), std::string(R"({"x":{"big":{"a":1}}})")}) {
    Recorder events;
    rapidjson::Document doc;
    bool diverted = true;
    std::string original = body;
    ASSERT_TRUE(ParseInsituDiverting(&body, "big", &events, &doc, &diverted).ok()) << original;
    EXPECT_FALSE(diverted) << original;
    EXPECT_EQ(events.text, "") << original;
    std::string rest;
    AppendValue(&rest, doc);
    EXPECT_EQ(rest, original);
  }
}

TEST(Json, EventsThatStopTheParseGiveTheirStatus) {
  std::string body = R"({"big":{"a":"stop"}})";
  Recorder events;
  rapidjson::Document doc;
  bool diverted = false;
  Status s = ParseInsituDiverting(&body, "big", &events, &doc, &diverted);
  EXPECT_THAT(s.message(), HasSubstr("stopped"));
  std::string syntax = R"({"big":{"a":1},)";
  Recorder fine;
  EXPECT_THAT(ParseInsituDiverting(&syntax, "big", &fine, &doc, &diverted).message(), HasSubstr("malformed JSON"));
}

TEST(Json, RefusesDeepNesting) {
  rapidjson::Document doc;
  std::string deep(100000, '[');
  Status s = Parse(deep, &doc);
  EXPECT_THAT(s.message(), HasSubstr("deeper than 64 levels"));
  std::string ok = std::string(60, '[') + std::string(60, ']');
  EXPECT_TRUE(Parse(ok, &doc).ok());
}

TEST(Json, RefusesInvalidUtf8) {
  rapidjson::Document doc;
  EXPECT_FALSE(Parse("{\"a\":\"\xff\xfe\"}", &doc).ok());
  EXPECT_TRUE(Parse("{\"a\":\"caf\xc3\xa9 \\u003c\"}", &doc).ok());
  EXPECT_EQ(View(*Find(doc, "a")), "caf\xc3\xa9 <");
}

// All-ASCII bodies skip the per-string UTF-8 check; one byte above 0x7f anywhere, even after
// thousands of ASCII names, brings it back.
TEST(Json, RefusesInvalidUtf8AfterALongAsciiPrefixInPlaceToo) {
  std::string names;
  for (int i = 0; i < 2000; ++i) names += "\"node-" + std::to_string(i) + "\",";
  std::string bad = "{\"NodeNames\":[" + names + "\"n\xc3\"]}";
  std::string good = "{\"NodeNames\":[" + names + "\"n\xc3\xa9\"]}";
  rapidjson::Document doc;
  EXPECT_FALSE(Parse(bad, &doc).ok());
  EXPECT_TRUE(Parse(good, &doc).ok());
  std::string buffer = bad;
  EXPECT_FALSE(ParseInsitu(&buffer, &doc).ok());
  buffer = good;
  EXPECT_TRUE(ParseInsitu(&buffer, &doc).ok());
  buffer = "{\"NodeNames\":[" + names + "\"n\"]}";
  ASSERT_TRUE(ParseInsitu(&buffer, &doc).ok());
  EXPECT_EQ(doc["NodeNames"].Size(), 2001u);
}

TEST(Json, TypedReadsNameThePath) {
  rapidjson::Document doc;
  ASSERT_TRUE(Parse(R"({"s": 1, "i": "x", "big": 1e300})", &doc).ok());
  std::string s;
  EXPECT_EQ(ReadString(doc, "s", "Pod.metadata", &s).message(), "Pod.metadata.s: want string, got number");
  int64_t i = 0;
  EXPECT_EQ(ReadInt64(doc, "i", "x", &i).message(), "x.i: want integer, got string");
  EXPECT_EQ(ReadInt64(doc, "big", "x", &i).message(), "x.big: want integer, got number");
  EXPECT_TRUE(ReadInt64(doc, "absent", "x", &i).ok());
}

TEST(Json, InsituParseKeepsStringsInTheBuffer) {
  std::string body = R"({"NodeNames":["a","b"]})";
  rapidjson::Document doc;
  ASSERT_TRUE(ParseInsitu(&body, &doc).ok());
  EXPECT_EQ(View((*Find(doc, "NodeNames"))[1]), "b");
}

TEST(Json, AppendStringEscapesWhatJsonRequires) {
  std::string out;
  AppendString(&out, "gpu-node-0001");
  EXPECT_EQ(out, "\"gpu-node-0001\"");
  out.clear();
  AppendString(&out, std::string("a\"b\\c\nd\x01" "e\xc3\xa9", 11));
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\nd\\u0001e\xc3\xa9\"");
  rapidjson::Document doc;
  ASSERT_TRUE(Parse(out, &doc).ok());
  EXPECT_EQ(View(doc), std::string("a\"b\\c\nd\x01" "e\xc3\xa9", 11));
}

TEST(Json, AppendValueWritesCompactJson) {
  rapidjson::Document doc;
  ASSERT_TRUE(Parse(R"({ "a" : [1, 2.5, "x"], "b": null })", &doc).ok());
  std::string out;
  AppendValue(&out, doc);
  EXPECT_EQ(out, R"({"a":[1,2.5,"x"],"b":null})");
}

}  // namespace json_test

TEST(Json, AppendStringEscapesEverySpecialByteWhereverItIs) {
  // The fast path scans eight bytes at a time: a special byte at any offset must still be found,
  // and UTF-8 bytes (>= 0x80) must pass untouched.
  const std::pair<char, std::string> specials[] = {{'"', "\\\""}, {'\\', "\\\\"}, {'\n', "\\n"}, {'\x01', "\\u0001"}, {'\x1f', "\\u001f"}};
  for (const auto& [c, escaped] : specials) {
    for (size_t at = 0; at < 21; ++at) {
      std::string in(21, 'a');
      in[at] = c;
      std::string want = "\"" + in.substr(0, at) + escaped + in.substr(at + 1) + "\"";
      std::string out;
      json::AppendString(&out, in);
      EXPECT_EQ(out, want) << "special " << int(c) << " at " << at;
    }
  }
  std::string out;
  json::AppendString(&out, "gpu-node-\xc3\xa9t\xc3\xa9-0123456789");
  EXPECT_EQ(out, "\"gpu-node-\xc3\xa9t\xc3\xa9-0123456789\"");
}


TEST(Json, AMultiByteSequenceCutOffAtTheEndIsAnErrorNotAnOverRead) {
  // Found by AddressSanitizer: RapidJSON's UTF-8 check read past the end of such input.
  for (std::string text : {std::string("{\"a\":\"\xF0"), std::string("[\"\xE2\x82"), std::string("\"\xC3")}) {
    rapidjson::Document d;
    EXPECT_FALSE(json::Parse(text, &d).ok()) << text;
    std::string insitu = text;
    EXPECT_FALSE(json::ParseInsitu(&insitu, &d).ok()) << text;
  }
}

}  // namespace gpusched::json
