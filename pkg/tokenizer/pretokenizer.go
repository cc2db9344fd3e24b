package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// piece is a pre-token: a substring of the normalized text. first is set for
// the piece that starts at offset 0 of the original input (Metaspace's
// prepend_scheme "first" depends on it).
type piece struct {
	s     string
	first bool
}

// preTokenizer splits every input piece and appends the results to out.
type preTokenizer interface {
	split(in []piece, out []piece, buf *[][2]int) []piece
}

type behavior int

const (
	isolated behavior = iota
	removed
	mergedWithPrevious
	mergedWithNext
	contiguous
)

func parseBehavior(o *obj) (behavior, error) {
	b, err := o.str("behavior", "")
	if err != nil {
		return 0, err
	}
	switch b {
	case "Isolated":
		return isolated, nil
	case "Removed":
		return removed, nil
	case "MergedWithPrevious":
		return mergedWithPrevious, nil
	case "MergedWithNext":
		return mergedWithNext, nil
	case "Contiguous":
		return contiguous, nil
	}
	return 0, oneOf(o.sub("behavior"), "split behavior", b, "Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous")
}

// segment is a part of a piece: a match of the pattern or the text between.
type segment struct {
	start, end int
	match      bool
}

// splitPiece implements NormalizedString::split of the Rust crate: the
// matches and the gaps between them are combined according to the behavior,
// and empty parts are dropped.
func splitPiece(p piece, ms [][2]int, b behavior, invert bool, out []piece) []piece {
	s := p.s
	emit := func(start, end int) {
		if end > start {
			out = append(out, piece{s: s[start:end], first: p.first && start == 0})
		}
	}
	if b == isolated {
		prev := 0
		for _, m := range ms {
			emit(prev, m[0])
			emit(m[0], m[1])
			prev = m[1]
		}
		emit(prev, len(s))
		return out
	}
	var segs []segment
	prev := 0
	for _, m := range ms {
		if prev < m[0] {
			segs = append(segs, segment{prev, m[0], invert})
		}
		segs = append(segs, segment{m[0], m[1], !invert})
		prev = m[1]
	}
	if prev < len(s) {
		segs = append(segs, segment{prev, len(s), invert})
	}
	switch b {
	case removed:
		for _, g := range segs {
			if !g.match {
				emit(g.start, g.end)
			}
		}
		return out
	case contiguous, mergedWithPrevious:
		var acc []segment
		prevMatch := false
		for _, g := range segs {
			join := g.match == prevMatch
			if b == mergedWithPrevious {
				join = g.match && !prevMatch
			}
			if join && len(acc) > 0 {
				acc[len(acc)-1].end = g.end
			} else {
				acc = append(acc, g)
			}
			prevMatch = g.match
		}
		for _, g := range acc {
			emit(g.start, g.end)
		}
		return out
	case mergedWithNext:
		var acc []segment
		prevMatch := false
		for k := len(segs) - 1; k >= 0; k-- {
			g := segs[k]
			if g.match && !prevMatch && len(acc) > 0 {
				acc[len(acc)-1].start = g.start
			} else {
				acc = append(acc, g)
			}
			prevMatch = g.match
		}
		for k := len(acc) - 1; k >= 0; k-- {
			emit(acc[k].start, acc[k].end)
		}
		return out
	}
	return out
}

// splitPre is the Split pre-tokenizer and the splitting part of several
// others.
type splitPre struct {
	m        matcher
	behavior behavior
	invert   bool
}

func (sp *splitPre) split(in, out []piece, buf *[][2]int) []piece {
	for _, p := range in {
		*buf = sp.m.matches(p.s, (*buf)[:0])
		out = splitPiece(p, *buf, sp.behavior, sp.invert, out)
	}
	return out
}

// runeMatcher matches single runes satisfying a predicate, like the Rust
// Pattern impl for Fn(char) -> bool.
type runeMatcher func(rune) bool

func (f runeMatcher) matches(s string, buf [][2]int) [][2]int {
	for i := 0; i < len(s); {
		r, w := decodeAt(s, i)
		if f(r) {
			buf = append(buf, [2]int{i, i + w})
		}
		i += w
	}
	return buf
}

// byteLevelPre is the ByteLevel pre-tokenizer. When tail is set it is the
// last pre-tokenizer and the byte-to-rune mapping is left to the model,
// which then works on raw bytes.
type byteLevelPre struct {
	addPrefixSpace bool
	useRegex       bool
	tail           bool
}

func (bl *byteLevelPre) split(in, out []piece, buf *[][2]int) []piece {
	for _, p := range in {
		s := p.s
		if bl.addPrefixSpace && !strings.HasPrefix(s, " ") {
			s = " " + s
		}
		start := len(out)
		if bl.useRegex {
			*buf = scanMatcher{scan: scanGPT2}.matches(s, (*buf)[:0])
			out = splitPiece(piece{s: s, first: p.first}, *buf, isolated, false, out)
		} else if s != "" {
			out = append(out, piece{s: s, first: p.first})
		}
		if !bl.tail {
			for k := start; k < len(out); k++ {
				out[k].s = byteLevelEncode(out[k].s)
			}
		}
	}
	return out
}

type prependScheme int

const (
	prependAlways prependScheme = iota
	prependFirst
	prependNever
)

// metaspacePre is the Metaspace pre-tokenizer.
type metaspacePre struct {
	replacement        rune
	rep                string
	scheme             prependScheme
	splitOnReplacement bool
}

func (ms *metaspacePre) split(in, out []piece, buf *[][2]int) []piece {
	for _, p := range in {
		s := strings.ReplaceAll(p.s, " ", ms.rep)
		if !strings.HasPrefix(s, ms.rep) {
			if ms.scheme == prependAlways || (ms.scheme == prependFirst && p.first) {
				s = ms.rep + s
			}
		}
		np := piece{s: s, first: p.first}
		if !ms.splitOnReplacement {
			if s != "" {
				out = append(out, np)
			}
			continue
		}
		*buf = literalMatcher{lit: ms.rep}.matches(s, (*buf)[:0])
		out = splitPiece(np, *buf, mergedWithNext, false, out)
	}
	return out
}

// whitespacePre is the Whitespace pre-tokenizer: runs of \w and runs of
// [^\w\s], whitespace removed.
type whitespacePre struct{}

// isWordChar is Oniguruma's Unicode \w.
func isWordChar(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&(clsL|clsN) != 0 || r == '_'
	}
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.Is(unicode.Nd, r) ||
		unicode.Is(unicode.Pc, r) || unicode.Is(unicode.Nl, r)
}

func (whitespacePre) split(in, out []piece, _ *[][2]int) []piece {
	for _, p := range in {
		s := p.s
		for i := 0; i < len(s); {
			r, w := decodeAt(s, i)
			if isWS(r) {
				i += w
				continue
			}
			word := isWordChar(r)
			j := runEnd(s, i+w, func(r rune) bool { return !isWS(r) && isWordChar(r) == word })
			out = append(out, piece{s: s[i:j], first: p.first && i == 0})
			i = j
		}
	}
	return out
}

// sequencePre runs pre-tokenizers one after the other.
type sequencePre struct{ steps []preTokenizer }

func (sq *sequencePre) split(in, out []piece, buf *[][2]int) []piece {
	cur := in
	for k, st := range sq.steps {
		var next []piece
		if k == len(sq.steps)-1 {
			next = out
		}
		cur = st.split(cur, next, buf)
	}
	if len(sq.steps) == 0 {
		return append(out, in...)
	}
	return cur
}

func parsePreTokenizer(o *obj, last bool) (preTokenizer, error) {
	t, err := o.typ()
	if err != nil {
		return nil, err
	}
	switch t {
	case "Sequence":
		steps, err := parseSequence(o, "pre-tokenizer", "pretokenizers", func(so *obj, lastStep bool) (preTokenizer, error) {
			return parsePreTokenizer(so, last && lastStep)
		})
		return &sequencePre{steps: steps}, err
	case "Split":
		if err := o.allow("Split pre-tokenizer", "pattern", "behavior", "invert"); err != nil {
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
		b, err := parseBehavior(o)
		if err != nil {
			return nil, err
		}
		inv, err := o.boolean("invert", false)
		if err != nil {
			return nil, err
		}
		return &splitPre{m: m, behavior: b, invert: inv}, nil
	case "ByteLevel":
		if err := o.allow("ByteLevel pre-tokenizer", "add_prefix_space", "trim_offsets", "use_regex"); err != nil {
			return nil, err
		}
		aps, err := o.boolean("add_prefix_space", true)
		if err != nil {
			return nil, err
		}
		ur, err := o.boolean("use_regex", true)
		if err != nil {
			return nil, err
		}
		return &byteLevelPre{addPrefixSpace: aps, useRegex: ur, tail: last}, nil
	case "Metaspace":
		if err := o.allow("Metaspace pre-tokenizer", "replacement", "prepend_scheme", "split", "add_prefix_space", "str_rep"); err != nil {
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
		ms := &metaspacePre{replacement: r, rep: rep}
		switch scheme {
		case "always":
			ms.scheme = prependAlways
		case "first":
			ms.scheme = prependFirst
		case "never":
			ms.scheme = prependNever
		default:
			return nil, oneOf(o.sub("prepend_scheme"), "prepend_scheme", scheme, "always", "first", "never")
		}
		if aps, err := o.boolean("add_prefix_space", true); err != nil {
			return nil, err
		} else if !aps {
			if o.has("prepend_scheme") && ms.scheme != prependNever {
				return nil, invalid(o.sub("add_prefix_space"), "add_prefix_space does not match declared prepend_scheme")
			}
			ms.scheme = prependNever
		}
		if ms.splitOnReplacement, err = o.boolean("split", true); err != nil {
			return nil, err
		}
		return ms, nil
	case "Digits":
		if err := o.allow("Digits pre-tokenizer", "individual_digits"); err != nil {
			return nil, err
		}
		ind, err := o.boolean("individual_digits", false)
		if err != nil {
			return nil, err
		}
		b := contiguous
		if ind {
			b = isolated
		}
		return &splitPre{m: runeMatcher(unicode.IsNumber), behavior: b}, nil
	case "Whitespace":
		if err := o.allow("Whitespace pre-tokenizer"); err != nil {
			return nil, err
		}
		return whitespacePre{}, nil
	case "WhitespaceSplit":
		if err := o.allow("WhitespaceSplit pre-tokenizer"); err != nil {
			return nil, err
		}
		return &splitPre{m: runeMatcher(isWS), behavior: removed}, nil
	case "Punctuation":
		if err := o.allow("Punctuation pre-tokenizer", "behavior"); err != nil {
			return nil, err
		}
		b := isolated
		if o.has("behavior") {
			if b, err = parseBehavior(o); err != nil {
				return nil, err
			}
		}
		// Rust: char::is_ascii_punctuation || Unicode P*.
		isPunct := func(r rune) bool {
			return strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", r) || unicode.IsPunct(r)
		}
		return &splitPre{m: runeMatcher(isPunct), behavior: b}, nil
	}
	return nil, unsupported(o.sub("type"), "pre-tokenizer type %q (supported: Sequence, Split, ByteLevel, Metaspace, Digits, Whitespace, WhitespaceSplit, Punctuation)", t)
}
