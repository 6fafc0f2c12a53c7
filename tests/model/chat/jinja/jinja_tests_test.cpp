#include "model/chat/jinja/jinja_tests.h"

#include <gtest/gtest.h>

#include "model/chat/jinja/jinja_template.h"

namespace strata::jinja {
namespace {

std::string render(std::string_view source) { return Template(source).render(Value::dict({}), RenderTime{}); }

TEST(JinjaTestsTest, KnowsJinjaTestsOnly) {
  EXPECT_NE(find_test("defined"), nullptr);
  EXPECT_NE(find_test("divisibleby"), nullptr);
  EXPECT_NE(find_test("=="), nullptr);
  EXPECT_EQ(find_test("startingwith"), nullptr);  // not a Jinja2 3.1 test
  EXPECT_EQ(find_test(""), nullptr);
}

TEST(JinjaTestsTest, TypeTests) {
  EXPECT_EQ(render("{{ x is defined }} {{ x is undefined }} {{ none is none }} {{ 1 is number }} {{ 1.0 is float }} "
                   "{{ 1 is integer }} {{ true is integer }} {{ true is boolean }} {{ 'a' is string }}"),
            "False True True True True True False True True");
  EXPECT_EQ(render("{{ {} is mapping }} {{ [] is iterable }} {{ 'a' is iterable }} {{ [] is sequence }} "
                   "{{ range is callable }} {{ 1 is callable }}"),
            "True True True True True False");
}

TEST(JinjaTestsTest, ValueTests) {
  EXPECT_EQ(render("{{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(2) }} "
                   "{{ true is true }} {{ 1 is true }} {{ false is false }} {{ 'ab' is lower }} {{ 'AB' is upper }}"),
            "True True True False True False True True True");
  EXPECT_EQ(render("{{ 1 is eq 1 }} {{ 1 is ne 2 }} {{ 1 is lt 2 }} {{ 2 is ge 2 }} {{ 3 is gt 2 }} "
                   "{{ 3 is greaterthan 4 }} {{ 1 is in [1] }} {{ none is sameas none }} {{ 2 is not equalto 2 }}"),
            "True True True True True False True True False");
}

}  // namespace
}  // namespace strata::jinja
