#include "engine/sequence.h"

#include <utility>

namespace strata {

Sequence::Sequence(uint64_t seq_id, uint64_t seq_arrival, GenerateRequest seq_request,
                   EventCallback seq_on_event, const Tokenizer& tokenizer)
    : id(seq_id),
      arrival(seq_arrival),
      request(std::move(seq_request)),
      on_event(std::move(seq_on_event)),
      sampler(request.sampling),
      decoder(tokenizer, {.render_special = request.render_special_tokens}),
      stops(request.stop),
      tokens_(request.prompt) {
  tokens_.reserve(request.prompt.size() + static_cast<size_t>(request.max_tokens));
}

}  // namespace strata
