#include "engine/backend.h"

#include "common/check.h"

namespace strata {

void Backend::forward_and_choose(std::span<const BatchSequence> /*batch*/,
                                 std::span<const TokenChoice> /*choices*/,
                                 std::vector<SampledToken>& /*chosen*/) {
  STRATA_CHECK(false, "this backend leaves token choice to the sampler");
}

}  // namespace strata
