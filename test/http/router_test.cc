#include "gpusched/http/router.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::http {
namespace router_test {

using ::testing::HasSubstr;

class RouterTest : public ::testing::Test {
 protected:
  inventory::Inventory inventory_;
  extender::Service service_{&inventory_, {}};
  std::atomic<bool> ready_{true};
  Router router_{&service_, &inventory_, &ready_, "/gpu"};
};

TEST_F(RouterTest, RoutesVerbsUnderThePrefix) {
  Response r = router_.Handle({.method = "POST", .target = "/gpu/bind", .body = "{}"});
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.body, HasSubstr("PodUID: missing"));
  EXPECT_EQ(router_.Handle({.method = "POST", .target = "/filter", .body = "{}"}).status, 404);
}

TEST_F(RouterTest, WrongMethodIs405) {
  Response r = router_.Handle({.method = "GET", .target = "/gpu/filter"});
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.allow, "POST");
  EXPECT_EQ(router_.Handle({.method = "POST", .target = "/healthz"}).status, 405);
}

TEST_F(RouterTest, ReadyzFollowsTheFlag) {
  ready_ = false;
  EXPECT_EQ(router_.Handle({.method = "GET", .target = "/healthz"}).status, 200);
  EXPECT_EQ(router_.Handle({.method = "GET", .target = "/readyz"}).status, 503);
  ready_ = true;
  EXPECT_EQ(router_.Handle({.method = "GET", .target = "/readyz"}).status, 200);
}

TEST_F(RouterTest, NoDecisionIsMadeBeforeTheInventoryIsReady) {
  ready_ = false;
  Response filter = router_.Handle({.method = "POST", .target = "/gpu/filter", .body = "{}"});
  EXPECT_EQ(filter.status, 200);
  EXPECT_THAT(filter.body, HasSubstr("not in sync with the cluster yet"));
  EXPECT_THAT(router_.Handle({.method = "POST", .target = "/gpu/bind", .body = "{}"}).body, HasSubstr("not in sync"));
  EXPECT_EQ(router_.Handle({.method = "POST", .target = "/gpu/prioritize", .body = "{}"}).status, 503);
  EXPECT_EQ(router_.Handle({.method = "GET", .target = "/debug/inventory"}).status, 200);
}

TEST_F(RouterTest, UnknownPathIs404) {
  EXPECT_EQ(router_.Handle({.method = "GET", .target = "/nope"}).status, 404);
}

TEST_F(RouterTest, TheAdmissionScopeAnswersOnlyTheWebhookAndProbes) {
  Router admission(&service_, &inventory_, &ready_, "", nullptr, RouterScope::kAdmissionOnly);
  for (const char* target : {"/filter", "/prioritize", "/bind", "/debug/inventory"}) {
    EXPECT_EQ(admission.Handle({.method = "POST", .target = target, .body = "{}"}).status, 404) << target;
    EXPECT_EQ(admission.Handle({.method = "GET", .target = target}).status, 404) << target;
  }
  EXPECT_EQ(admission.Handle({.method = "GET", .target = "/healthz"}).status, 200);
  EXPECT_EQ(admission.Handle({.method = "GET", .target = "/metrics"}).status, 200);
  Response r = admission.Handle({.method = "POST",
                                 .target = "/validate/node",
                                 .body = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
                                         R"("request":{"uid":"r1","operation":"CREATE"}})"});
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.body, HasSubstr(R"("allowed":true)"));
}

TEST(QueryParam, DecodesValues) {
  EXPECT_EQ(QueryParam("/debug/inventory?node=gpu%2D1&x=y", "node"), "gpu-1");
  EXPECT_EQ(QueryParam("/debug/inventory?a=1&node=b", "node"), "b");
  EXPECT_EQ(QueryParam("/debug/inventory", "node"), "");
  EXPECT_EQ(QueryParam("/x?node=%zz", "node"), "%zz");
}

}  // namespace router_test
}  // namespace gpusched::http
