// Shared helpers: load the reference implementation @huggingface/tokenizers
// from the cache populated by fetch.sh, and build tokenizers from files.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

export const cacheDir =
  path.join(process.env.KDYN_CACHE || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "kubectl-dynamo"), "tokenizers");

export async function loadReference() {
  const entry = path.join(cacheDir, "node_modules", "@huggingface", "tokenizers", "dist", "tokenizers.mjs");
  if (!fs.existsSync(entry)) {
    throw new Error(`@huggingface/tokenizers is not in ${cacheDir}; run hack/tokenizer/fetch.sh first`);
  }
  return import(pathToFileURL(entry).href);
}

export async function loadTokenizer(file) {
  const { Tokenizer } = await loadReference();
  const json = JSON.parse(fs.readFileSync(file, "utf8"));
  return { tok: new Tokenizer(json, {}), json };
}

export function encode(tok, text, addSpecial) {
  return tok.encode(text, { add_special_tokens: addSpecial }).ids;
}

export function decode(tok, ids, skipSpecial) {
  if (ids.length === 0) return "";
  return tok.decode(ids, { skip_special_tokens: skipSpecial, clean_up_tokenization_spaces: false });
}
