#include "service/openai/openai_reply_writer.h"

namespace strata::openai {

OpenAiReplyWriter::OpenAiReplyWriter(ResponseContext context, bool include_usage)
    : context_(context), stream_(std::move(context), include_usage) {}

}  // namespace strata::openai
