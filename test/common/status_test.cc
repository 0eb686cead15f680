#include "gpusched/common/status.h"

#include <gtest/gtest.h>

namespace gpusched {
namespace status_test {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError("odd");
  return x / 2;
}

Status UsesMacros(int x, int* out) {
  GPUSCHED_ASSIGN_OR_RETURN(int h, Half(x));
  GPUSCHED_RETURN_IF_ERROR(h > 10 ? ResourceExhaustedError("too big") : OkStatus());
  *out = h;
  return OkStatus();
}

TEST(Status, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(Status, CarriesCodeAndMessage) {
  Status s = FailedPreconditionError("GPU0 is taken");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.ToString(), "FAILED_PRECONDITION: GPU0 is taken");
  EXPECT_EQ(s.WithContext("bind").message(), "bind: GPU0 is taken");
}

TEST(StatusOr, HoldsValueOrError) {
  EXPECT_EQ(*Half(8), 4);
  EXPECT_EQ(Half(3).status().code(), StatusCode::kInvalidArgument);
}

TEST(StatusMacros, PropagateErrors) {
  int out = 0;
  EXPECT_TRUE(UsesMacros(8, &out).ok());
  EXPECT_EQ(out, 4);
  EXPECT_EQ(UsesMacros(3, &out).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(UsesMacros(40, &out).code(), StatusCode::kResourceExhausted);
}

}  // namespace status_test
}  // namespace gpusched
