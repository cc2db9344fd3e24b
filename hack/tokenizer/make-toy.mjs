// Writes the two small tokenizer.json files used by the unit tests:
//   pkg/tokenizer/testdata/toy_bytelevel.json      byte-level BPE (Llama-3 style)
//   pkg/tokenizer/testdata/toy_sentencepiece.json  SentencePiece-style BPE with
//                                                  byte fallback and Metaspace
// The merges are learnt by a tiny BPE trainer on a fixed text, so the files
// are reproducible: node make-toy.mjs
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const testdata = path.join(here, "..", "..", "pkg", "tokenizer", "testdata");

const sample = `The quick brown fox jumps over the lazy dog. Hello world, hello there!
I'm sure they're here and we'll see what's going on in the world today.
function hello() { return "world"; } for (let i = 0; i < 10; i++) { print(i); }
Numbers like 123 and 4567 appear; so do tokens, tokenizers and tokenization.
the the the then them there these those this that what when where which`;

function train(words, vocab, nMerges) {
  // words: array of symbol arrays
  const merges = [];
  for (let m = 0; m < nMerges; m++) {
    const counts = new Map();
    for (const w of words) for (let i = 0; i + 1 < w.length; i++) {
      const k = w[i] + "\u0000" + w[i + 1];
      counts.set(k, (counts.get(k) || 0) + 1);
    }
    let best = null, bestN = 1;
    for (const [k, n] of [...counts].sort()) if (n > bestN) { best = k; bestN = n; }
    if (!best) break;
    const [a, b] = best.split("\u0000");
    merges.push([a, b]);
    if (!(a + b in vocab)) vocab[a + b] = Object.keys(vocab).length;
    for (const w of words) for (let i = 0; i + 1 < w.length; i++) {
      if (w[i] === a && w[i + 1] === b) { w.splice(i, 2, a + b); }
    }
  }
  return merges;
}

// byte-level
const bytesToUnicode = (() => {
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) if (!bs.includes(b)) { bs.push(b); cs.push(256 + n++); }
  const m = {};
  bs.forEach((b, i) => (m[b] = String.fromCharCode(cs[i])));
  return m;
})();
{
  const vocab = {};
  for (let b = 0; b < 256; b++) vocab[bytesToUnicode[b]] = b;
  const enc = new TextEncoder();
  const words = sample.match(/'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+/gu)
    .map((w) => Array.from(enc.encode(w), (b) => bytesToUnicode[b]));
  const merges = train(words, vocab, 120);
  const n = Object.keys(vocab).length;
  const tok = {
    version: "1.0", truncation: null, padding: null,
    added_tokens: [
      { id: n, content: "<|bos|>", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
      { id: n + 1, content: "<|eot|>", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
      { id: n + 2, content: "<tool>", single_word: false, lstrip: true, rstrip: true, normalized: true, special: false },
      { id: n + 3, content: "café", single_word: false, lstrip: false, rstrip: false, normalized: true, special: false },
    ],
    normalizer: { type: "NFC" },
    pre_tokenizer: { type: "Sequence", pretokenizers: [
      { type: "Split", pattern: { Regex: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, behavior: "Isolated", invert: false },
      { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false },
    ] },
    post_processor: { type: "Sequence", processors: [
      { type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: true },
      { type: "TemplateProcessing", single: [{ SpecialToken: { id: "<|bos|>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
        pair: [{ SpecialToken: { id: "<|bos|>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "<|bos|>", type_id: 1 } }, { Sequence: { id: "B", type_id: 1 } }],
        special_tokens: { "<|bos|>": { id: "<|bos|>", ids: [n], tokens: ["<|bos|>"] } } },
    ] },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: true, vocab, merges },
  };
  fs.writeFileSync(path.join(testdata, "toy_bytelevel.json"), JSON.stringify(tok, null, 1) + "\n");
}

// SentencePiece-style
{
  const vocab = { "<unk>": 0, "<s>": 1, "</s>": 2 };
  for (let b = 0; b < 256; b++) vocab[`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`] = Object.keys(vocab).length;
  const chars = [...new Set(Array.from(sample.replace(/\s+/g, " ").replaceAll(" ", "\u2581")))].sort();
  for (const c of ["\u2581", ...chars]) if (!(c in vocab)) vocab[c] = Object.keys(vocab).length;
  const words = sample.split(/\s+/).map((w) => Array.from("\u2581" + w));
  const merges = train(words, vocab, 150).map(([a, b]) => `${a} ${b}`);
  const tok = {
    version: "1.0", truncation: null, padding: null,
    added_tokens: [
      { id: 0, content: "<unk>", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
      { id: 1, content: "<s>", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
      { id: 2, content: "</s>", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
    ],
    normalizer: null,
    pre_tokenizer: { type: "Metaspace", replacement: "\u2581", prepend_scheme: "first", split: false },
    post_processor: { type: "TemplateProcessing",
      single: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
      pair: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "<s>", type_id: 1 } }, { Sequence: { id: "B", type_id: 1 } }],
      special_tokens: { "<s>": { id: "<s>", ids: [1], tokens: ["<s>"] } } },
    decoder: { type: "Sequence", decoders: [
      { type: "Replace", pattern: { String: "\u2581" }, content: " " },
      { type: "ByteFallback" }, { type: "Fuse" }, { type: "Strip", content: " ", start: 1, stop: 0 },
    ] },
    model: { type: "BPE", dropout: null, unk_token: "<unk>", continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: true, byte_fallback: true, ignore_merges: false, vocab, merges },
  };
  fs.writeFileSync(path.join(testdata, "toy_sentencepiece.json"), JSON.stringify(tok, null, 1) + "\n");
}
