package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"
)

// Tokenizer encodes text to token ids and decodes ids to text as described by
// a Hugging Face tokenizer.json. It is safe for concurrent use.
type Tokenizer struct {
	model      *bpeModel
	normalizer normalizer
	pre        []preTokenizer
	post       postProcessor
	dec        decoder

	added     []*addedToken
	addedByID map[uint32]*addedToken
	rawTrie   *tokenTrie
	normTrie  *tokenTrie

	pool sync.Pool
}

// state holds per-call scratch buffers.
type state struct {
	secs, subs []section
	in, a, b   []piece
	buf        [][2]int
}

// MaxFileBytes bounds a tokenizer.json file (the largest published ones are
// tens of MiB); a larger file is refused from its size, without being read.
const MaxFileBytes = 256 << 20

// Load reads and parses the tokenizer.json file at path, which must be a
// regular file of at most MaxFileBytes (a device such as /dev/zero, a FIFO or
// a huge file is refused before anything is read).
func Load(path string) (*Tokenizer, error) {
	data, err := readRegularFile(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer %s: %w", path, err)
	}
	return t, nil
}

// readRegularFile reads path if it is a regular file of at most limit bytes.
func readRegularFile(path string, limit int64) ([]byte, error) {
	// Stat before opening: opening a FIFO blocks until someone writes to it.
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file: pass a tokenizer.json file", path, fileKind(st.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file: pass a tokenizer.json file", path, fileKind(st.Mode()))
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s is larger than the %d MiB limit for a tokenizer.json (%d MiB)", path, limit>>20, st.Size()>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s grew past the %d MiB limit for a tokenizer.json while it was read", path, limit>>20)
	}
	return data, nil
}

// fileKind names what a non-regular file is, for errors.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0, m&os.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// Parse parses the contents of a tokenizer.json file. It returns an
// *UnsupportedError (possibly wrapped) when the file uses a component or
// option that this package does not implement.
func Parse(data []byte) (*Tokenizer, error) {
	top, err := parseObj(data, "")
	if err != nil {
		return nil, errors.New("tokenizer.json: not a JSON object; expected a Hugging Face tokenizer.json file")
	}
	top.path = ""
	if err := top.allow("tokenizer.json", "version", "truncation", "padding", "added_tokens",
		"normalizer", "pre_tokenizer", "post_processor", "decoder", "model"); err != nil {
		return nil, err
	}
	if top.has("truncation") {
		return nil, unsupported("truncation", "truncation settings (set \"truncation\" to null)")
	}
	if top.has("padding") {
		return nil, unsupported("padding", "padding settings (set \"padding\" to null)")
	}
	t := &Tokenizer{addedByID: map[uint32]*addedToken{}}
	t.pool.New = func() any { return new(state) }

	if !top.has("model") {
		return nil, invalid("model", "missing model")
	}
	mo, err := parseObj(top.m["model"], "model")
	if err != nil {
		return nil, err
	}
	mt, _ := mo.str("type", "")
	if mt == "" && !mo.has("merges") {
		return nil, invalid("model.type", "missing model type")
	}
	if mt != "" && mt != "BPE" {
		return nil, unsupported("model.type", "model type %q (only BPE is supported)", mt)
	}
	if t.model, err = parseBPE(mo); err != nil {
		return nil, err
	}

	if top.has("normalizer") {
		no, err := parseObj(top.m["normalizer"], "normalizer")
		if err != nil {
			return nil, err
		}
		if t.normalizer, err = parseNormalizer(no); err != nil {
			return nil, err
		}
	}
	if top.has("pre_tokenizer") {
		po, err := parseObj(top.m["pre_tokenizer"], "pre_tokenizer")
		if err != nil {
			return nil, err
		}
		p, err := parsePreTokenizer(po, true)
		if err != nil {
			return nil, err
		}
		t.pre = flattenPre(p, nil)
		t.setupByteLevelTail()
	}
	if top.has("post_processor") {
		po, err := parseObj(top.m["post_processor"], "post_processor")
		if err != nil {
			return nil, err
		}
		if t.post, err = parsePostProcessor(po); err != nil {
			return nil, err
		}
	} else {
		t.post = identityPost{}
	}
	if top.has("decoder") {
		do, err := parseObj(top.m["decoder"], "decoder")
		if err != nil {
			return nil, err
		}
		if t.dec, err = parseDecoder(do); err != nil {
			return nil, err
		}
	}
	if err := t.parseAdded(top); err != nil {
		return nil, err
	}
	return t, nil
}

func flattenPre(p preTokenizer, out []preTokenizer) []preTokenizer {
	if sq, ok := p.(*sequencePre); ok {
		for _, st := range sq.steps {
			out = flattenPre(st, out)
		}
		return out
	}
	return append(out, p)
}

// setupByteLevelTail lets the model map bytes itself when ByteLevel is the
// last pre-tokenizer, and drops that step when it has nothing else to do.
func (t *Tokenizer) setupByteLevelTail() {
	if len(t.pre) == 0 {
		return
	}
	bl, ok := t.pre[len(t.pre)-1].(*byteLevelPre)
	if !ok || !bl.tail {
		return
	}
	if !t.model.enableRaw() {
		bl.tail = false
		return
	}
	if !bl.addPrefixSpace && !bl.useRegex {
		t.pre = t.pre[:len(t.pre)-1]
	}
}

func (t *Tokenizer) parseAdded(top *obj) error {
	l, err := top.list("added_tokens")
	if err != nil {
		return err
	}
	t.rawTrie, t.normTrie = newTokenTrie(), newTokenTrie()
	for i, raw := range l {
		path := index("added_tokens", i)
		var at addedToken
		if err := json.Unmarshal(raw, &at); err != nil {
			return invalid(path, "expected an added token object with id and content")
		}
		if at.Content == "" {
			return invalid(path+".content", "empty added token")
		}
		if at.ID >= maxVocabID {
			return invalid(path+".id", "id %d is too large", at.ID)
		}
		normalized := !at.Special
		if at.Normalized != nil {
			normalized = *at.Normalized
		}
		tok := &at
		t.added = append(t.added, tok)
		t.addedByID[at.ID] = tok
		if normalized {
			pat := at.Content
			if t.normalizer != nil {
				pat = t.normalizer.normalize(pat)
			}
			t.normTrie.add(pat, tok)
		} else {
			t.rawTrie.add(at.Content, tok)
		}
	}
	if len(t.rawTrie.toks) == 0 {
		t.rawTrie = nil
	}
	if len(t.normTrie.toks) == 0 {
		t.normTrie = nil
	}
	return nil
}

// ErrInvalidUTF8 is returned by Encode for text that is not valid UTF-8.
var ErrInvalidUTF8 = errors.New("tokenizer: text is not valid UTF-8; convert it to UTF-8 before tokenizing")

// Encode returns the token ids of text. With addSpecialTokens the
// post-processor adds its special tokens (for example Llama's BOS), as
// transformers' add_special_tokens=True does. Special tokens written in the
// text itself are always recognised.
func (t *Tokenizer) Encode(text string, addSpecialTokens bool) (_ []uint32, err error) {
	if !utf8.ValidString(text) {
		return nil, ErrInvalidUTF8
	}
	defer recoverRegexTimeout(&err)
	st := t.pool.Get().(*state)
	ids := make([]uint32, 0, len(text)/3+4)
	ids = t.encodeText(text, ids, st)
	t.pool.Put(st)
	return t.post.process(ids, addSpecialTokens), nil
}

// recoverRegexTimeout turns the panic of a regex that ran out of time
// (regexMatcher) into *err; any other panic goes on.
func recoverRegexTimeout(err *error) {
	if r := recover(); r != nil {
		te, ok := r.(*RegexTimeoutError)
		if !ok {
			panic(r)
		}
		*err = te
	}
}

func (t *Tokenizer) encodeText(text string, ids []uint32, st *state) []uint32 {
	if t.rawTrie == nil {
		return t.encodeSection(text, true, ids, st)
	}
	st.secs = t.rawTrie.split(text, st.secs[:0])
	secs := st.secs
	for k := range secs {
		sec := secs[k]
		if sec.id >= 0 {
			ids = append(ids, uint32(sec.id))
			continue
		}
		ids = t.encodeSection(text[sec.start:sec.end], sec.start == 0, ids, st)
	}
	return ids
}

// encodeSection normalizes one text section, splits it at normalized added
// tokens, pre-tokenizes and runs the model.
func (t *Tokenizer) encodeSection(s string, first bool, ids []uint32, st *state) []uint32 {
	if t.normalizer != nil {
		s = t.normalizer.normalize(s)
	}
	if s == "" {
		return ids
	}
	if t.normTrie == nil {
		return t.encodePiece(s, first, ids, st)
	}
	st.subs = t.normTrie.split(s, st.subs[:0])
	for _, sub := range st.subs {
		if sub.id >= 0 {
			ids = append(ids, uint32(sub.id))
			continue
		}
		ids = t.encodePiece(s[sub.start:sub.end], first && sub.start == 0, ids, st)
	}
	return ids
}

func (t *Tokenizer) encodePiece(s string, first bool, ids []uint32, st *state) []uint32 {
	st.in = append(st.in[:0], piece{s: s, first: first})
	cur := st.in
	for k, p := range t.pre {
		if k%2 == 0 {
			st.a = p.split(cur, st.a[:0], &st.buf)
			cur = st.a
		} else {
			st.b = p.split(cur, st.b[:0], &st.buf)
			cur = st.b
		}
	}
	for _, p := range cur {
		ids = t.model.encodeWord(p.s, ids)
	}
	return ids
}

// Decode returns the text of ids. With skipSpecial, added tokens marked
// special are left out. Unlike transformers, no clean-up of tokenization
// spaces is applied (as in the Rust tokenizers crate).
func (t *Tokenizer) Decode(ids []uint32, skipSpecial bool) (_ string, err error) {
	defer recoverRegexTimeout(&err)
	tokens := make([]string, 0, len(ids))
	for _, id := range ids {
		if at, ok := t.addedByID[id]; ok {
			if skipSpecial && at.Special {
				continue
			}
			tokens = append(tokens, at.Content)
			continue
		}
		tok, ok := t.model.tokenOf(id)
		if !ok {
			return "", fmt.Errorf("tokenizer: decode: token id %d is not in the vocabulary (size %d)", id, t.VocabSize())
		}
		tokens = append(tokens, tok)
	}
	if t.dec == nil {
		return strings.Join(tokens, " "), nil
	}
	return strings.Join(t.dec.decodeChain(tokens), ""), nil
}

// VocabSize returns the number of ids: the model vocabulary and the added
// tokens, as one plus the largest id.
func (t *Tokenizer) VocabSize() int {
	n := len(t.model.idToToken)
	for id := range t.addedByID {
		if int(id) >= n {
			n = int(id) + 1
		}
	}
	return n
}

// TokenToID returns the id of a token string (an added token or a model
// vocabulary entry, in its byte-level or ▁ form).
func (t *Tokenizer) TokenToID(token string) (uint32, bool) {
	for _, at := range t.added {
		if at.Content == token {
			return at.ID, true
		}
	}
	id, ok := t.model.vocab[token]
	return id, ok
}

// IDToToken returns the token string of id.
func (t *Tokenizer) IDToToken(id uint32) (string, bool) {
	if at, ok := t.addedByID[id]; ok {
		return at.Content, true
	}
	return t.model.tokenOf(id)
}

// IsSpecial reports whether id is an added token marked special.
func (t *Tokenizer) IsSpecial(id uint32) bool {
	at, ok := t.addedByID[id]
	return ok && at.Special
}
