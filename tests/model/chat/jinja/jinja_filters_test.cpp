#include "model/chat/jinja/jinja_filters.h"

#include <gtest/gtest.h>

#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_template.h"

namespace strata::jinja {
namespace {

// The expected strings below are what Python's Jinja2 3.1 renders.
std::string render(std::string_view source, Value variables = Value::dict({})) {
  return Template(source).render(variables, RenderTime{});
}

Value people() {
  return Value::dict({{"xs", Value::list({Value::dict({{"role", Value("user")}, {"n", Value(int64_t{2})}}),
                                          Value::dict({{"role", Value("system")}, {"n", Value(int64_t{1})},
                                                       {"tool", Value(true)}})})}});
}

TEST(JinjaFiltersTest, KnowsTheFiltersItImplements) {
  EXPECT_NE(find_filter("tojson"), nullptr);
  EXPECT_NE(find_filter("d"), nullptr);
  EXPECT_EQ(find_filter("xmlattr"), nullptr);
}

TEST(JinjaFiltersTest, Tojson) {
  const Value tool = Value::dict({{"name", Value("get")}, {"args", Value::list({Value(1.5), Value::none()})}});
  EXPECT_EQ(render("{{ t|tojson }}", Value::dict({{"t", tool}})), R"({"name": "get", "args": [1.5, null]})");
  EXPECT_EQ(render("{{ t|tojson(indent=2) }}", Value::dict({{"t", tool}})),
            "{\n  \"name\": \"get\",\n  \"args\": [\n    1.5,\n    null\n  ]\n}");
  EXPECT_EQ(render("{{ t|tojson(separators=(',', ':'), sort_keys=true) }}", Value::dict({{"t", tool}})),
            R"({"args":[1.5,null],"name":"get"})");
  EXPECT_EQ(render("{{ 'é'|tojson }} {{ 'é'|tojson(ensure_ascii=true) }}"), "\"é\" \"\\u00e9\"");
}

TEST(JinjaFiltersTest, TextFilters) {
  EXPECT_EQ(render("{{ '  hi  '|trim }}|{{ 'xxhixx'|trim('x') }}|{{ 'abc'|replace('b', 'X') }}|{{ 'aaa'|replace('a', 'b', 2) }}"),
            "hi|hi|aXc|bba");
  EXPECT_EQ(render("{{ 'hi'|upper }}{{ 'HI'|lower }} {{ 'hello-world foo(bar'|title }} {{ 'hELLO wORLD'|capitalize }}"),
            "HIhi Hello-World Foo(Bar Hello world");
  EXPECT_EQ(render("{{ 5|string }} {{ none|string }} {{ '<a\"&\\''|e }} {{ 'x'|safe }}"), "5 None &lt;a&#34;&amp;&#39; x");
  EXPECT_EQ(render("{{ 'hello world foo'|wordcount }}|{{ 'x'|center(5) }}|{{ 'ab'|center(7) }}|"), "3|  x  |   ab  |");
  EXPECT_EQ(render("{{ 'a\\nb\\n\\nc'|indent }}|{{ 'a\\nb\\n\\nc'|indent(2, true, true) }}|{{ 'a\\nb'|indent('> ', first=true) }}"),
            "a\n    b\n\n    c|  a\n  b\n  \n  c|> a\n> b");
  EXPECT_EQ(render("{{ 'hello world this is long'|truncate(12) }}|{{ 'hello world this is long'|truncate(12, true) }}"),
            "hello...|hello wor...");
  EXPECT_EQ(render("{{ 'a %s b %d %5.2f %-4s| %r %%'|format('x', 3, 3.14159, 'ab', 'q') }}"), "a x b 3  3.14 ab  | 'q' %");
}

TEST(JinjaFiltersTest, NumberFilters) {
  EXPECT_EQ(render("{{ '42'|int }} {{ '4.7'|int }} {{ 'x'|int }} {{ 'x'|int(7) }} {{ 4.9|int }} {{ '0x1A'|int(0, 16) }}"),
            "42 4 0 7 4 26");
  EXPECT_EQ(render("{{ '1.5'|float }} {{ 'y'|float }} {{ 3|float }} {{ -3|abs }} {{ -2.5|abs }}"), "1.5 0.0 3.0 3 2.5");
  EXPECT_EQ(render("{{ 2.5|round }} {{ 3.5|round }} {{ 2.675|round(2) }} {{ 1|round }} {{ 2.7|round(0, 'floor') }} "
                   "{{ 2.1|round(method='ceil') }}"),
            "2.0 4.0 2.67 1 2.0 3.0");
}

TEST(JinjaFiltersTest, DefaultFilter) {
  EXPECT_EQ(render("{{ x|default('d') }} {{ ''|default('d') }} {{ ''|default('d', true) }} {{ none|default('d') }} "
                   "{{ none|d('d', boolean=true) }} [{{ y|d }}]"),
            "d  d None d []");
}

TEST(JinjaFiltersTest, SequenceFilters) {
  EXPECT_EQ(render("{{ [1, 2]|length }} {{ 'hé'|count }} {{ [1, 2, 3]|first }} {{ [1, 2, 3]|last }} {{ 'abc'|first }}"),
            "2 2 1 3 a");
  EXPECT_EQ(render("{{ [3, 1, 2]|sort }} {{ ['b', 'A', 'c']|sort }} {{ ['b', 'A', 'c']|sort(case_sensitive=true) }} "
                   "{{ [3, 1, 2]|sort(reverse=true) }}"),
            "[1, 2, 3] ['A', 'b', 'c'] ['A', 'b', 'c'] [3, 2, 1]");
  EXPECT_EQ(render("{{ [1, 2, 2, 1]|unique|list }} {{ ['a', 'A']|unique|list }} {{ [1, 2]|reverse|list }} {{ 'abc'|reverse }} "
                   "{{ 'ab'|list }}"),
            "[1, 2] ['a'] [2, 1] cba ['a', 'b']");
  EXPECT_EQ(render("{{ [1, 2, 3]|sum }} {{ [1, 2, 3]|min }} {{ [1, 2, 3]|max }} {{ [1.5, 2]|sum }} [{{ []|max }}]"),
            "6 1 3 3.5 []");
  EXPECT_EQ(render("{{ {'b': 1, 'a': 2}|dictsort }} {{ {'b': 1, 'a': 2}|dictsort(by='value') }} {{ {'a': 1}|items|list }}"),
            "[('a', 2), ('b', 1)] [('b', 1), ('a', 2)] [('a', 1)]");
  EXPECT_EQ(render("{{ [1, 2, 3, 4, 5]|batch(2)|list }} {{ [1, 2, 3]|batch(2, 'x')|list }}"),
            "[[1, 2], [3, 4], [5]] [[1, 2], [3, 'x']]");
  EXPECT_EQ(render("{{ ['a', 'b']|join(', ') }} {{ [1, 2]|join }}"), "a, b 12");
}

TEST(JinjaFiltersTest, SelectingAndMapping) {
  EXPECT_EQ(render("{{ xs|selectattr('role', 'equalto', 'user')|map(attribute='n')|list }} "
                   "{{ xs|rejectattr('role', 'eq', 'user')|map(attribute='role')|join(',') }} "
                   "{{ xs|selectattr('tool')|map(attribute='n')|first }} {{ xs|map(attribute='x', default='D')|list }} "
                   "{{ xs|sort(attribute='n')|map(attribute='role')|list }} {{ xs|sum(attribute='n') }} "
                   "{{ xs|join('/', attribute='role') }}",
                   people()),
            "[2] system 1 ['D', 'D'] ['system', 'user'] 3 user/system");
  EXPECT_EQ(render("{{ [1, 2, 3, 4]|select('odd')|list }} {{ [1, 2, 3, 4]|reject('even')|list }} "
                   "{{ [0, 1, '', none, 'a']|select|list }} {{ [1, 2]|map('string')|list }} {{ ['a', 'b']|map('upper')|join }}"),
            "[1, 3] [1, 3] [1, 'a'] ['1', '2'] AB");
}

TEST(JinjaFiltersTest, BadArgumentsAreRenderErrors) {
  EXPECT_THROW(render("{{ [1]|batch(0) }}"), RenderError);
  EXPECT_THROW(render("{{ [1]|map('nope')|list }}"), RenderError);
  EXPECT_THROW(render("{{ [1, 'a']|sort }}"), RenderError);
  EXPECT_THROW(render("{{ x|tojson }}"), RenderError);
  EXPECT_THROW(render("{{ 'x'|trim(1, 2) }}"), RenderError);
}

}  // namespace
}  // namespace strata::jinja
