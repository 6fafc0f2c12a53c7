#!/usr/bin/env python3
"""Write tests/data/chat_template_conversations.json: the conversations of the chat
template parity suite (tests/model/chat/chat_template_parity_test.cpp).

Each conversation is rendered by every template of
tests/data/chat_templates/parity_templates.json, by Jinja2 (tools/chat/render_reference.py)
and by Strata's Jinja engine. They are built to reach the branches real templates take:
tool definitions and calls in the shapes clients send, tool results, reasoning in its three
spellings (reasoning_content, <think> in content, gpt-oss's thinking), chat_template_kwargs,
RAG documents, awkward text, and conversations templates reject. The file is generated so
that it stays consistent and reproducible: edit this script, then run
  tools/chat/make_conversations.py > tests/data/chat_template_conversations.json
"""

import json
import sys

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather and an optional forecast for a place.",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "string",
                             "description": "City and country, e.g. \"Paris, France\""},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"],
                         "description": "Temperature unit", "default": "celsius"},
                "days": {"type": "integer", "description": "Days of forecast",
                         "minimum": 0, "maximum": 14},
                "include_hourly": {"type": "boolean", "description": "Hourly detail",
                                   "default": False},
            },
            "required": ["location"],
        },
    },
}

FLIGHTS_TOOL = {
    "type": "function",
    "function": {
        "name": "search_flights",
        "description": "Search flights between two airports.",
        "parameters": {
            "type": "object",
            "properties": {
                "origin": {"type": "string", "description": "IATA code of the origin"},
                "destination": {"type": "string",
                                "description": "IATA code of the destination"},
                "passengers": {
                    "type": "object",
                    "description": "Who travels",
                    "properties": {
                        "adults": {"type": "integer", "minimum": 1},
                        "children": {"type": "integer", "default": 0},
                    },
                    "required": ["adults"],
                },
                "cabin": {"type": "string", "enum": ["economy", "business", "first"],
                          "description": "Cabin class"},
                "stops": {"type": "array", "items": {"type": "string"},
                          "description": "Acceptable stop-over airports"},
                "max_price_ratio": {"type": "number", "default": 0.5,
                                    "description": "Highest price as a share of the median"},
                "tolerance": {"type": "number", "default": 1e-05,
                              "description": "Relative price tolerance"},
                "note": {"type": ["string", "null"], "default": None,
                         "description": "Free text for the agent"},
            },
            "required": ["origin", "destination", "passengers"],
        },
    },
}

CLOCK_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Current time in UTC.",
        "parameters": {"type": "object", "properties": {}},
    },
}

TOOLS = [WEATHER_TOOL, FLIGHTS_TOOL, CLOCK_TOOL]
# Without the nullable union type (["string", "null"]), which some templates cannot handle.
SIMPLE_TOOLS = [WEATHER_TOOL, CLOCK_TOOL]

WEATHER_ARGS = {"location": "Paris, France", "unit": "celsius", "days": 3,
                "include_hourly": False}
FLIGHTS_ARGS = {"origin": "CDG", "destination": "NRT", "passengers": {"adults": 2, "children": 1},
                "cabin": "economy", "stops": ["HEL", "DXB"], "max_price_ratio": 0.5,
                "tolerance": 1e-05, "note": None}
WEATHER_RESULT = '{"temperature": 21.5, "condition": "sunny", "humidity": 0.4}'
FLIGHTS_RESULT = '[{"flight": "AY74", "price_eur": 812.0, "stops": 1}]'

DOCUMENTS = [
    {"doc_id": 1, "title": "Tower facts",
     "text": "The Eiffel Tower is 330 metres tall and was finished in 1889."},
    {"doc_id": 2, "title": "Opening hours",
     "text": "Open every day, 9:30 to 23:45; last lift at 22:30.\nTickets: €29.40."},
]

LONG_TEXT = "\n".join(
    " ".join(f"w{line * 16 + word}" for word in range(16)) for line in range(400))


def user(content):
    return {"role": "user", "content": content}


def assistant(content):
    return {"role": "assistant", "content": content}


def system(content):
    return {"role": "system", "content": content}


def tool_call(call_id, name, arguments):
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": arguments}}


def calls(content, *tool_calls):
    return {"role": "assistant", "content": content, "tool_calls": list(tool_calls)}


def tool_result(call_id, name, content):
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def conversation(name, messages, **fields):
    item = {"name": name, "messages": messages}
    item.update({"tools": None, "documents": None, "add_generation_prompt": True, "kwargs": {}})
    item.update(fields)
    return item


def plain_conversations():
    return [
        conversation("single turn", [user("Hello!")]),
        conversation("single turn, system", [system("You are terse."), user("Hi there")]),
        conversation("three turns", [user("Hi"), assistant("Hello! How can I help?"),
                                     user("Tell me a joke.")]),
        conversation("eight turns with system", [
            system("Answer in one word."), user("Colour of the sky?"), assistant("Blue"),
            user("Of grass?"), assistant("Green"), user("Of snow?"), assistant("White"),
            user("Of coal?"), assistant("Black"), user("Thanks")]),
        conversation("closing assistant turn, no generation prompt",
                     [system("Be kind."), user("Hi"), assistant("Hello there.")],
                     add_generation_prompt=False),
        conversation("closing user turn, no generation prompt",
                     [user("Hi"), assistant("Hello."), user("Bye")],
                     add_generation_prompt=False),
        conversation("empty message list", []),
        conversation("system message only", [system("You are a helpful assistant.")]),
        conversation("system in the middle", [user("Hi"), assistant("Hello"),
                                              system("Switch to French."), user("Ça va ?")]),
        conversation("two leading system messages", [system("Rule one."), system("Rule two."),
                                                     user("Go")]),
        conversation("narrator role between user turns", [
            user("Hi"), {"role": "narrator", "content": "Meanwhile"}, user("Continue")]),
        conversation("assistant speaks first", [assistant("I speak first."), user("Fine.")]),
        conversation("two user turns in a row", [user("First"), user("Second")]),
        conversation("developer role", [{"role": "developer", "content": "Reply in JSON."},
                                        user("List two primes.")]),
    ]


def text_conversations():
    return [
        conversation("unicode: emoji, CJK, combining marks", [
            user("😀 👍🏽 👨‍👩‍👧‍👦 🇫🇷 — 日本語 中文 한국어"),
            assistant("e\u0301 n\u0303 a\u030a Z\u0335\u0321a\u0337l\u0336g\u0338o"),
            user("\u00e9 vs e\u0301: are they equal?")]),
        conversation("right-to-left text", [
            user("مرحبا بالعالم \u200fשלום עולם\u200f (mixed LTR)"),
            assistant("\u202bأهلاً\u202c"), user("ما هو الطقس؟")]),
        conversation("quotes and backslashes", [
            user("He said \"hi\" and 'bye'. Path: C:\\temp\\new\\x.txt, regex \\d+\\.\\d*"),
            assistant("Escapes: \\n is not a newline, \\\" is a quote, \\u0041 is not A."),
            user("`backticks` and \"double\" 'single' «guillemets»")]),
        conversation("template syntax in content", [
            system("{{ bos_token }} {% if true %}not a tag{% endif %}"),
            user("Render {{ messages[0] }} and {%- raw %} and {# comment #} literally"),
            assistant("{{- '}}' -}} {%+ for x in y %} }} %} #}"),
            user("<|im_start|>user\n[INST] <start_of_turn> <｜User｜>")]),
        conversation("newlines and trailing spaces", [
            user("line one  \nline two\t\n\n   indented line   \n"),
            assistant("\n\nstarts with blank lines and ends with spaces   "),
            user("  \n\t  ")]),
        conversation("empty contents", [system(""), user(""), assistant(""), user("")]),
        conversation("very long content", [user(LONG_TEXT), assistant("Noted."),
                                           user("Summarise it.")]),
        conversation("content as a list of text parts", [
            user([{"type": "text", "text": "Describe this"},
                  {"type": "text", "text": " briefly."}]),
            assistant([{"type": "text", "text": "It is a list of parts."}]),
            user([{"type": "text", "text": "Thanks"}])]),
        conversation("system content as a list of parts", [
            system([{"type": "text", "text": "You are a poet."}]), user("Write a haiku.")]),
        conversation("numbers and nulls in message fields", [
            {"role": "user", "content": "Hi", "name": None, "weight": 0.5, "seq": 7},
            {"role": "assistant", "content": "Hello", "refusal": None},
            user("Again")]),
    ]


def tool_conversations():
    weather_call = tool_call("call_8f2a1c9d0e", "get_weather", WEATHER_ARGS)
    flights_call = tool_call("call_77b3d0a4f1", "search_flights", FLIGHTS_ARGS)
    return [
        conversation("tools offered, single turn", [user("Weather in Paris?")], tools=TOOLS),
        conversation("tools offered, with system", [system("Use tools when useful."),
                                                    user("Weather in Paris?")], tools=TOOLS),
        conversation("tools offered, plain answer", [
            user("What is 2+2?"), assistant("4"), user("And 3+3?")], tools=SIMPLE_TOOLS),
        conversation("tool call with object arguments", [
            user("Weather in Paris?"), calls(None, weather_call),
            tool_result("call_8f2a1c9d0e", "get_weather", WEATHER_RESULT),
            assistant("It is 21.5 °C and sunny in Paris.")], tools=TOOLS),
        conversation("tool call with string arguments", [
            user("Weather in Paris?"),
            calls(None, tool_call("call_8f2a1c9d0e", "get_weather",
                                  json.dumps(WEATHER_ARGS))),
            tool_result("call_8f2a1c9d0e", "get_weather", WEATHER_RESULT)], tools=SIMPLE_TOOLS),
        conversation("tool call ending the conversation", [
            user("Flights CDG to Tokyo for two adults and a child?"),
            calls(None, flights_call)], tools=TOOLS, add_generation_prompt=False),
        conversation("parallel tool calls", [
            system("You plan trips."),
            user("Weather in Paris and flights CDG to NRT?"),
            calls(None, weather_call, flights_call),
            tool_result("call_8f2a1c9d0e", "get_weather", WEATHER_RESULT),
            tool_result("call_77b3d0a4f1", "search_flights", FLIGHTS_RESULT)], tools=TOOLS),
        conversation("tool call with empty content", [
            user("Weather in Paris?"), calls("", weather_call),
            tool_result("call_8f2a1c9d0e", "get_weather", WEATHER_RESULT),
            assistant("Sunny, 21.5 °C.")], tools=TOOLS),
        conversation("tool call with text content", [
            user("What time is it?"),
            calls("Let me check the clock.", tool_call("call_0c1d2e3f4a", "get_time", {})),
            tool_result("call_0c1d2e3f4a", "get_time", "2026-03-14T09:26:53Z"),
            assistant("It is 09:26 UTC."), user("Thanks!")], tools=SIMPLE_TOOLS),
        conversation("tool call ids of nine characters", [
            user("Weather in Paris?"),
            calls(None, tool_call("a1b2c3d4e", "get_weather", {"location": "Paris"})),
            tool_result("a1b2c3d4e", "get_weather", WEATHER_RESULT),
            assistant("Sunny."), user("And tomorrow?")], tools=SIMPLE_TOOLS),
        conversation("tool call id of nine non-ASCII code points", [
            user("Weather in Paris?"),
            calls(None, tool_call("ïd_2c3d4é", "get_weather", {"location": "Paris"})),
            tool_result("ïd_2c3d4é", "get_weather", WEATHER_RESULT),
            assistant("Sunny."), user("Thanks")], tools=SIMPLE_TOOLS),
        conversation("long non-ASCII tool call id", [
            user("Weather in 東京?"),
            calls(None, tool_call("call_東京_abcdef", "get_weather", {"location": "東京"})),
            tool_result("call_東京_abcdef", "get_weather", WEATHER_RESULT)], tools=SIMPLE_TOOLS),
        conversation("tool calls without tools offered", [
            user("Weather in Paris?"), calls(None, weather_call),
            tool_result("call_8f2a1c9d0e", "get_weather", WEATHER_RESULT)]),
        conversation("tool result without a call", [
            user("Hi"), tool_result("call_deadbeef00", "get_time", "12:00"),
            user("Go on")], tools=SIMPLE_TOOLS),
        conversation("two tool rounds", [
            user("Plan a trip to Tokyo."), calls(None, flights_call),
            tool_result("call_77b3d0a4f1", "search_flights", FLIGHTS_RESULT),
            calls(None, tool_call("call_5e6f7a8b9c", "get_weather",
                                  {"location": "Tokyo, Japan", "days": 7})),
            tool_result("call_5e6f7a8b9c", "get_weather", '{"temperature": 12}'),
            assistant("Fly AY74; expect 12 °C."), user("Great.")], tools=TOOLS),
        conversation("tool arguments with awkward values", [
            user("Search for it."),
            calls(None, tool_call("call_1a2b3c4d5e", "search_flights", {
                "note": "café \"quoted\" \\ back\\slash 日本 😀\nnew line\ttab \u2028 \u001f",
                "passengers": {"adults": 1, "children": 0,
                               "names": ["O'Brien", "say \"hi\"", "both ' and \"", "tab\there",
                                         "line\u2028sep", "ctl\u001f\u007f", "é😀", ""]},
                "numbers": [0, -3, 2.5, 1e-07, 1e+20, 1e16, 123456789.0, 0.1, -0.0, 3.14159],
                "flags": [True, False, None],
                "big": 12345678901234, "empty": {}, "nothing": []})),
            tool_result("call_1a2b3c4d5e", "search_flights", "[]")], tools=SIMPLE_TOOLS),
        conversation("tool result as an object", [
            user("Weather?"), calls(None, tool_call("call_8f2a1c9d0e", "get_weather",
                                                    {"location": "Oslo"})),
            {"role": "tool", "tool_call_id": "call_8f2a1c9d0e", "name": "get_weather",
             "content": {"temperature": -4.5, "condition": "snow", "alerts": ["ice"]}}],
            tools=SIMPLE_TOOLS),
    ]


def reasoning_conversations():
    return [
        conversation("reasoning_content on assistant turns", [
            user("What is 17 * 3?"),
            {"role": "assistant", "content": "51", "reasoning_content": "17*3 = 51."},
            user("And 17 * 4?")]),
        conversation("reasoning_content on the last turn, no generation prompt", [
            user("Is 91 prime?"),
            {"role": "assistant", "content": "No, 91 = 7 × 13.",
             "reasoning_content": "Try 7: 7*13 = 91."}], add_generation_prompt=False),
        conversation("think tags in content", [
            user("Capital of Australia?"),
            assistant("<think>\nNot Sydney.\n</think>\n\nCanberra."),
            user("Of Canada?")]),
        conversation("think tags in the last turn, no generation prompt", [
            user("Capital of Australia?"),
            assistant("<think>\nNot Sydney.\n</think>\n\nCanberra.")],
            add_generation_prompt=False),
        conversation("thinking field", [
            user("Pick a number."),
            {"role": "assistant", "content": "7", "thinking": "Any number will do."},
            user("Another?")]),
        conversation("thinking field on the last turn, no generation prompt", [
            user("Pick a number."),
            {"role": "assistant", "content": "7", "thinking": "Any number will do."}],
            add_generation_prompt=False),
        conversation("tool call without a content field", [
            user("What time is it?"),
            {"role": "assistant", "thinking": "The clock tool answers this.",
             "tool_calls": [tool_call("call_0c1d2e3f4a", "get_time", {})]},
            tool_result("call_0c1d2e3f4a", "get_time", "09:26"),
            assistant("09:26 UTC.")], tools=SIMPLE_TOOLS),
        conversation("enable_thinking false", [user("Quick: 2+2?")],
                     kwargs={"enable_thinking": False}),
        conversation("enable_thinking true", [system("Think first."), user("Why is the sky blue?")],
                     kwargs={"enable_thinking": True}),
        conversation("enable_thinking false with history", [
            user("Hi"), {"role": "assistant", "content": "Hello", "reasoning_content": "Greet."},
            user("Bye")], kwargs={"enable_thinking": False}),
        conversation("reasoning_effort low", [user("Name a prime.")],
                     kwargs={"reasoning_effort": "low"}),
        conversation("reasoning_effort high with builtin tools", [
            system("You research carefully."), user("Who built the Eiffel Tower?")],
            kwargs={"reasoning_effort": "high", "builtin_tools": ["browser", "python"]}),
        conversation("tool call with reasoning", [
            user("Weather in Paris?"),
            {"role": "assistant", "content": None, "reasoning_content": "Need the tool.",
             "thinking": "Need the tool.",
             "tool_calls": [tool_call("call_8f2a1c9d0e", "get_weather", WEATHER_ARGS)]},
            tool_result("call_8f2a1c9d0e", "get_weather", WEATHER_RESULT)], tools=SIMPLE_TOOLS),
    ]


def other_conversations():
    return [
        conversation("documents", [user("How tall is the Eiffel Tower?")],
                     documents=DOCUMENTS),
        conversation("documents and tools", [system("Cite your sources."),
                                             user("When can I visit, and the weather?")],
                     documents=DOCUMENTS, tools=TOOLS),
        conversation("custom date_string and builtin tools", [user("What day is it?")],
                     kwargs={"date_string": "14 Mar 2026", "builtin_tools": ["brave_search",
                                                                             "wolfram_alpha"]}),
        conversation("tools in the system message", [system("Be brief."),
                                                     user("Weather in Paris?")],
                     tools=TOOLS, kwargs={"tools_in_user_message": False}),
        conversation("functions and datetime", [user("Weather in Paris?")],
                     kwargs={"functions": json.dumps([t["function"] for t in SIMPLE_TOOLS]),
                             "datetime": "2026-03-14 09:26"}),
        conversation("thinking_budget 0", [system("Be quick."), user("2+2?")],
                     kwargs={"thinking_budget": 0}),
        conversation("thinking_budget 1000 with tools", [user("Weather in Paris?")],
                     tools=SIMPLE_TOOLS, kwargs={"thinking_budget": 1000}),
        conversation("model_identity", [user("Who are you?")],
                     kwargs={"model_identity": "You are Strata's test model."}),
    ]


def main():
    conversations = (plain_conversations() + text_conversations() + tool_conversations()
                     + reasoning_conversations() + other_conversations())
    document = {
        "comment": "Generated by tools/chat/make_conversations.py; rendered by every template "
                   "of chat_templates/parity_templates.json (tools/chat/render_reference.py "
                   "and tests/model/chat/chat_template_parity_test.cpp).",
        "conversations": conversations,
    }
    json.dump(document, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
