#include "model/chat/jinja/jinja_methods.h"

#include <gtest/gtest.h>

#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_template.h"

namespace strata::jinja {
namespace {

std::string render(std::string_view source) { return Template(source).render(Value::dict({}), RenderTime{}); }

std::string render_error(std::string_view source) {
  try {
    render(source);
  } catch (const RenderError& error) {
    return error.what();
  }
  return "no error";
}

TEST(JinjaMethodsTest, BindsOnlyKnownMethods) {
  EXPECT_TRUE(bound_method(Value("x"), "startswith").has_value());
  EXPECT_FALSE(bound_method(Value("x"), "content").has_value());
  EXPECT_TRUE(bound_method(Value::dict({}), "get").has_value());
  EXPECT_FALSE(bound_method(Value::dict({}), "role").has_value());
  EXPECT_TRUE(bound_method(Value::tuple({}), "index").has_value());
  EXPECT_FALSE(bound_method(Value(int64_t{1}), "real").has_value());
  const Value startswith = *bound_method(Value("<think>x"), "startswith");
  EXPECT_TRUE(startswith.as_function()(CallArgs{{Value("<think>")}, {}}).as_bool());
}

TEST(JinjaMethodsTest, StringMethodsMatchPython) {
  EXPECT_EQ(render("{{ 'a b  c '.split() }} {{ 'a,b'.split(',') }} {{ 'a,b,c'.rsplit(',', 1) }}"),
            "['a', 'b', 'c'] ['a', 'b'] ['a,b', 'c']");
  EXPECT_EQ(render("{{ ' x '.strip() }}|{{ 'xhix'.strip('x') }}|{{ '\\n\\nx'.lstrip('\\n') }}|{{ 'x  '.rstrip() }}|"),
            "x|hi|x|x|");
  EXPECT_EQ(render("{{ 'Hi'.lower() }}{{ 'hi'.upper() }}{{ 'hi there'.title() }}{{ 'hI'.capitalize() }}"),
            "hiHIHi ThereHi");
  EXPECT_EQ(render("{{ 'abcabc'.find('c') }} {{ 'abcabc'.rfind('c') }} {{ 'abcabc'.count('bc') }}"), "2 5 2");
  EXPECT_EQ(render("{{ 'aaa'.replace('a', 'b', 2) }} {{ '-'.join(['a', 'b']) }} {{ 'a\\nb'.splitlines() }}"),
            "bba a-b ['a', 'b']");
  EXPECT_EQ(render("{{ '12'.isdigit() }} {{ 'ab'.isalpha() }} {{ ' '.isspace() }} {{ ''.isdigit() }}"),
            "True True True False");
  EXPECT_EQ(render("{{ 'ab'.startswith(('x', 'a')) }} {{ 'ab'.endswith('b') }}"), "True True");
  EXPECT_EQ(render("{{ '{} and {}'.format(1, 'x') }} {{ '{0}{1}{0}'.format('a', 'b') }} {{ '{n}!'.format(n=2) }}"),
            "1 and x aba 2!");
}

TEST(JinjaMethodsTest, DictAndListMethodsRead) {
  EXPECT_EQ(render("{% set d = {'a': 1} %}{{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 5) }} "
                   "{{ d.keys()|list }} {{ d.values()|list }} {{ d.items()|list }}"),
            "1 None 5 ['a'] [1] [('a', 1)]");
  EXPECT_EQ(render("{{ [1, 2, 2].count(2) }} {{ [1, 2].index(2) }}"), "2 1");
}

TEST(JinjaMethodsTest, MutatingMethodsAreUnsafe) {
  EXPECT_EQ(render_error("{{ [].append(1) }}"), "access to attribute 'append' of 'list' object is unsafe.");
  EXPECT_EQ(render_error("{{ {}.update({}) }}"), "access to attribute 'update' of 'dict' object is unsafe.");
  EXPECT_EQ(render_error("{{ {}.pop('a') }}"), "access to attribute 'pop' of 'dict' object is unsafe.");
}

TEST(JinjaMethodsTest, BadArgumentsAreRenderErrors) {
  EXPECT_EQ(render_error("{{ 'a'.split('') }}"), "empty separator");
  EXPECT_EQ(render_error("{{ '{}{0}'.format(1) }}"),
            "cannot switch from automatic field numbering to manual field specification");
  EXPECT_EQ(render_error("{{ 'a'.lower(1) }}"), "lower() takes no arguments");
  EXPECT_EQ(render_error("{{ 'a'.strip(x=1) }}"), "strip() got an unexpected keyword argument 'x'");
}

}  // namespace
}  // namespace strata::jinja
