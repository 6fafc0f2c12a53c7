// Reference token ids for Strata's tokenizer tests, from @lenml/tokenizers (a
// port of transformers.js) loading the same tokenizer.json files the C++ test
// imports. Writes OUT_DIR/<name>.jsonl, one line per test string:
//   {"text": ..., "ids": [...], "ids_plain": [...]}
//   ids:       encode(text, add_special_tokens=true); added tokens in the text
//              are recognised (C++: add_special=true, parse_special=true)
//   ids_plain: add_special_tokens=false, special added tokens NOT recognised,
//              non-special ones still are (HF's split_special_tokens=True; C++:
//              add_special=false, parse_special=false). transformers.js has no
//              such switch, so a second tokenizer is built whose added_tokens
//              list keeps only the non-special entries.
//
// The strings are generated from a seeded PRNG, so every run writes the same
// files. Characters on which this JavaScript port is known to differ from
// Hugging Face's Rust tokenizers are left out (see EXCLUDED below).
//
// Usage: node reference_tokenize.mjs --out DIR [--count N] [--seed S]
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { TokenizerLoader } from "@lenml/tokenizers";

const here = path.dirname(fileURLToPath(import.meta.url));
const TOKENIZERS = ["llama2", "llama3", "qwen3"];

function parse_args(argv) {
  const args = { out: null, count: 2400, seed: 20240601 };
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!(key in args)) throw new Error(`unknown option ${argv[i]}`);
    args[key] = key === "out" ? argv[i + 1] : Number(argv[i + 1]);
  }
  if (!args.out) throw new Error("usage: node reference_tokenize.mjs --out DIR [--count N] [--seed S]");
  return args;
}

// mulberry32: small, seeded, identical on every platform.
function make_rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)), // inclusive
    pick: (items) => items[Math.floor(next() * items.length)],
  };
}

// Where transformers.js (JavaScript regexes, V8/ICU) and HF tokenizers (Rust,
// Oniguruma) disagree, the Rust side is the truth Strata follows, so these
// never appear in the generated text:
//   U+0085 NEL:  \s for Oniguruma, not for JavaScript
//   U+FEFF BOM:  \s for JavaScript, not for Oniguruma
//   U+017F ſ:    (?i:'s) matches 'ſ in Oniguruma; transformers.js rewrites the
//                group as '[sS]
// and characters newer than Unicode 13 (utf8proc 2.6's NFC tables) are avoided
// by drawing random characters only from long-assigned ranges.
const EXCLUDED = new Set([0x85, 0xfeff, 0x17f]);

const WORDS = (
  "the quick brown fox jumps over lazy dog tokenizer server cache memory block page " +
  "request model inference latency throughput Hello World Strata GPU NVMe prefix " +
  "don't can't won't it's we're they've I'm you'll he'd She'S THEY'RE We'LL I'D " +
  "hello HELLO Hello hELLO naïve café résumé façade coöperate Zürich São Paulo " +
  "antidisestablishmentarianism supercalifragilisticexpialidocious a I an of to in"
).split(" ");

const SNIPPETS = [
  "function add(a, b) {\n\treturn a + b;\n}\n",
  "def main():\n    for i in range(10):\n        print(f\"{i:>4}\")\n",
  "#include <vector>\nint main() { std::vector<int> v{1, 2, 3}; return v[0]; }\r\n",
  "<div class=\"box\" id='x'>&nbsp;&lt;tag&gt;</div>",
  "{\"key\": [1, 2.5, -3e10, null, true], \"nested\": {\"a\": \"b\"}}",
  "SELECT * FROM users WHERE id = 42 AND name LIKE '%o''brien%';",
  "x += y ** 2 // 3 % 7 != 0 && z <= 10 || !flag",
  "    indented    with    spaces\t\tand\ttabs  ",
  "https://example.com/path?query=1&other=two#fragment",
  "user@example.org, +1 (555) 123-4567, 192.168.0.1:8080",
  "let s = `template ${value}`; // comment\n/* block */",
  "fn main() -> Result<(), Box<dyn Error>> { Ok(()) }",
  "$ ls -la | grep '^d' > out.txt 2>&1",
  "====== ------ ****** ...... ,,,, !!!! ???? ;;;;",
];

const SPECIAL_TEXTS = [
  "<s>", "</s>", "<unk>", "<|im_start|>", "<|im_end|>", "<|endoftext|>",
  "<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<|start_header_id|>",
  "<|end_header_id|>", "<|reserved_special_token_5|>", "<think>", "</think>",
  "<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|vision_pad|>",
  "<|im_start|", "<|im_start|>>", "<<s>>", "< s>", "<|im_start|><|im_end|>",
  "<s><s>", "<|eot_id|><|eot_id|>", "<|endoftext", "im_start|>",
];

const EMOJI = [
  "😀", "👍", "👍🏽", "❤️", "❤", "🔥", "🎉", "🙏🏿", "👨‍👩‍👧‍👦", "🏳️‍🌈", "👩🏽‍💻",
  "🧑‍🤝‍🧑", "🇺🇸", "🇯🇵🇫🇷", "1️⃣", "#️⃣", "☺️", "✌🏼", "🐶🐱", "🤖", "👁️‍🗨️",
];

const SCRIPTS = [
  "我们今天去公园散步。天气很好！", "中文字符和English混合123", "東京都渋谷区",
  "こんにちは、世界！カタカナとひらがな。", "안녕하세요 세계, 반갑습니다.",
  "مرحبا بالعالم", "مَرْحَبًا بِكُمْ", "١٢٣ ٤٥٦", "שלום עולם",
  "नमस्ते दुनिया", "हिन्दी भाषा में लिखा गया वाक्य।", "०१२३४५६७८९",
  "Привет, мир! Ёжик", "Γειά σου Κόσμε", "สวัสดีชาวโลก", "Ωμέγα ὦ",
];

const COMBINING = [
  "e\u0301", "a\u0308", "n\u0303", "A\u030A", "o\u0302\u0323", "o\u0323\u0302",
  "\u1100\u1161", "\u1100\u1161\u11A8", "\u212B", "\u2126", "\u0344", "ﬁ", "ǅ",
  "cafe\u0301", "Ame\u0301lie", "\u0041\u0301\u0301", "\u0915\u093c", "\u0e01\u0e33",
];

const SPACES = [
  " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", "\r", "\u00A0", "\u3000", "\u2009",
  "\u000B", "\u000C", "\u2028", "\u2029", "\u200B", "\u180E", "\u1680", " \n ", "\t \t",
  "\r\n\r\n", "    ", "\n    ", " \u00A0 ",
];

// Long-assigned code point ranges (all in Unicode <= 8.0, most in 1.1).
const RANGES = [
  [0x20, 0x7e], [0xa0, 0xff], [0x100, 0x17e], [0x391, 0x3a9], [0x3b1, 0x3c9],
  [0x410, 0x44f], [0x5d0, 0x5ea], [0x621, 0x63a], [0x641, 0x64a], [0x660, 0x669],
  [0x905, 0x939], [0x93e, 0x94d], [0x966, 0x96f], [0xe01, 0xe3a], [0x2010, 0x2027],
  [0x20a0, 0x20b9], [0x2150, 0x2182], [0x2190, 0x21ff], [0x2200, 0x22ff], [0x2460, 0x24ff],
  [0x2500, 0x257f], [0x3041, 0x3094], [0x30a1, 0x30fa], [0x4e00, 0x9fa5], [0xac00, 0xd7a3],
  [0xff01, 0xff5e], [0x1f600, 0x1f64f], [0x1f300, 0x1f320], [0x300, 0x36f],
];

function random_char(rng) {
  for (;;) {
    const [lo, hi] = rng.pick(RANGES);
    const cp = rng.int(lo, hi);
    if (!EXCLUDED.has(cp)) return String.fromCodePoint(cp);
  }
}

function number(rng) {
  switch (rng.int(0, 6)) {
    case 0: return String(rng.int(0, 9));
    case 1: return String(rng.int(0, 1e9));
    case 2: return (rng.next() * 1e6).toFixed(rng.int(0, 6));
    case 3: return "-" + rng.int(1, 99999) + "." + rng.int(0, 999);
    case 4: return rng.int(1, 999) + "," + String(rng.int(0, 999)).padStart(3, "0") + "," + String(rng.int(0, 999)).padStart(3, "0");
    case 5: return rng.int(1, 9) + "." + rng.int(0, 99999) + "e" + (rng.next() < 0.5 ? "-" : "+") + rng.int(1, 30);
    default: {
      let digits = "";
      const n = rng.int(1, 20);
      for (let i = 0; i < n; ++i) digits += rng.int(0, 9);
      return digits;
    }
  }
}

function prose(rng) {
  const n = rng.int(1, 14);
  const words = [];
  for (let i = 0; i < n; ++i) words.push(rng.pick(WORDS));
  let text = words.join(rng.next() < 0.9 ? " " : "  ");
  if (rng.next() < 0.7) text += rng.pick([".", "!", "?", ",", "...", ":", ";", " —", "…"]);
  if (rng.next() < 0.3) text = text[0].toUpperCase() + text.slice(1);
  return text;
}

function random_chars(rng) {
  let text = "";
  const n = rng.int(1, 24);
  for (let i = 0; i < n; ++i) text += random_char(rng);
  return text;
}

const PIECES = [
  [prose, 10], [(r) => r.pick(SNIPPETS), 4], [number, 4], [(r) => r.pick(SPACES), 6],
  [(r) => r.pick(EMOJI), 3], [(r) => r.pick(SCRIPTS), 4], [(r) => r.pick(COMBINING), 3],
  [(r) => r.pick(SPECIAL_TEXTS), 4], [random_chars, 4], [(r) => r.pick(WORDS), 4],
];
const TOTAL_WEIGHT = PIECES.reduce((sum, [, w]) => sum + w, 0);

function piece(rng) {
  let x = rng.next() * TOTAL_WEIGHT;
  for (const [make, weight] of PIECES) {
    x -= weight;
    if (x < 0) return make(rng);
  }
  return prose(rng);
}

function test_string(rng) {
  const n = rng.next() < 0.1 ? rng.int(10, 60) : rng.int(1, 6);
  let text = rng.next() < 0.15 ? rng.pick([" ", "  ", "\n", "\t", " \n"]) : "";
  for (let i = 0; i < n; ++i) {
    text += piece(rng);
    if (rng.next() < 0.5) text += rng.pick([" ", " ", " ", "\n", "", "\t", "  "]);
  }
  return text;
}

// Hand-picked edge cases first, then the generated ones.
const FIXED = [
  "", " ", "  ", "\n", "\t", "\r\n", "a", "Hello world", " Hello", "  leading spaces",
  "trailing spaces   ", "<s>", " <s> ", "Hello <s> world</s>", "<|im_start|>user\nhi<|im_end|>",
  "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are helpful.<|eot_id|>",
  "<think>\nreasoning\n</think>\n\nanswer", "e\u0301", "\u00e9", "👨‍👩‍👧‍👦", "12345678901234567890",
  "3.14159", "1,000,000", "don't DON'T Don'T", "x'sy's 'll 've", "\u3000\u3000全角", "\r\r\n\n",
  "a\u0301\u0302\u0303", "ab  \n  cd", "   \n\n   x", "\u2028\u2029", "\u180E\u200B",
];

function main() {
  const args = parse_args(process.argv);
  fs.mkdirSync(args.out, { recursive: true });
  const rng = make_rng(args.seed);
  const texts = [...FIXED];
  while (texts.length < args.count) texts.push(test_string(rng));

  for (const name of TOKENIZERS) {
    const dir = path.join(here, "node_modules", "@lenml", `tokenizer-${name}`, "models");
    const tokenizerJSON = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
    const tokenizerConfig = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8"));
    const tokenizer = TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig });
    const plain = TokenizerLoader.fromPreTrained({
      tokenizerJSON: { ...tokenizerJSON, added_tokens: tokenizerJSON.added_tokens.filter((t) => !t.special) },
      tokenizerConfig,
    });

    const lines = texts.map((text) =>
      JSON.stringify({
        text,
        ids: tokenizer.encode(text, { add_special_tokens: true }),
        ids_plain: plain.encode(text, { add_special_tokens: false }),
      }));
    const file = path.join(args.out, `${name}.jsonl`);
    fs.writeFileSync(file, lines.join("\n") + "\n");
    console.log(`${file}: ${lines.length} strings`);
  }
}

main();
