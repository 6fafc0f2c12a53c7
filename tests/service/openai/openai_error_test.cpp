#include "service/openai/openai_error.h"

#include <gtest/gtest.h>

namespace strata::openai {
namespace {

TEST(OpenaiErrorTest, InvalidRequestNamesTheParam) {
  ApiError error = invalid_request("temperature must be a number", "temperature");
  EXPECT_EQ(error.status, 400);
  EXPECT_EQ(error_json(error).dump(),
            R"({"error":{"message":"temperature must be a number",)"
            R"("type":"invalid_request_error","param":"temperature","code":null}})");
}

TEST(OpenaiErrorTest, StatusesAndTypes) {
  EXPECT_EQ(not_found("x").status, 404);
  EXPECT_EQ(too_many_requests("x").status, 429);
  EXPECT_EQ(too_many_requests("x").type, "rate_limit_error");
  EXPECT_EQ(server_error("x").status, 500);
  EXPECT_EQ(unavailable("x").status, 503);
  ApiError error = server_error("boom");
  error.code = "engine_error";
  EXPECT_EQ(error_json(error).dump(),
            R"({"error":{"message":"boom","type":"server_error","param":null,)"
            R"("code":"engine_error"}})");
}

}  // namespace
}  // namespace strata::openai
