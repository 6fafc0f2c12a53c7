// Filters over sequences and mappings: length, first, last, join, map, select, reject,
// selectattr, rejectattr, sort, unique, reverse, list, items, dictsort, batch, min, max, sum.
#pragma once

#include "model/chat/jinja/jinja_value.h"

namespace strata::jinja {

Value filter_length(const Value& subject, const CallArgs& args);
Value filter_first(const Value& subject, const CallArgs& args);
Value filter_last(const Value& subject, const CallArgs& args);
Value filter_join(const Value& subject, const CallArgs& args);
Value filter_map(const Value& subject, const CallArgs& args);
Value filter_select(const Value& subject, const CallArgs& args);
Value filter_reject(const Value& subject, const CallArgs& args);
Value filter_selectattr(const Value& subject, const CallArgs& args);
Value filter_rejectattr(const Value& subject, const CallArgs& args);
Value filter_sort(const Value& subject, const CallArgs& args);
Value filter_unique(const Value& subject, const CallArgs& args);
Value filter_reverse(const Value& subject, const CallArgs& args);
Value filter_list(const Value& subject, const CallArgs& args);
Value filter_items(const Value& subject, const CallArgs& args);
Value filter_dictsort(const Value& subject, const CallArgs& args);
Value filter_batch(const Value& subject, const CallArgs& args);
Value filter_min(const Value& subject, const CallArgs& args);
Value filter_max(const Value& subject, const CallArgs& args);
Value filter_sum(const Value& subject, const CallArgs& args);

}  // namespace strata::jinja
