package tokenizer

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// decoder is one step of the decoder chain (Rust's Decoder::decode_chain).
type decoder interface {
	decodeChain(tokens []string) []string
}

type byteLevelDec struct{}

func (byteLevelDec) decodeChain(tokens []string) []string {
	var raw []byte
	for _, t := range tokens {
		if b, ok := byteLevelDecode(t); ok {
			raw = append(raw, b...)
		} else {
			raw = append(raw, t...)
		}
	}
	return []string{lossyUTF8(raw)}
}

type metaspaceDec struct {
	replacement rune
	prepend     bool
}

func (m metaspaceDec) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		out[i] = strings.Map(func(r rune) rune {
			if r != m.replacement {
				return r
			}
			if i == 0 && m.prepend {
				return -1
			}
			return ' '
		}, t)
	}
	return out
}

type byteFallbackDec struct{}

func (byteFallbackDec) decodeChain(tokens []string) []string {
	out := make([]string, 0, len(tokens))
	var pending []byte
	flush := func() {
		if len(pending) == 0 {
			return
		}
		if utf8.Valid(pending) {
			out = append(out, string(pending))
		} else {
			for range pending {
				out = append(out, "\uFFFD")
			}
		}
		pending = pending[:0]
	}
	for _, t := range tokens {
		if len(t) == 6 && strings.HasPrefix(t, "<0x") && t[5] == '>' {
			if b, err := strconv.ParseUint(t[3:5], 16, 8); err == nil {
				pending = append(pending, byte(b))
				continue
			}
		}
		flush()
		out = append(out, t)
	}
	flush()
	return out
}

type fuseDec struct{}

func (fuseDec) decodeChain(tokens []string) []string {
	return []string{strings.Join(tokens, "")}
}

type stripDec struct {
	content     rune
	start, stop int
}

func (s stripDec) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for k, t := range tokens {
		chars := []rune(t)
		startCut := 0
		for i := 0; i < s.start && i < len(chars); i++ {
			if chars[i] != s.content {
				break
			}
			startCut = i + 1
		}
		stopCut := len(chars)
		for i := 0; i < s.stop && i < len(chars); i++ {
			idx := len(chars) - i - 1
			if chars[idx] != s.content {
				break
			}
			stopCut = idx
		}
		if startCut >= stopCut {
			out[k] = ""
		} else {
			out[k] = string(chars[startCut:stopCut])
		}
	}
	return out
}

type replaceDec struct {
	m       matcher
	content string
}

func (r replaceDec) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		out[i] = replaceAll(r.m, t, r.content)
	}
	return out
}

type bpeDec struct{ suffix string }

func (b bpeDec) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		rep := " "
		if i == len(tokens)-1 {
			rep = ""
		}
		if b.suffix == "" {
			out[i] = t
		} else {
			out[i] = strings.ReplaceAll(t, b.suffix, rep)
		}
	}
	return out
}

type sequenceDec []decoder

func (sq sequenceDec) decodeChain(tokens []string) []string {
	for _, d := range sq {
		tokens = d.decodeChain(tokens)
	}
	return tokens
}

func parseDecoder(o *obj) (decoder, error) {
	t, err := o.typ()
	if err != nil {
		return nil, err
	}
	switch t {
	case "ByteLevel":
		if err := o.allow("ByteLevel decoder", "add_prefix_space", "trim_offsets", "use_regex"); err != nil {
			return nil, err
		}
		return byteLevelDec{}, nil
	case "Metaspace":
		if err := o.allow("Metaspace decoder", "replacement", "prepend_scheme", "split", "add_prefix_space", "str_rep"); err != nil {
			return nil, err
		}
		rep, err := o.str("replacement", "▁")
		if err != nil {
			return nil, err
		}
		if utf8.RuneCountInString(rep) != 1 {
			return nil, invalid(o.sub("replacement"), "expected a single character")
		}
		r, _ := utf8.DecodeRuneInString(rep)
		scheme, err := o.str("prepend_scheme", "always")
		if err != nil {
			return nil, err
		}
		if err := oneOf(o.sub("prepend_scheme"), "prepend_scheme", scheme, "always", "first", "never"); err != nil {
			return nil, err
		}
		aps, err := o.boolean("add_prefix_space", true)
		if err != nil {
			return nil, err
		}
		return metaspaceDec{replacement: r, prepend: scheme != "never" && aps}, nil
	case "ByteFallback", "Fuse":
		if err := o.allow(t + " decoder"); err != nil {
			return nil, err
		}
		if t == "Fuse" {
			return fuseDec{}, nil
		}
		return byteFallbackDec{}, nil
	case "Strip":
		if err := o.allow("Strip decoder", "content", "start", "stop"); err != nil {
			return nil, err
		}
		c, err := o.str("content", " ")
		if err != nil {
			return nil, err
		}
		if utf8.RuneCountInString(c) != 1 {
			return nil, invalid(o.sub("content"), "expected a single character")
		}
		r, _ := utf8.DecodeRuneInString(c)
		start, err := o.integer("start", 0)
		if err != nil {
			return nil, err
		}
		stop, err := o.integer("stop", 0)
		if err != nil {
			return nil, err
		}
		return stripDec{content: r, start: start, stop: stop}, nil
	case "Replace":
		if err := o.allow("Replace decoder", "pattern", "content"); err != nil {
			return nil, err
		}
		p, err := o.pattern("pattern")
		if err != nil {
			return nil, err
		}
		m, err := compilePattern(p, o.sub("pattern"))
		if err != nil {
			return nil, err
		}
		c, err := o.str("content", "")
		if err != nil {
			return nil, err
		}
		return replaceDec{m: m, content: c}, nil
	case "BPEDecoder":
		if err := o.allow("BPEDecoder decoder", "suffix"); err != nil {
			return nil, err
		}
		s, err := o.str("suffix", "</w>")
		if err != nil {
			return nil, err
		}
		return bpeDec{suffix: s}, nil
	case "Sequence":
		steps, err := parseSequence(o, "decoder", "decoders", func(so *obj, _ bool) (decoder, error) { return parseDecoder(so) })
		return sequenceDec(steps), err
	}
	return nil, unsupported(o.sub("type"), "decoder type %q (supported: ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace, BPEDecoder, Sequence)", t)
}

// postProcessor adds special tokens around the ids of one sequence.
type postProcessor interface {
	process(ids []uint32, addSpecial bool) []uint32
}

type identityPost struct{}

func (identityPost) process(ids []uint32, _ bool) []uint32 { return ids }

// templatePost is TemplateProcessing restricted to the single-sequence
// template.
type templatePost struct {
	before, after []uint32
}

func (t templatePost) process(ids []uint32, addSpecial bool) []uint32 {
	if !addSpecial || (len(t.before) == 0 && len(t.after) == 0) {
		return ids
	}
	out := make([]uint32, 0, len(t.before)+len(ids)+len(t.after))
	out = append(out, t.before...)
	out = append(out, ids...)
	return append(out, t.after...)
}

type sequencePost []postProcessor

func (sq sequencePost) process(ids []uint32, addSpecial bool) []uint32 {
	for _, p := range sq {
		ids = p.process(ids, addSpecial)
	}
	return ids
}

func parsePostProcessor(o *obj) (postProcessor, error) {
	t, err := o.typ()
	if err != nil {
		return nil, err
	}
	switch t {
	case "ByteLevel":
		if err := o.allow("ByteLevel post-processor", "add_prefix_space", "trim_offsets", "use_regex"); err != nil {
			return nil, err
		}
		return identityPost{}, nil
	case "TemplateProcessing":
		if err := o.allow("TemplateProcessing post-processor", "single", "pair", "special_tokens"); err != nil {
			return nil, err
		}
		return parseTemplate(o)
	case "BertProcessing", "RobertaProcessing":
		if err := o.allow(t+" post-processor", "sep", "cls", "trim_offsets", "add_prefix_space"); err != nil {
			return nil, err
		}
		var cls, sep struct {
			ID uint32
		}
		for _, k := range []struct {
			key string
			dst *struct{ ID uint32 }
		}{{"cls", &cls}, {"sep", &sep}} {
			var pair []json.RawMessage
			if err := json.Unmarshal(o.m[k.key], &pair); err != nil || len(pair) != 2 || json.Unmarshal(pair[1], &k.dst.ID) != nil {
				return nil, invalid(o.sub(k.key), `expected ["token", id]`)
			}
		}
		return templatePost{before: []uint32{cls.ID}, after: []uint32{sep.ID}}, nil
	case "Sequence":
		steps, err := parseSequence(o, "post-processor", "processors", func(so *obj, _ bool) (postProcessor, error) { return parsePostProcessor(so) })
		return sequencePost(steps), err
	}
	return nil, unsupported(o.sub("type"), "post-processor type %q (supported: ByteLevel, TemplateProcessing, BertProcessing, RobertaProcessing, Sequence)", t)
}

func parseTemplate(o *obj) (postProcessor, error) {
	var special map[string]struct {
		IDs []uint32 `json:"ids"`
	}
	if o.has("special_tokens") {
		if err := json.Unmarshal(o.m["special_tokens"], &special); err != nil {
			return nil, invalid(o.sub("special_tokens"), "expected an object of special tokens with ids")
		}
	}
	var single []struct {
		SpecialToken *struct {
			ID string `json:"id"`
		} `json:"SpecialToken"`
		Sequence *struct {
			ID string `json:"id"`
		} `json:"Sequence"`
	}
	if err := json.Unmarshal(o.m["single"], &single); err != nil {
		return nil, invalid(o.sub("single"), "expected a list of SpecialToken and Sequence pieces")
	}
	var tp templatePost
	seen := false
	for i, item := range single {
		path := index(o.sub("single"), i)
		switch {
		case item.SpecialToken != nil:
			st, ok := special[item.SpecialToken.ID]
			if !ok {
				return nil, invalid(path, "special token %q is missing from special_tokens", item.SpecialToken.ID)
			}
			if seen {
				tp.after = append(tp.after, st.IDs...)
			} else {
				tp.before = append(tp.before, st.IDs...)
			}
		case item.Sequence != nil:
			if item.Sequence.ID != "A" || seen {
				return nil, unsupported(path, "single template sequence %q (only one sequence A is supported)", item.Sequence.ID)
			}
			seen = true
		default:
			return nil, invalid(path, "expected SpecialToken or Sequence")
		}
	}
	if !seen {
		return nil, unsupported(o.sub("single"), "single template without sequence A")
	}
	return tp, nil
}
