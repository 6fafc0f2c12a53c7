// Encodes shape_data.py's samples into the token stream train.py reads.
//
// Each sample is encoded as Strata encodes a prompt: special-token text
// (<|im_start|>, <|im_end|>) becomes the special token, and the tokenizer's
// post-processor puts <|endoftext|> first, so every sample starts with it and
// it also ends the sample before. The encoder is @lenml/tokenizers (a port of
// transformers.js), an implementation independent of Strata's;
// check_tokenizer.py verifies that the two agree.
//
// Output: OUT.bin, the samples' ids back to back as little-endian uint16, and
// OUT.json: {"n_tokens", "n_samples", "vocab_size", "special": {text: id}}.
//
// Usage: node tokenize_samples.mjs --tokenizer DIR --samples IN.jsonl --out OUT
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { TokenizerLoader } from "@lenml/tokenizers";

function parse_args(argv) {
  const args = { tokenizer: null, samples: null, out: null };
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!(key in args)) throw new Error(`unknown option ${argv[i]}`);
    args[key] = argv[i + 1];
  }
  if (!args.tokenizer || !args.samples || !args.out) {
    throw new Error("usage: node tokenize_samples.mjs --tokenizer DIR --samples IN.jsonl --out OUT");
  }
  return args;
}

export function load_tokenizer(dir) {
  const tokenizerJSON = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
  const tokenizerConfig = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8"));
  const tokenizer = TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig });
  const vocab_size = Object.keys(tokenizerJSON.model.vocab).length + tokenizerJSON.added_tokens.length;
  const special = Object.fromEntries(tokenizerJSON.added_tokens.map((t) => [t.content, t.id]));
  return { tokenizer, vocab_size, special };
}

async function main() {
  const args = parse_args(process.argv);
  const { tokenizer, vocab_size, special } = load_tokenizer(args.tokenizer);
  if (vocab_size > 65536) throw new Error(`vocabulary of ${vocab_size} does not fit uint16`);
  const chunks = [];
  let n_tokens = 0;
  let n_samples = 0;
  const lines = readline.createInterface({ input: fs.createReadStream(args.samples), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line) continue;
    const ids = tokenizer.encode(JSON.parse(line).text, { add_special_tokens: true });
    if (ids[0] !== special["<|endoftext|>"]) throw new Error("the post-processor did not add <|endoftext|>");
    chunks.push(Uint16Array.from(ids));
    n_tokens += ids.length;
    n_samples += 1;
  }
  const all = new Uint16Array(n_tokens);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.length;
  }
  // Uint16Array is host-endian; every platform node runs on here is little-endian.
  if (new Uint8Array(Uint16Array.of(1).buffer)[0] !== 1) throw new Error("big-endian host");
  fs.writeFileSync(`${args.out}.bin`, Buffer.from(all.buffer));
  const meta = { n_tokens, n_samples, vocab_size, special };
  fs.writeFileSync(`${args.out}.json`, JSON.stringify(meta, null, 1) + "\n");
  console.log(`${args.out}.bin: ${n_samples} samples, ${n_tokens} tokens`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
