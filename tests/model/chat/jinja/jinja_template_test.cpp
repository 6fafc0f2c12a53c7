#include "model/chat/jinja/jinja_template.h"

#include <gtest/gtest.h>

#include <thread>

namespace strata::jinja {
namespace {

// The expected strings below are what Python's Jinja2 3.1 renders under transformers'
// environment (tools/chat/render_reference.py).
std::string render(std::string_view source, Value variables = Value::dict({})) {
  return Template(source).render(variables, RenderTime{});
}

template <typename E>
std::pair<std::string, int> error_of(std::string_view source, Value variables = Value::dict({})) {
  try {
    render(source, variables);
  } catch (const E& error) {
    return {error.what(), error.line()};
  }
  return {"no error", 0};
}

Value chat(int n_messages) {
  ValueList messages;
  for (int i = 0; i < n_messages; ++i) {
    messages.push_back(Value::dict({{"role", Value(i % 2 == 0 ? "user" : "assistant")},
                                    {"content", Value("message number " + std::to_string(i) + " with some text")}}));
  }
  return Value::dict({{"messages", Value::list(std::move(messages))}, {"add_generation_prompt", Value(true)},
                      {"bos_token", Value("<s>")}, {"eos_token", Value("</s>")}});
}

TEST(JinjaTemplateTest, PrintsValuesAsPython) {
  EXPECT_EQ(render("{{ [1, 'a', none, true, 1.0, {'a': (1,)}] }}"), "[1, 'a', None, True, 1.0, {'a': (1,)}]");
  EXPECT_EQ(render("{{ 7 // 2 }} {{ 7 / 2 }} {{ 'ab' * 2 }} {{ 'a' ~ 1 ~ none }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }}"),
            "3 3.5 abab a1None True False");
  EXPECT_EQ(render("{{ true and 'x' }} {{ 0 or 'y' }} {{ 1 if false else 2 }} [{{ 1 if false }}] {{ 'b' in 'abc' }}"),
            "x y 2 [] True");
  EXPECT_EQ(render("{{ 'abc'[::-1] }} {{ [1, 2, 3][-1] }} {{ 'héllo'[1:3] }} {{ foo.0 }}",
                   Value::dict({{"foo", Value::list({Value(int64_t{5})})}})),
            "cba 3 él 5");
}

TEST(JinjaTemplateTest, AppliesWhitespaceControl) {
  EXPECT_EQ(render("line1\n    {% if true %}\n    inner\n    {% endif %}\nline2"), "line1\n    inner\nline2");
  EXPECT_EQ(render("{%- if true -%}\n  a  \n{%- endif -%}\n b {{- ' c ' -}} d {# x #} e {#- y -#} f"), "ab c d  ef");
  EXPECT_EQ(render("x\r\ny{% if true %}\r\nz{% endif %}\n"), "x\nyz");
}

TEST(JinjaTemplateTest, Loops) {
  EXPECT_EQ(render("{% for x in [1, 2, 3] if x > 1 %}{{ loop.index }}/{{ loop.length }}:{{ x }}{{ loop.first }}"
                   "{{ loop.last }}{{ loop.revindex0 }}{{ loop.previtem }}{{ loop.nextitem }}{{ loop.cycle('a', 'b') }} "
                   "{% endfor %}"),
            "1/2:2TrueFalse13a 2/2:3FalseTrue02b ");
  EXPECT_EQ(render("{% for x in [] %}x{% else %}empty{% endfor %} {% for k, v in {'a': 1}.items() %}{{ k }}={{ v }}{% endfor %}"),
            "empty a=1");
  EXPECT_EQ(render("{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}"
                   "{{ x }}{% endfor %}"),
            "0134");
  // A set inside a loop body lasts one iteration; a namespace carries state out.
  EXPECT_EQ(render("{% for i in [1, 2] %}{% if i == 2 %}[{{ x }}]{% endif %}{% set x = i %}{% endfor %}[{{ x }}]"), "[][]");
  EXPECT_EQ(render("{% set ns = namespace(a=1) %}{% for i in range(3) %}{% set ns.a = ns.a + i %}{% endfor %}{{ ns.a }}"), "4");
}

TEST(JinjaTemplateTest, SetsMacrosCallsAndFilterBlocks) {
  EXPECT_EQ(render("{% set a, b = 1, 2 %}{{ a }}{{ b }} {% set x %}block {{ 1 + 1 }}{% endset %}[{{ x }}]"), "12 [block 2]");
  EXPECT_EQ(render("{% macro m(a, b=2) %}{{ a }}-{{ b }}-{{ varargs }}-{{ kwargs }}{% endmacro %}{{ m(1) }}|{{ m(1, 3, 4, c=5) }}"),
            "1-2-()-{}|1-3-(4,)-{'c': 5}");
  EXPECT_EQ(render("{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}"
                   "{% call wrap('b') %}bold{% endcall %}"
                   "{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}"
                   "{% call(item) each([1, 2]) %}[{{ item }}]{% endcall %}"),
            "<b>bold</b>[1][2]");
  EXPECT_EQ(render("{% filter upper %}hello {{ 'x' }}{% endfilter %}|{% filter trim|upper %}  a  {% endfilter %}"), "HELLO X|A");
  EXPECT_EQ(render("{% generation %}gen {{ 1 }}{% endgeneration %}"), "gen 1");
}

TEST(JinjaTemplateTest, DictLiteralsTakeKeysOfAnyScalarKind) {
  EXPECT_EQ(render("{% set d = {0: 0, 512: 128, 'a': 2} %}{{ d }} {{ d[512] }} {{ d|dictsort(by='value') }} "
                   "{{ d|tojson }} {{ 512 in d }}"),
            "{0: 0, 512: 128, 'a': 2} 128 [(0, 0), ('a', 2), (512, 128)] {\"0\": 0, \"512\": 128, \"a\": 2} True");
}

TEST(JinjaTemplateTest, RaiseExceptionCarriesTheTemplatesMessage) {
  const auto [message, line] = error_of<TemplateRaised>("a\n{{ raise_exception('Bad role: ' ~ 'x') }}");
  EXPECT_EQ(message, "Bad role: x");
  EXPECT_EQ(line, 2);
}

TEST(JinjaTemplateTest, RenderErrorsReadAsJinja) {
  const Value empty = Value::dict({{"messages", Value::list({})}, {"m", Value::dict({})}});
  EXPECT_EQ(error_of<RenderError>("\n\n{{ messages[0].role }}", empty),
            (std::pair<std::string, int>{"list object has no element 0", 3}));
  EXPECT_EQ(error_of<RenderError>("{{ m.content.strip() }}", empty).first, "'dict object' has no attribute 'content'");
  EXPECT_EQ(error_of<RenderError>("{{ foo.bar }}").first, "'foo' is undefined");
  EXPECT_EQ(error_of<RenderError>("{{ foo() }}").first, "'foo' is undefined");
  EXPECT_EQ(error_of<RenderError>("{{ 'a' + 1 }}").first, "can only concatenate str (not \"int\") to str");
  EXPECT_EQ(error_of<RenderError>("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}").first,
            "macro 'm' takes not more than 1 argument(s)");
  EXPECT_EQ(error_of<RenderError>("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}").first,
            "maximum recursion depth exceeded in macro 'm'");
  // Undefined prints as nothing, is false, and iterates as empty.
  EXPECT_EQ(render("[{{ nope }}]{% if nope %}x{% endif %}{% for x in nope %}y{% endfor %}{{ nope|length }}"), "[]0");
}

TEST(JinjaTemplateTest, ParseErrorsNameTheConstructAndLine) {
  try {
    Template("{{ a }}\n{% for m in messages %}{{ m|xmlattr }}{% endfor %}");
    FAIL() << "no error";
  } catch (const ParseError& error) {
    EXPECT_STREQ(error.what(), "unsupported filter 'xmlattr' at line 2");
    EXPECT_EQ(error.line(), 2);
  }
}

TEST(JinjaTemplateTest, StrftimeNowFormatsTheGivenTime) {
  RenderTime time;
  time.local_time.tm_year = 2024 - 1900;
  time.local_time.tm_mon = 6;
  time.local_time.tm_mday = 26;
  EXPECT_EQ(Template("{{ strftime_now('%d %b %Y') }}").render(Value::dict({}), time), "26 Jul 2024");
}

constexpr std::string_view kChatTemplate =
    "{{ bos_token }}{% for message in messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'].strip() + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ ' ' + message['content'] | trim + eos_token }}{% endif %}"
    "{% endfor %}";

TEST(JinjaTemplateTest, RendersConcurrentlyFromOneParse) {
  const Template chat_template(kChatTemplate);
  const std::string expected = chat_template.render(chat(6), RenderTime{});
  EXPECT_TRUE(expected.starts_with("<s>[INST] message number 0 with some text [/INST] message number 1"));
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) mismatches[t] += chat_template.render(chat(6), RenderTime{}) != expected;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

TEST(JinjaTemplateTest, ARunawayTemplateFailsInsteadOfHanging) {
  // A hostile model file: 10^10 loop iterations, or gigabytes of output.
  const Template loops("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
                       "{% endfor %}");
  try {
    loops.render(Value::dict({}), RenderTime{});
    FAIL() << "10^10 iterations finished";
  } catch (const RenderError& e) {
    EXPECT_NE(std::string(e.what()).find("steps"), std::string::npos) << e.what();
  }
  const Template output("{% for i in range(100000) %}{{ 'x' * 60000000 }}{% endfor %}");
  try {
    output.render(Value::dict({}), RenderTime{});
    FAIL() << "6 TB of output were written";
  } catch (const RenderError& e) {
    EXPECT_NE(std::string(e.what()).find("MiB"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata::jinja
