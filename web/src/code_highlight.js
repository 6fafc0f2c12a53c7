// Syntax highlighting for code blocks in replies: highlight.js with the languages a
// chat about programming meets most, registered one by one to keep the bundle small.
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import csharp from 'highlight.js/lib/languages/csharp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const kLanguages = {
  bash, c, cpp, csharp, css, diff, go, java, javascript, json, markdown, python, rust, shell,
  sql, typescript, xml, yaml,
};
for (const [name, language] of Object.entries(kLanguages)) hljs.registerLanguage(name, language);

// Code of a fenced block as highlighted HTML (highlight.js escapes the code itself),
// and the label to show: the fence's language, else the one guessed.
export function highlight(code, language) {
  if (language && hljs.getLanguage(language)) {
    return { html: hljs.highlight(code, { language, ignoreIllegals: true }).value, label: language };
  }
  const guess = hljs.highlightAuto(code);
  return { html: guess.value, label: language || guess.language || 'text' };
}
