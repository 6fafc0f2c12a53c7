#include "model/chat/jinja/jinja_python_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace strata::jinja {
namespace {

TEST(JinjaPythonFormatTest, PrintsScalarsAsPythonStr) {
  EXPECT_EQ(python_str(Value::none()), "None");
  EXPECT_EQ(python_str(Value(true)), "True");
  EXPECT_EQ(python_str(Value(false)), "False");
  EXPECT_EQ(python_str(Value(int64_t{-42})), "-42");
  EXPECT_EQ(python_str(Value("text 'as is'")), "text 'as is'");
  EXPECT_EQ(python_str(Value()), "");
}

TEST(JinjaPythonFormatTest, PrintsFloatsAsPythonRepr) {
  EXPECT_EQ(python_float_repr(1.0), "1.0");
  EXPECT_EQ(python_float_repr(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(python_float_repr(1.5e-5), "1.5e-05");
  EXPECT_EQ(python_float_repr(1e-4), "0.0001");
  EXPECT_EQ(python_float_repr(123456789012345678.0), "1.2345678901234568e+17");
  EXPECT_EQ(python_float_repr(-0.0), "-0.0");
  EXPECT_EQ(python_float_repr(5e-324), "5e-324");
  EXPECT_EQ(python_float_repr(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(python_float_repr(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(python_float_repr(std::nan("")), "nan");
}

TEST(JinjaPythonFormatTest, QuotesStringsAsPythonRepr) {
  EXPECT_EQ(python_string_repr("plain"), "'plain'");
  EXPECT_EQ(python_string_repr("it's"), "\"it's\"");
  EXPECT_EQ(python_string_repr("a\"b"), "'a\"b'");
  EXPECT_EQ(python_string_repr("x'y\"z"), "'x\\'y\"z'");
  EXPECT_EQ(python_string_repr("\n\t\r\\"), "'\\n\\t\\r\\\\'");
  EXPECT_EQ(python_string_repr("\x01\x7f"), "'\\x01\\x7f'");
  // Printable non-ASCII stays; separators and format characters are escaped.
  EXPECT_EQ(python_string_repr("é世"), "'é世'");
  EXPECT_EQ(python_string_repr("\u00a0\u2028\u200b"), "'\\xa0\\u2028\\u200b'");
}

TEST(JinjaPythonFormatTest, PrintsContainersWithReprItems) {
  const Value list = Value::list({Value(int64_t{1}), Value("a"), Value::none(), Value(true), Value(1.0),
                                  Value::dict({{"k", Value::tuple({Value(int64_t{1})})}})});
  EXPECT_EQ(python_str(list), "[1, 'a', None, True, 1.0, {'k': (1,)}]");
  EXPECT_EQ(python_str(Value::tuple({})), "()");
  EXPECT_EQ(python_str(Value::tuple({Value(int64_t{1}), Value(int64_t{2})})), "(1, 2)");
  EXPECT_EQ(python_str(Value::dict({})), "{}");
  EXPECT_EQ(python_repr(Value("q")), "'q'");
}

}  // namespace
}  // namespace strata::jinja
