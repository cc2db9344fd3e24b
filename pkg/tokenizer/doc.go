// Package tokenizer is a pure-Go implementation of the Hugging Face
// tokenizer.json format for the BPE tokenizers that Dynamo deployments use:
// byte-level BPE (GPT-2, Llama-3/3.x, Qwen2/2.5/3, DeepSeek-V3, gpt-oss) and
// SentencePiece-style BPE with byte fallback (Llama-2, Mistral).
//
// The Dynamo KV router hashes token ids, so a single wrong id changes every
// block hash after it. This package therefore aims at exact agreement with the
// reference implementations (the Rust `tokenizers` crate that Dynamo links, and
// the JavaScript port `@huggingface/tokenizers` used to produce the golden
// files in testdata/golden). A tokenizer.json that uses a component or option
// this package does not implement is refused by [Parse] with an error that
// names the component and its JSON path; it never tokenizes differently in
// silence.
//
// Supported components:
//
//   - model: BPE with both merge encodings ("a b" strings and ["a","b"]
//     pairs), ignore_merges, byte_fallback, unk_token, fuse_unk,
//     continuing_subword_prefix and end_of_word_suffix.
//   - added_tokens: special and normal tokens with normalized, lstrip, rstrip
//     and single_word, matched leftmost-longest.
//   - normalizer: NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip,
//     Prepend, Replace, Sequence.
//   - pre_tokenizer: Split (the file's own regex, including lookarounds, with
//     every split behaviour and invert), ByteLevel (add_prefix_space,
//     use_regex), Metaspace (replacement, prepend_scheme, split), Digits,
//     Whitespace, WhitespaceSplit, Punctuation, Sequence.
//   - post_processor: ByteLevel, TemplateProcessing, BertProcessing,
//     RobertaProcessing, Sequence.
//   - decoder: ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace,
//     Sequence.
//
// Split regexes of the GPT-2, Llama-3 and Qwen2/3 families are recognised by
// their exact pattern string and run by hand-written scanners; any other
// pattern is compiled once, at load time, with github.com/dlclark/regexp2
// (a backtracking engine with lookaround support, like Oniguruma).
//
// A [Tokenizer] is safe for concurrent use. It keeps a bounded cache of
// pre-token encodings.
package tokenizer
