// Ids for responses and tool calls, as the APIs' own look: a prefix and 24 random hex
// digits ("chatcmpl-", "call_", "msg_", "toolu_", "resp_", ...).
//
// Any thread.
#pragma once

#include <string>
#include <string_view>

namespace strata::openai {

std::string random_id(std::string_view prefix);

}  // namespace strata::openai
