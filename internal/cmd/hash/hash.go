// Package hash implements `kubectl dynamo hash`: Dynamo's KV block hashes for a
// token sequence, for comparing with engine KV events and router logs.
package hash

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ai-dynamo/kubectl-dynamo/internal/cmdutil"
	"github.com/ai-dynamo/kubectl-dynamo/internal/iostreams"
	"github.com/ai-dynamo/kubectl-dynamo/internal/printers"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/behavior"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/routecore"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/tokenizer"
)

// DefaultBlockSize is the KV block size used when --block-size is not given; it is
// the vLLM default. Use the deployment's kv_cache_block_size for real comparisons.
const DefaultBlockSize = 16

// Options are the inputs of the hash command.
type Options struct {
	IO *iostreams.IOStreams

	Tokens           string
	TokenFile        string
	Prompt           string
	PromptFile       string
	Tokenizer        string
	AddSpecialTokens bool
	BlockSize        int
	LoraName         string
	CacheNamespace   string
	Eagle            bool
	Mm               []string
	MmFile           string
	DynamoVersion    string
	Output           cmdutil.OutputFlags

	// Getenv reads the environment (Hugging Face cache location); tests replace it.
	Getenv func(string) string

	// Resolved by Complete.
	tokens          []uint32
	source          string
	tokenizerSource string
	mm              routecore.Multimodal
	scheme          routecore.MmScheme
	// routing are the tokens hashed (the pad-value routing tokens or tokens).
	routing []uint32
}

// NewCmdHash builds the command. runF, when set, replaces the run step (tests).
func NewCmdHash(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: f.IOStreams, BlockSize: DefaultBlockSize, Getenv: os.Getenv, AddSpecialTokens: true}
	cmd := &cobra.Command{
		Use:   "hash (--tokens IDS | --token-file FILE | --tokenizer TOK (--prompt TEXT | --prompt-file FILE)) [--block-size N] [--mm HASH@START:END]...",
		Short: "Compute Dynamo's KV block hashes for a token sequence",
		Long: `Compute the block hashes Dynamo's KV router uses for a sequence of token ids.

Each full block of --block-size tokens gets a local hash (XXH3-64 of the token ids
as little-endian u32, seed 1337, salted by --lora-name and --cache-namespace) and a
sequence hash chaining it to every block before it. A trailing partial block is not
hashed, exactly as in the router. Compare the local hashes with the tokens_hash
values of your engine's KV events.

A multimodal request (images, video) names each object by its u64 mm_hash and
the tokens of its placeholder: --mm HASH@START:END (END exclusive, repeatable),
or --mm-file with upstream's JSON. Since Dynamo 1.3 (#10328) the frontend fills
each placeholder with the object's pad value (1000000 + the low 30 bits of the
mm_hash) and pads the routing tokens with zeros to a whole block, which is
hashed too. Before (--dynamo-version 1.2 or older), and for per-block
--mm-file input (block_mm_infos) in any release, a block holding part of a
placeholder hashes its tokens followed by the mm_hash of every object in it.
Either way blocks with different images hash differently.

A prompt can be tokenized offline with --tokenizer, which takes a tokenizer.json
path or a Hugging Face model id found in the local Hugging Face cache (nothing is
downloaded). The ids are printed with the hashes ("tokens" in JSON).

Hashes are printed as unsigned 64-bit decimals; in JSON and YAML they are strings
so that no consumer rounds them through floating point.`,
		Example: `  # Hash 12 tokens in blocks of 4
  kubectl dynamo hash --tokens 1,2,3,4,5,6,7,8,9,10,11,12 --block-size 4

  # Token ids from a file (JSON array, or ids separated by commas or whitespace)
  kubectl dynamo hash --token-file prompt-ids.json --block-size 16 -o json

  # As a LoRA adapter's request would be hashed
  kubectl dynamo hash --token-file ids.txt --lora-name my-adapter

  # Tokenize a prompt offline with the model's tokenizer.json, then hash it
  kubectl dynamo hash --tokenizer ./tokenizer.json --prompt "Hello, world" --block-size 4 -o wide
  kubectl dynamo hash --tokenizer Qwen/Qwen3-0.6B --prompt-file prompt.txt -o json

  # An image whose placeholder is tokens 4 to 11 (mm_hash 42)
  kubectl dynamo hash --tokens 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 --block-size 4 --mm 42@4:12

  # The same image as Dynamo 1.2 hashed it (mm_hash appended to the block bytes)
  kubectl dynamo hash --tokens 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 --block-size 4 --mm 42@4:12 --dynamo-version 1.2.0

  # The multimodal objects as upstream's JSON (RequestExtraInfo or block_mm_infos)
  kubectl dynamo hash --token-file ids.json --mm-file mm.json -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Complete(cmd); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return o.Run()
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Tokens, "tokens", "", "Token ids separated by commas or spaces, e.g. 1,2,3")
	fl.StringVar(&o.TokenFile, "token-file", "", "File of token ids (JSON array or separated by commas/whitespace); - for stdin")
	fl.StringVar(&o.Prompt, "prompt", "", "Prompt text to tokenize with --tokenizer")
	fl.StringVar(&o.PromptFile, "prompt-file", "", "File holding the prompt text to tokenize with --tokenizer; - for stdin")
	fl.StringVar(&o.Tokenizer, "tokenizer", "", "tokenizer.json path, or a Hugging Face model id (org/name[@revision]) in the local Hugging Face cache")
	fl.BoolVar(&o.AddSpecialTokens, "add-special-tokens", o.AddSpecialTokens, cmdutil.AddSpecialTokensHelp)
	fl.IntVar(&o.BlockSize, "block-size", o.BlockSize, "KV cache block size in tokens (the deployment's kv_cache_block_size)")
	fl.StringVar(&o.LoraName, "lora-name", "", "LoRA adapter name the request targets (salts every block hash)")
	fl.StringVar(&o.CacheNamespace, "cache-namespace", "", "Request cache namespace / salt (salts every block hash)")
	fl.BoolVar(&o.Eagle, "eagle", false, "Hash eagle windows of block-size+1 tokens at stride block-size (workers with enable_eagle)")
	fl.StringArrayVar(&o.Mm, "mm", nil, cmdutil.MultimodalHelp)
	fl.StringVar(&o.MmFile, "mm-file", "", cmdutil.MultimodalFileHelp)
	fl.StringVar(&o.DynamoVersion, "dynamo-version", "", "The Dynamo release to hash multimodal objects as: a version (e.g. 1.2.0) or a profile (latest, legacy-v1.2, legacy-v1.1, legacy-tree-size); default the newest")
	cmdutil.AddOutputFlags(cmd, &o.Output)
	return cmd
}

// Complete reads the token input, tokenizing a prompt when one is given.
func (o *Options) Complete(cmd *cobra.Command) error {
	var given []string
	for _, name := range []string{"tokens", "token-file", "prompt", "prompt-file"} {
		if cmd.Flags().Changed(name) {
			given = append(given, "--"+name)
		}
	}
	switch {
	case len(given) == 0:
		return cmdutil.FlagErrorf("no input given: use --tokens 1,2,3, --token-file FILE, or --tokenizer TOK with --prompt TEXT or --prompt-file FILE")
	case len(given) > 1:
		return cmdutil.FlagErrorf("%s cannot be used together: give the input one way", strings.Join(given, " and "))
	}
	if o.MmFile == "-" && (o.TokenFile == "-" || o.PromptFile == "-") {
		return cmdutil.FlagErrorf("--mm-file - and %s - cannot both read standard input", given[0])
	}
	mm, err := cmdutil.ReadMultimodal(o.IO.In, o.Mm, o.MmFile)
	if err != nil {
		return err
	}
	o.mm = mm
	if err := cmdutil.ValidateDynamoVersion(o.DynamoVersion); err != nil {
		return err
	}
	rel, _ := behavior.ParseRelease(o.DynamoVersion)
	b, err := rel.Profile().Behavior()
	if err != nil {
		return cmdutil.FlagErrorf("--dynamo-version: %v", err)
	}
	o.scheme = b.MmScheme
	isPrompt := given[0] == "--prompt" || given[0] == "--prompt-file"
	if isPrompt && o.Tokenizer == "" {
		return cmdutil.FlagErrorf("%s needs --tokenizer (a tokenizer.json path or a cached Hugging Face model id)", given[0])
	}
	if !isPrompt && (o.Tokenizer != "" || cmd.Flags().Changed("add-special-tokens")) {
		return cmdutil.FlagErrorf("--tokenizer and --add-special-tokens apply to --prompt or --prompt-file, not to %s", given[0])
	}
	switch given[0] {
	case "--tokens":
		o.source = "--tokens"
		toks, err := cmdutil.ParseTokenList([]byte(o.Tokens), o.source)
		if err != nil {
			return &cmdutil.FlagError{Err: err}
		}
		o.tokens = toks
	case "--token-file":
		o.source = "--token-file " + o.TokenFile
		data, err := cmdutil.ReadInput(o.IO.In, o.TokenFile, "--token-file")
		if err != nil {
			return err
		}
		toks, err := cmdutil.ParseTokenList(data, o.source)
		if err != nil {
			return err
		}
		o.tokens = toks
	default:
		text := o.Prompt
		if given[0] == "--prompt-file" {
			data, err := cmdutil.ReadInput(o.IO.In, o.PromptFile, "--prompt-file")
			if err != nil {
				return err
			}
			text = string(data)
		}
		if text == "" {
			return cmdutil.FlagErrorf("%s is empty: there is nothing to tokenize", given[0])
		}
		return o.tokenize(text)
	}
	return nil
}

// tokenize loads the tokenizer and encodes the prompt.
func (o *Options) tokenize(text string) error {
	src, err := tokenizer.Resolve(o.Tokenizer, o.Getenv)
	if err != nil {
		return fmt.Errorf("--tokenizer: %w", err)
	}
	tok, err := tokenizer.Load(src.Path)
	if err != nil {
		return fmt.Errorf("--tokenizer: %w", err)
	}
	ids, err := tok.Encode(text, o.AddSpecialTokens)
	if err != nil {
		return fmt.Errorf("tokenize the prompt with %s: %w", src, err)
	}
	if len(ids) == 0 {
		return fmt.Errorf("the prompt tokenizes to no tokens with %s", src)
	}
	o.tokens = ids
	o.source = "prompt"
	o.tokenizerSource = src.String()
	return nil
}

// Validate checks the flags.
func (o *Options) Validate() error {
	if o.BlockSize < 1 {
		return cmdutil.FlagErrorf("--block-size must be a positive number of tokens, got %d", o.BlockSize)
	}
	if err := cmdutil.CheckMultimodalRange(o.mm, len(o.tokens)); err != nil {
		return err
	}
	return o.Output.Validate()
}

// Document is the JSON/YAML form of the result (kind BlockHashes).
type Document struct {
	APIVersion     string `json:"apiVersion"`
	Kind           string `json:"kind"`
	BlockSize      int    `json:"blockSize"`
	TokenCount     int    `json:"tokenCount"`
	LoraName       string `json:"loraName,omitempty"`
	CacheNamespace string `json:"cacheNamespace,omitempty"`
	Eagle          bool   `json:"eagle,omitempty"`
	Seed           string `json:"seed"`
	UnhashedTail   int    `json:"unhashedTailTokens"`
	// Tokenizer and Tokens are set when the ids came from tokenizing a prompt.
	Tokenizer string   `json:"tokenizer,omitempty"`
	Tokens    []uint32 `json:"tokens,omitempty"`
	// MultimodalObjects are the request's multimodal objects as given with
	// --mm or a request-level --mm-file.
	MultimodalObjects []cmdutil.MmObject `json:"multimodalObjects,omitempty"`
	// MmScheme is how the objects entered the hashes: "pad-value" (Dynamo
	// 1.3+, #10328) or "mm-hash" (mm_hashes appended: older releases, and
	// per-block input). Empty without objects.
	MmScheme routecore.MmScheme `json:"mmScheme,omitempty"`
	// RoutingTokens are, under the pad-value scheme, the tokens hashed: the
	// placeholders filled with pad values and zero-padded to a whole block
	// (upstream's routing_token_ids). Their count is the router's ISL.
	RoutingTokens []uint32 `json:"routingTokens,omitempty"`
	Blocks        []Block  `json:"blocks"`
}

// Block is one hashed block; hashes are decimal strings.
type Block struct {
	Index        int    `json:"index"`
	Start        int    `json:"start"`
	End          int    `json:"end"`
	LocalHash    string `json:"localHash"`
	SequenceHash string `json:"sequenceHash"`
	// MmHashes are the mm_hashes appended to the block's bytes, in order
	// (the mm-hash scheme).
	MmHashes []string `json:"mmHashes,omitempty"`
	// PadValues are the objects whose pad values the block holds, in order
	// (the pad-value scheme).
	PadValues []PadValue `json:"padValues,omitempty"`
	// ZeroPadded counts the zero tokens that pad the block to a whole block
	// (the pad-value scheme; the block is hashed with them).
	ZeroPadded int `json:"zeroPadded,omitempty"`
}

// PadValue is one object's token in a pad-value block; the hash is a
// decimal string.
type PadValue struct {
	PadValue uint32 `json:"padValue"`
	MmHash   string `json:"mmHash"`
}

// Compute hashes the tokens and builds the document.
func (o *Options) Compute() (Document, error) {
	mm, err := o.mm.Routing(o.tokens, o.BlockSize, o.scheme)
	if err != nil {
		return Document{}, err
	}
	blocks, err := routecore.ComputeBlocks(mm.Tokens, o.BlockSize, mm.HashOptions(routecore.HashOptions{
		LoraName: o.LoraName, CacheNamespace: o.CacheNamespace, Eagle: o.Eagle,
	}))
	if err != nil {
		return Document{}, err
	}
	o.routing = mm.Tokens
	doc := Document{
		APIVersion:     printers.APIVersion,
		Kind:           "BlockHashes",
		BlockSize:      o.BlockSize,
		TokenCount:     len(o.tokens),
		LoraName:       o.LoraName,
		CacheNamespace: o.CacheNamespace,
		Eagle:          o.Eagle,
		Seed:           strconv.FormatUint(routecore.SaltSeed(o.LoraName, o.CacheNamespace), 10),
		Blocks:         make([]Block, len(blocks)),

		MultimodalObjects: cmdutil.MmObjects(o.mm),
		MmScheme:          mm.Scheme,
	}
	if mm.Scheme == routecore.MmSchemePadValue {
		doc.RoutingTokens = mm.Tokens
	}
	if o.tokenizerSource != "" {
		doc.Tokenizer = o.tokenizerSource
		doc.Tokens = o.tokens
	}
	covered := 0
	for i, b := range blocks {
		doc.Blocks[i] = Block{
			Index: b.Index, Start: b.Start, End: b.End,
			LocalHash:    strconv.FormatUint(uint64(b.LocalHash), 10),
			SequenceHash: strconv.FormatUint(uint64(b.SequenceHash), 10),
		}
		appended, pads, zero := mm.BlockObjects(b)
		for _, h := range appended {
			doc.Blocks[i].MmHashes = append(doc.Blocks[i].MmHashes, strconv.FormatUint(h, 10))
		}
		for _, h := range pads {
			doc.Blocks[i].PadValues = append(doc.Blocks[i].PadValues, PadValue{PadValue: routecore.PadValueForMmHash(uint64(h)), MmHash: strconv.FormatUint(uint64(h), 10)})
		}
		doc.Blocks[i].ZeroPadded = zero
		covered = b.Index*o.BlockSize + o.BlockSize
	}
	// Tokens of the request (not the zero padding) that no block hashed.
	doc.UnhashedTail = max(0, len(o.tokens)-covered)
	if o.Eagle && len(blocks) > 0 {
		// The eagle window reads one token past the stride; only tokens never
		// read by any window are unhashed.
		doc.UnhashedTail = max(0, len(o.tokens)-blocks[len(blocks)-1].End)
	}
	return doc, nil
}

// Run hashes and prints.
func (o *Options) Run() error {
	doc, err := o.Compute()
	if err != nil {
		return err
	}
	if ok, err := o.Output.PrintStructured(o.IO.Out, doc); ok {
		return err
	}
	return o.printTable(doc)
}

func (o *Options) printTable(doc Document) error {
	cols := []printers.Column{
		{Header: "Block"}, {Header: "Tokens"}, {Header: "Local Hash"}, {Header: "Sequence Hash"},
		{Header: "Local Hash (hex)", Wide: true}, {Header: "Sequence Hash (hex)", Wide: true},
		{Header: "Token IDs", Wide: true},
	}
	withMm := !o.mm.IsZero()
	if withMm {
		// After the hashes, before the wide columns: the column says why a
		// block's hash differs from the text-only one.
		cols = slices.Insert(cols, 4, printers.Column{Header: "Multimodal"})
	}
	t := printers.Table{Columns: cols}
	for _, b := range doc.Blocks {
		l, _ := strconv.ParseUint(b.LocalHash, 10, 64)
		s, _ := strconv.ParseUint(b.SequenceHash, 10, 64)
		row := []string{strconv.Itoa(b.Index), fmt.Sprintf("%d-%d", b.Start, b.End-1), b.LocalHash, b.SequenceHash,
			fmt.Sprintf("%016x", l), fmt.Sprintf("%016x", s), joinIDs(o.routing[b.Start:b.End])}
		if withMm {
			row = slices.Insert(row, 4, mmCell(b))
		}
		t.AddRow(row...)
	}
	opts := printers.TableOptions{Wide: o.Output.Format == cmdutil.OutputWide, NoHeaders: o.Output.NoHeaders}
	if o.IO.ColorEnabled() {
		opts.HeaderStyle = printers.Bold
	}
	switch doc.MmScheme {
	case routecore.MmSchemePadValue:
		fmt.Fprintf(o.IO.ErrOut, "Multimodal: placeholders hashed as pad values (Dynamo 1.3+, #10328)")
		if n := len(doc.RoutingTokens) - doc.TokenCount; n > 0 {
			fmt.Fprintf(o.IO.ErrOut, "; the routing tokens are zero-padded by %d to %d, the ISL the router uses, and the padded block is hashed", n, len(doc.RoutingTokens))
		}
		fmt.Fprintln(o.IO.ErrOut, ".")
	case routecore.MmSchemeMmHash:
		fmt.Fprintln(o.IO.ErrOut, "Multimodal: mm_hashes appended to the bytes of the blocks holding them (block_mm_infos).")
	}
	if doc.Tokenizer != "" {
		fmt.Fprintf(o.IO.ErrOut, "Tokenized with %s: %d tokens (%s).\n", doc.Tokenizer, doc.TokenCount,
			map[bool]string{true: "special tokens added", false: "no special tokens added"}[o.AddSpecialTokens])
	}
	if len(doc.Blocks) > 0 {
		if err := t.Render(o.IO.Out, opts); err != nil {
			return err
		}
	}
	if len(doc.Blocks) == 0 {
		fmt.Fprintf(o.IO.ErrOut, "No full block: %d tokens is less than one block of %d tokens, and Dynamo hashes only full blocks.\n",
			doc.TokenCount, doc.BlockSize)
	} else if doc.UnhashedTail > 0 {
		if doc.UnhashedTail == 1 {
			fmt.Fprintf(o.IO.ErrOut, "Note: the last of the %d tokens does not fill a block and is not hashed (Dynamo ignores partial blocks).\n", doc.TokenCount)
		} else {
			fmt.Fprintf(o.IO.ErrOut, "Note: the last %d of %d tokens do not fill a block and are not hashed (Dynamo ignores partial blocks).\n",
				doc.UnhashedTail, doc.TokenCount)
		}
	}
	return nil
}

// mmCell is the table's multimodal column: the pad values a block holds and
// its zero padding (pad-value scheme; -o json names each pad value's
// mm_hash) or the mm_hashes appended to it (mm-hash scheme).
func mmCell(b Block) string {
	var parts []string
	if len(b.PadValues) > 0 {
		pads := make([]string, len(b.PadValues))
		for i, p := range b.PadValues {
			pads[i] = strconv.FormatUint(uint64(p.PadValue), 10)
		}
		parts = append(parts, "pad "+strings.Join(pads, " "))
	}
	if b.ZeroPadded > 0 {
		parts = append(parts, fmt.Sprintf("+%d zeros", b.ZeroPadded))
	}
	if len(b.MmHashes) > 0 {
		parts = append(parts, "mm "+strings.Join(b.MmHashes, " "))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// joinIDs renders token ids separated by spaces.
func joinIDs(ids []uint32) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatUint(uint64(id), 10))
	}
	return b.String()
}
