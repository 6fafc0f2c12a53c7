#!/usr/bin/env python3
"""Render chat conversations with real Jinja2, the way Hugging Face transformers does.

The output is the reference that Strata's native chat renderer (engine/chat) must match
byte for byte. It reproduces transformers' `apply_chat_template` environment:
ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks, the loopcontrols
extension, the `raise_exception` and `strftime_now` globals, transformers' own `tojson`
filter (keys in order, no ASCII escaping), and the variables messages, tools=None,
documents=None, add_generation_prompt, bos_token, eos_token and enable_thinking.

Usage:
  render_reference.py --templates tests/data/chat_templates/templates.json \
      --conversations tests/data/chat_conversations.json --out expected.json

Output: {"results": [{"template": NAME, "conversation": NAME, "output": TEXT}
                     or {..., "error": MESSAGE, "raised_by_template": BOOL}]}
`raised_by_template` is true where the template itself called raise_exception (the
message is then the template's own), false for other Jinja errors (e.g. messages[0] of
an empty conversation), whose wording is Jinja's and need not be matched.
"""

import argparse
import json
import os
import sys
from datetime import datetime

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


class TemplateRaised(jinja2.exceptions.TemplateError):
    """What raise_exception throws, told apart from Jinja's own errors."""


def raise_exception(message):
    raise TemplateRaised(message)


def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # As transformers: json.dumps without ASCII escaping and without sorting keys.
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent,
                      separators=separators, sort_keys=sort_keys)


def make_environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env


def render_one(template, template_spec, conversation):
    variables = {
        "messages": conversation["messages"],
        "tools": None,
        "documents": None,
        "add_generation_prompt": conversation.get("add_generation_prompt", True),
        "enable_thinking": conversation.get("enable_thinking", True),
        "bos_token": template_spec["bos_token"],
        "eos_token": template_spec["eos_token"],
    }
    result = {"template": template_spec["name"], "conversation": conversation["name"]}
    try:
        result["output"] = template.render(**variables)
    except TemplateRaised as error:
        result["error"] = str(error)
        result["raised_by_template"] = True
    except jinja2.exceptions.TemplateError as error:
        result["error"] = f"{type(error).__name__}: {error}"
        result["raised_by_template"] = False
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--templates", required=True,
                        help="templates.json: name, file, family, bos_token, eos_token")
    parser.add_argument("--conversations", required=True, help="chat_conversations.json")
    parser.add_argument("--out", required=True, help="where to write the expected outputs")
    args = parser.parse_args()

    with open(args.templates, encoding="utf-8") as f:
        template_specs = json.load(f)["templates"]
    with open(args.conversations, encoding="utf-8") as f:
        conversations = json.load(f)["conversations"]

    env = make_environment()
    templates_dir = os.path.dirname(os.path.abspath(args.templates))
    results = []
    for spec in template_specs:
        with open(os.path.join(templates_dir, spec["file"]), encoding="utf-8") as f:
            template = env.from_string(f.read())
        for conversation in conversations:
            results.append(render_one(template, spec, conversation))

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump({"jinja2_version": jinja2.__version__, "results": results}, f,
                  ensure_ascii=False, indent=1)
        f.write("\n")
    n_errors = sum(1 for r in results if "error" in r)
    print(f"rendered {len(results)} ({n_errors} raised) with Jinja2 {jinja2.__version__} "
          f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
