// Test support: a reply fed to ReplyParser in every way it can be cut into chunks must
// add up to the whole-reply parse, and no content event may carry markup.
#pragma once

#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/chat/reply/parsed_reply.h"
#include "model/chat/reply/reply_parser.h"

namespace strata {

// Readable test failures.
void PrintTo(const ParsedReply& reply, std::ostream* out);

// Feeds `text` cut at `cuts` (ascending positions) and collects the events.
std::vector<ReplyEvent> feed_in_chunks(const ReplyFormat& format,
                                       const ReplyParserOptions& options, std::string_view text,
                                       std::span<const size_t> cuts);

// What no content event of a well-formed reply may contain: pieces of any markup.
// Test replies keep these characters out of their prose.
inline constexpr std::string_view kMarkupCharacters[] = {"<", ">", "[", "]", "{", "}", "|",
                                                         "\uFF5C", "\u2581", "`"};

// Checks that `text` parses to `expected` whole, and to the same reply when fed as 1-byte
// chunks, as seeded random chunks, and cut in two at every position; and that no content
// event contains any of `forbidden_in_content` (pass {} for malformed replies, whose
// markup becomes content).
void expect_reply(const ReplyFormat& format, const ReplyParserOptions& options,
                  std::string_view text, const ParsedReply& expected,
                  std::span<const std::string_view> forbidden_in_content = kMarkupCharacters);

// The split checks of expect_reply alone, against whatever the whole reply parses to.
void expect_split_invariant(const ReplyFormat& format, const ReplyParserOptions& options,
                            std::string_view text);

}  // namespace strata
