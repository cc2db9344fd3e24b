// Measures the throughput (MB/s of UTF-8 text) of the reference
// implementation @huggingface/tokenizers on a corpus written by
// bench-corpus.mjs. Usage: node bench.mjs tokenizer.json corpus.txt
// Prints one JSON line: {"mb_per_s": ..., "tokens": ..., "bytes": ...}.
import fs from "node:fs";
import { loadTokenizer, encode } from "./ref.mjs";

const [file, corpusFile, roundsArg] = process.argv.slice(2);
const { tok } = await loadTokenizer(file);
const docs = fs.readFileSync(corpusFile, "utf8").split("\n\f\n");
const bytes = docs.reduce((n, d) => n + Buffer.byteLength(d), 0);
let tokens = 0;
for (const d of docs.slice(0, 50)) encode(tok, d, false); // warm up the JIT
const rounds = Number(roundsArg || 2);
let best = Infinity;
for (let r = 0; r < rounds; r++) {
  const t0 = process.hrtime.bigint();
  tokens = 0;
  for (const d of docs) tokens += encode(tok, d, false).length;
  const dt = Number(process.hrtime.bigint() - t0) / 1e9;
  best = Math.min(best, dt);
}
console.log(JSON.stringify({ mb_per_s: bytes / 1e6 / best, tokens, bytes, seconds: best }));
