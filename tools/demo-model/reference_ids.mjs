// Token ids from @lenml/tokenizers for check_tokenizer.py: reads JSON lines
// {"text": ...} on standard input, writes {"ids": [...]} lines, each encoded
// with add_special_tokens (the <|endoftext|> the post-processor adds first) and
// special-token text recognised, as tokenize_samples.mjs encodes training data.
//
// Usage: node reference_ids.mjs --tokenizer DIR < texts.jsonl > ids.jsonl
import readline from "node:readline";
import { load_tokenizer } from "./tokenize_samples.mjs";

const at = process.argv.indexOf("--tokenizer");
if (at < 0 || !process.argv[at + 1]) throw new Error("usage: node reference_ids.mjs --tokenizer DIR");
const { tokenizer } = load_tokenizer(process.argv[at + 1]);
const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line) continue;
  const ids = tokenizer.encode(JSON.parse(line).text, { add_special_tokens: true });
  process.stdout.write(JSON.stringify({ ids }) + "\n");
}
