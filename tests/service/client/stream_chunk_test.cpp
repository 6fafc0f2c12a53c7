#include "service/client/stream_chunk.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

using nlohmann::json;

TEST(StreamChunkTest, ReadsChatAndTextCompletionChunks) {
  StreamChunk chat = read_stream_chunk(json::parse(
      R"({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "Hi"},
          "finish_reason": null}], "usage": null})"));
  EXPECT_EQ(chat.text, "Hi");
  EXPECT_FALSE(chat.finish_reason);
  EXPECT_FALSE(chat.usage);

  StreamChunk text = read_stream_chunk(json::parse(
      R"({"object": "text_completion", "choices": [{"index": 0, "text": " there",
          "finish_reason": "length"}]})"));
  EXPECT_EQ(text.text, " there");
  EXPECT_EQ(text.finish_reason, "length");
}

TEST(StreamChunkTest, RoleChunkFinishChunkAndUsageChunk) {
  EXPECT_EQ(read_stream_chunk(
                json::parse(R"({"choices": [{"delta": {"role": "assistant", "content": ""}}]})"))
                .text,
            "");
  StreamChunk finish =
      read_stream_chunk(json::parse(R"({"choices": [{"delta": {}, "finish_reason": "stop"}]})"));
  EXPECT_EQ(finish.text, "");
  EXPECT_EQ(finish.finish_reason, "stop");
  StreamChunk usage = read_stream_chunk(
      json::parse(R"({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 5}})"));
  ASSERT_TRUE(usage.usage);
  EXPECT_EQ((*usage.usage)["completion_tokens"], 5);
}

TEST(StreamChunkTest, OddShapesReadAsAbsent) {
  for (const char* odd : {R"(null)", R"([])", R"({"choices": null})", R"({"choices": [null]})",
                          R"({"choices": [{"delta": {"content": null}}]})",
                          R"({"choices": [{"text": 5, "finish_reason": 1}], "usage": 3})"}) {
    StreamChunk chunk = read_stream_chunk(json::parse(odd));
    EXPECT_EQ(chunk.text, "") << odd;
    EXPECT_FALSE(chunk.finish_reason) << odd;
    EXPECT_FALSE(chunk.usage) << odd;
  }
}

}  // namespace
}  // namespace strata
