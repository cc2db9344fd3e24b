// A long-lived reference tokenizer for the Go fuzz test. Usage:
//   node ref-server.mjs path/to/tokenizer.json
// Reads one JSON object per stdin line and answers one JSON line each:
//   {"text": "...", "special": true}   -> {"ids": [...]}
//   {"decode": [...], "skip": false}   -> {"text": "..."}
// Errors are answered as {"error": "..."}. Prints {"ready": true} first.
import readline from "node:readline";
import { loadTokenizer, encode, decode } from "./ref.mjs";

const { tok } = await loadTokenizer(process.argv[2]);
process.stdout.write(JSON.stringify({ ready: true }) + "\n");
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (line.trim() === "") continue;
  let out;
  try {
    const req = JSON.parse(line);
    if (req.decode) out = { text: decode(tok, req.decode, !!req.skip) };
    else out = { ids: encode(tok, req.text, !!req.special) };
  } catch (e) {
    out = { error: String(e && e.message ? e.message : e) };
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}
