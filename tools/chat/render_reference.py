#!/usr/bin/env python3
"""Render chat conversations with real Jinja2, the way Hugging Face transformers does.

The output is the reference that Strata's chat rendering must match byte for byte: the
Jinja engine (model/chat/jinja/, tests/model/chat/chat_template_parity_test.cpp) and
`strata dev render-chat` (tests/service/render_chat_command_test.cpp). It
reproduces transformers' `apply_chat_template` environment: ImmutableSandboxedEnvironment
with trim_blocks and lstrip_blocks, the loopcontrols extension, the `{% generation %}` tag
(which renders its body), the `raise_exception` and `strftime_now` globals, transformers'
own `tojson` filter (keys in order, no ASCII escaping), and the call
    template.render(messages=..., tools=..., documents=..., add_generation_prompt=...,
                    **special_tokens, **kwargs)

Conversations (a JSON file with a "conversations" list) carry "name", "messages" and
optionally "tools", "documents" (both None when absent, as transformers passes them),
"add_generation_prompt" (default true) and "kwargs" (chat_template_kwargs such as
enable_thinking, reasoning_effort, builtin_tools). A conversation without "kwargs" is in
the first format of tests/data/chat_conversations.json: its kwargs are
{"enable_thinking": <its "enable_thinking", default true>}.

Templates (e.g. parity_templates.json) carry "name", "file", "bos_token" and "eos_token"; a token that
is null is not passed at all, as transformers leaves out special tokens a tokenizer lacks.

strftime_now formats the current local time, or the fixed time given with --now (ISO 8601,
e.g. 2026-03-14T09:26:53), so that the output is reproducible.

Usage:
  render_reference.py --templates tests/data/chat_templates/parity_templates.json \
      --conversations tests/data/chat_conversations.json [more.json ...] \
      [--now 2026-03-14T09:26:53] --out expected.json

Output: {"jinja2_version": V, "now": ISO or null,
         "templates": {NAME: {"special_tokens": {...}}},
         "conversations": {NAME: {"variables": {everything passed but the special tokens}}},
         "results": [{"template": NAME, "conversation": NAME, "output": TEXT}
                     or {..., "error": MESSAGE, "raised_by_template": BOOL,
                         "error_type": CLASS, "error_message": TEXT}]}
`raised_by_template` is true where the template itself called raise_exception (`error` is
then the template's own message), false for other errors, whose `error` reads
"<class>: <message>" (e.g. "UndefinedError: 'dict object' has no attribute 'content'").
`error_type` is "TemplateRaised" or Python's class name (UndefinedError, TypeError, ...),
`error_message` the bare message.
"""

import argparse
import json
import os
import sys
from datetime import datetime

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


class TemplateRaised(jinja2.exceptions.TemplateError):
    """What raise_exception throws, told apart from Jinja's own errors."""


class GenerationBlock(Extension):
    """`{% generation %}...{% endgeneration %}`: transformers marks the assistant's tokens
    with it (for training masks); rendering a prompt, it is just its body."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_render_body"), [], [], body).set_lineno(lineno)

    def _render_body(self, caller):
        return caller()


def raise_exception(message):
    raise TemplateRaised(message)


def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # As transformers: json.dumps without ASCII escaping and without sorting keys.
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent,
                      separators=separators, sort_keys=sort_keys)


def make_environment(now):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationBlock, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    if now is None:
        env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    else:
        env.globals["strftime_now"] = lambda fmt: now.strftime(fmt)
    return env


def special_tokens(template_spec):
    return {key: template_spec[key] for key in ("bos_token", "eos_token")
            if template_spec.get(key) is not None}


def conversation_variables(conversation):
    """Everything rendered with a conversation except the template's special tokens."""
    kwargs = conversation.get("kwargs")
    if kwargs is None:
        kwargs = {"enable_thinking": conversation.get("enable_thinking", True)}
    variables = {
        "messages": conversation["messages"],
        "tools": conversation.get("tools"),
        "documents": conversation.get("documents"),
        "add_generation_prompt": conversation.get("add_generation_prompt", True),
    }
    clashes = set(kwargs) & set(variables)
    if clashes:
        raise ValueError(f"{conversation['name']}: kwargs repeat {sorted(clashes)}")
    variables.update(kwargs)
    return variables


def render_one(template, tokens, variables):
    try:
        return {"output": template.render(**variables, **tokens)}
    except TemplateRaised as error:
        return {"error": str(error), "raised_by_template": True,
                "error_type": "TemplateRaised", "error_message": str(error)}
    except Exception as error:  # noqa: BLE001 - TypeError etc. are outcomes to compare too
        return {"error": f"{type(error).__name__}: {error}", "raised_by_template": False,
                "error_type": type(error).__name__, "error_message": str(error)}


def read_template(templates_dir, spec):
    # Bytes as they are: no newline translation (Jinja2 normalises newlines itself).
    with open(os.path.join(templates_dir, spec["file"]), "rb") as f:
        return f.read().decode("utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--templates", required=True,
                        help="templates JSON: name, file, bos_token, eos_token")
    parser.add_argument("--conversations", required=True, nargs="+",
                        help="conversation files, e.g. chat_conversations.json")
    parser.add_argument("--now", help="the time strftime_now formats, ISO 8601")
    parser.add_argument("--out", required=True, help="where to write the expected outputs")
    args = parser.parse_args()

    with open(args.templates, encoding="utf-8") as f:
        template_specs = json.load(f)["templates"]
    conversations = []
    for path in args.conversations:
        with open(path, encoding="utf-8") as f:
            conversations += json.load(f)["conversations"]
    names = [c["name"] for c in conversations]
    if len(set(names)) != len(names):
        raise SystemExit("conversation names must be unique across the files")
    variables_by_name = {c["name"]: conversation_variables(c) for c in conversations}

    now = datetime.fromisoformat(args.now) if args.now else None
    env = make_environment(now)
    templates_dir = os.path.dirname(os.path.abspath(args.templates))
    results = []
    for spec in template_specs:
        template = env.from_string(read_template(templates_dir, spec))
        tokens = special_tokens(spec)
        for name in names:
            result = {"template": spec["name"], "conversation": name}
            result.update(render_one(template, tokens, variables_by_name[name]))
            results.append(result)

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump({"jinja2_version": jinja2.__version__, "now": args.now,
                   "templates": {s["name"]: {"special_tokens": special_tokens(s)}
                                 for s in template_specs},
                   "conversations": {name: {"variables": variables}
                                     for name, variables in variables_by_name.items()},
                   "results": results}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    n_errors = sum(1 for r in results if "error" in r)
    print(f"rendered {len(results)} ({n_errors} raised) with Jinja2 {jinja2.__version__} "
          f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
