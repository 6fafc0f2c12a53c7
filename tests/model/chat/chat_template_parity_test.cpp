// Acceptance test: Strata's Jinja engine against Python's Jinja2 on real chat templates.
//
// The fixture test chat_template_parity_render runs tools/chat/render_reference.py, which
// renders every conversation of tests/data/chat_conversations.json and
// tests/data/chat_template_conversations.json with every template of
// tests/data/chat_templates/parity_templates.json under Jinja2 set up as Hugging Face
// transformers sets it up, at a fixed strftime_now time, into STRATA_CHAT_PARITY_REFERENCE.
// That file also records the exact variables each render was given. Here each template is
// parsed once by jinja::Template and rendered with the same variables at the same time:
// the text must be byte-identical, and where Jinja2 raised, the engine must throw too, with
// the template's own raise_exception message, or Jinja2's message for its own errors
// (UndefinedError, TypeError, ...). Every case runs, so one run shows all differences; a
// summary per template follows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_template.h"
#include "model/chat/jinja/jinja_value.h"

namespace strata::jinja {
namespace {

using nlohmann::ordered_json;

constexpr size_t kMinTemplates = 25;
constexpr size_t kMinConversations = 40;  // in chat_template_conversations.json alone

const std::string kDataDir = std::string(STRATA_SOURCE_DIR) + "/tests/data";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

ordered_json read_json(const std::string& path) { return ordered_json::parse(read_file(path)); }

// The test data's JSON as the engine's values; objects keep their keys in file order, as
// Python's json module does.
Value to_value(const ordered_json& json) {
  switch (json.type()) {
    case ordered_json::value_t::null:
      return Value::none();
    case ordered_json::value_t::boolean:
      return Value(json.get<bool>());
    case ordered_json::value_t::number_integer:
      return Value(json.get<int64_t>());
    case ordered_json::value_t::number_unsigned: {
      const uint64_t number = json.get<uint64_t>();
      if (number > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        throw std::out_of_range("integer beyond int64 in test data: " + json.dump());
      }
      return Value(static_cast<int64_t>(number));
    }
    case ordered_json::value_t::number_float:
      return Value(json.get<double>());
    case ordered_json::value_t::string:
      return Value(json.get<std::string>());
    case ordered_json::value_t::array: {
      ValueList items;
      for (const ordered_json& item : json) items.push_back(to_value(item));
      return Value::list(std::move(items));
    }
    case ordered_json::value_t::object: {
      ValueDict items;
      for (const auto& [key, item] : json.items()) items.emplace_back(key, to_value(item));
      return Value::dict(std::move(items));
    }
    default:
      throw std::invalid_argument("unexpected JSON in test data: " + json.dump());
  }
}

// "2026-03-14T09:26:53" as the broken-down time Python's naive datetime holds, with the
// weekday and day of the year filled in (a round trip through UTC) for %a, %A and %j.
RenderTime render_time_from_iso(const std::string& iso) {
  std::tm fields{};
  std::istringstream in(iso);
  in >> std::get_time(&fields, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) throw std::invalid_argument("not an ISO 8601 time: " + iso);
  const std::time_t seconds = timegm(&fields);
  RenderTime time;
  gmtime_r(&seconds, &time.local_time);
  return time;
}

// Escapes control characters and backslashes so that a difference is visible.
std::string visible(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (byte < 0x20 || byte == 0x7f) {
      constexpr char kHex[] = "0123456789abcdef";
      out += std::string("\\x") + kHex[byte >> 4] + kHex[byte & 15];
    } else {
      out += c;
    }
  }
  return out;
}

// Where two texts first differ, with some context from each.
std::string describe_difference(const std::string& engine, const std::string& jinja2) {
  constexpr size_t kContext = 60;  // bytes each side
  const auto first_difference =
      std::mismatch(engine.begin(), engine.end(), jinja2.begin(), jinja2.end()).first;
  const size_t offset = static_cast<size_t>(first_difference - engine.begin());
  const size_t from = offset > kContext ? offset - kContext : 0;
  std::ostringstream out;
  out << "outputs differ at byte " << offset << " (engine " << engine.size() << " bytes, Jinja2 "
      << jinja2.size() << " bytes)\n  engine: …" << visible(engine.substr(from, 2 * kContext))
      << "…\n  Jinja2: …" << visible(jinja2.substr(from, 2 * kContext)) << "…";
  return out.str();
}

// What rendering one case gave: text, or an exception told by its kind.
struct Outcome {
  enum class Kind { kOutput, kTemplateRaised, kRenderError, kOtherException } kind;
  std::string text;  // the output, or the exception's message
};

Outcome render_case(const Template& tmpl, const Value& variables, const RenderTime& now) {
  try {
    return {Outcome::Kind::kOutput, tmpl.render(variables, now)};
  } catch (const TemplateRaised& error) {
    return {Outcome::Kind::kTemplateRaised, error.what()};
  } catch (const RenderError& error) {
    return {Outcome::Kind::kRenderError, error.what()};
  } catch (const std::exception& error) {
    return {Outcome::Kind::kOtherException, error.what()};
  }
}

std::string describe(const Outcome& outcome) {
  switch (outcome.kind) {
    case Outcome::Kind::kOutput:
      return "rendered \"" + visible(outcome.text.substr(0, 300)) + "\"";
    case Outcome::Kind::kTemplateRaised:
      return "threw TemplateRaised \"" + outcome.text + "\"";
    case Outcome::Kind::kRenderError:
      return "threw RenderError \"" + outcome.text + "\"";
    case Outcome::Kind::kOtherException:
      return "threw an exception that is not a jinja::Error: \"" + outcome.text + "\"";
  }
  return "";
}

// Per template: how the cases came out.
struct Tally {
  size_t n_identical = 0;        // same text
  size_t n_same_error = 0;       // both raised, same kind and message
  size_t n_text_differs = 0;     // both rendered, texts differ
  size_t n_message_differs = 0;  // both raised alike, messages differ
  size_t n_kind_differs = 0;     // one rendered and the other raised, or raised differently
  std::string parse_error;       // where the engine could not parse the template

  size_t n_cases() const {
    return n_identical + n_same_error + n_text_differs + n_message_differs + n_kind_differs;
  }
};

// Whether the engine's message says what Jinja2's does. A RecursionError's text is
// CPython's own ("maximum recursion depth exceeded", with a suffix that varies by where
// the interpreter hit its limit), so there the engine's message need only begin with it.
bool same_message(const std::string& jinja2_type, const std::string& jinja2_message,
                  const std::string& engine_message) {
  if (jinja2_type == "RecursionError") return engine_message.starts_with(jinja2_message);
  return engine_message == jinja2_message;
}

// Compares one case; returns the failure's description, empty where the engine agrees.
std::string compare(const ordered_json& expected, const Outcome& outcome, Tally& tally) {
  if (expected.contains("output")) {
    const std::string want = expected["output"];
    if (outcome.kind != Outcome::Kind::kOutput) {
      ++tally.n_kind_differs;
      return "Jinja2 rendered, engine " + describe(outcome);
    }
    if (outcome.text == want) {
      ++tally.n_identical;
      return "";
    }
    ++tally.n_text_differs;
    return describe_difference(outcome.text, want);
  }
  const std::string want_type = expected["error_type"];
  const std::string want_message = expected["error_message"];
  const Outcome::Kind want_kind = want_type == "TemplateRaised" ? Outcome::Kind::kTemplateRaised
                                                                : Outcome::Kind::kRenderError;
  const std::string jinja2_raised = "Jinja2 raised " + want_type + " \"" + want_message + "\"";
  if (outcome.kind != want_kind) {
    ++tally.n_kind_differs;
    return jinja2_raised + ", engine " + describe(outcome);
  }
  if (!same_message(want_type, want_message, outcome.text)) {
    ++tally.n_message_differs;
    return jinja2_raised + ", engine " + describe(outcome) + " (message differs)";
  }
  ++tally.n_same_error;
  return "";
}

struct Reference {
  ordered_json file;                       // render_reference.py's output
  std::map<std::string, Value> variables;  // by conversation, without special tokens
};

Reference load_reference() {
  Reference reference{read_json(STRATA_CHAT_PARITY_REFERENCE), {}};
  for (const auto& [name, conversation] : reference.file["conversations"].items()) {
    reference.variables.emplace(name, to_value(conversation["variables"]));
  }
  return reference;
}

// The conversation's variables plus the template's special tokens.
Value variables_for(const Value& conversation, const ordered_json& special_tokens) {
  ValueDict variables = conversation.as_dict();
  for (const auto& [name, text] : special_tokens.items()) {
    variables.emplace_back(name, to_value(text));
  }
  return Value::dict(std::move(variables));
}

void print_summary(const std::vector<std::string>& names,
                   const std::map<std::string, Tally>& tallies) {
  std::cout << "template                      identical  same-error  text-differs  "
               "message-differs  kind-differs\n";
  for (const std::string& name : names) {
    const Tally& t = tallies.at(name);
    std::cout << std::left << std::setw(30) << name << std::right << std::setw(9)
              << t.n_identical << std::setw(12) << t.n_same_error << std::setw(14)
              << t.n_text_differs << std::setw(17) << t.n_message_differs << std::setw(14)
              << t.n_kind_differs;
    if (!t.parse_error.empty()) std::cout << "  parse error: " << t.parse_error;
    std::cout << "\n";
  }
}

TEST(ChatTemplateParityTest, SuiteHasEnoughTemplatesAndConversations) {
  const ordered_json templates = read_json(kDataDir + "/chat_templates/parity_templates.json");
  EXPECT_GE(templates["templates"].size(), kMinTemplates);
  const ordered_json conversations = read_json(kDataDir + "/chat_template_conversations.json");
  EXPECT_GE(conversations["conversations"].size(), kMinConversations);
}

TEST(ChatTemplateParityTest, EngineRendersAsJinja2) {
  Reference reference;
  try {
    reference = load_reference();
  } catch (const std::exception& error) {
    FAIL() << error.what() << " (written by the ctest fixture chat_template_parity_render: "
           << "run `ctest -R chat_template_parity`)";
  }
  const RenderTime now = render_time_from_iso(reference.file["now"].get<std::string>());

  const ordered_json specs = read_json(kDataDir + "/chat_templates/parity_templates.json");
  std::vector<std::string> names;
  std::map<std::string, std::unique_ptr<Template>> templates;  // null where parsing failed
  std::map<std::string, Tally> tallies;
  for (const ordered_json& spec : specs["templates"]) {
    const std::string name = spec["name"];
    names.push_back(name);
    tallies.try_emplace(name);
    try {
      templates[name] = std::make_unique<Template>(
          read_file(kDataDir + "/chat_templates/" + spec["file"].get<std::string>()));
    } catch (const std::exception& error) {
      tallies[name].parse_error = error.what();
      ADD_FAILURE() << name << ": the engine cannot parse the template: " << error.what();
    }
  }

  for (const ordered_json& expected : reference.file["results"]) {
    const std::string template_name = expected["template"];
    const std::string conversation_name = expected["conversation"];
    ASSERT_TRUE(templates.contains(template_name)) << template_name;
    ASSERT_TRUE(reference.variables.contains(conversation_name)) << conversation_name;
    Tally& tally = tallies[template_name];
    if (!templates.at(template_name)) {
      ++tally.n_kind_differs;
      continue;
    }
    const Value variables =
        variables_for(reference.variables.at(conversation_name),
                      reference.file.at("templates").at(template_name).at("special_tokens"));
    const Outcome outcome = render_case(*templates.at(template_name), variables, now);
    const std::string failure = compare(expected, outcome, tally);
    if (!failure.empty()) {
      ADD_FAILURE() << template_name << " / " << conversation_name << ": " << failure;
    }
  }
  print_summary(names, tallies);
  for (const std::string& name : names) {
    EXPECT_EQ(tallies.at(name).n_cases(), reference.variables.size())
        << name << ": not every conversation was rendered (rerun the fixture)";
  }
}

}  // namespace
}  // namespace strata::jinja
