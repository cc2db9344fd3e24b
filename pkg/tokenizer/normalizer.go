package tokenizer

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// normalizer rewrites the text of a section before pre-tokenization.
type normalizer interface {
	normalize(s string) string
}

type unicodeNorm struct{ form norm.Form }

func (u unicodeNorm) normalize(s string) string { return u.form.String(s) }

type lowercaseNorm struct{}

func (lowercaseNorm) normalize(s string) string { return strings.ToLower(s) }

type stripAccentsNorm struct{}

func (stripAccentsNorm) normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
}

type stripNorm struct{ left, right bool }

func (st stripNorm) normalize(s string) string {
	if st.left {
		s = strings.TrimLeftFunc(s, isWS)
	}
	if st.right {
		s = strings.TrimRightFunc(s, isWS)
	}
	return s
}

type prependNorm struct{ prefix string }

func (p prependNorm) normalize(s string) string {
	if s == "" {
		return s
	}
	return p.prefix + s
}

type replaceNorm struct {
	m       matcher
	content string
}

func (r replaceNorm) normalize(s string) string { return replaceAll(r.m, s, r.content) }

func replaceAll(m matcher, s, content string) string {
	ms := m.matches(s, nil)
	if len(ms) == 0 {
		return s
	}
	var sb strings.Builder
	prev := 0
	for _, x := range ms {
		sb.WriteString(s[prev:x[0]])
		sb.WriteString(content)
		prev = x[1]
	}
	sb.WriteString(s[prev:])
	return sb.String()
}

type byteLevelNorm struct{}

func (byteLevelNorm) normalize(s string) string { return byteLevelEncode(s) }

type sequenceNorm []normalizer

func (sq sequenceNorm) normalize(s string) string {
	for _, n := range sq {
		s = n.normalize(s)
	}
	return s
}

func parseNormalizer(o *obj) (normalizer, error) {
	t, err := o.typ()
	if err != nil {
		return nil, err
	}
	switch t {
	case "NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "ByteLevel":
		if err := o.allow(t + " normalizer"); err != nil {
			return nil, err
		}
		switch t {
		case "NFC":
			return unicodeNorm{norm.NFC}, nil
		case "NFD":
			return unicodeNorm{norm.NFD}, nil
		case "NFKC":
			return unicodeNorm{norm.NFKC}, nil
		case "NFKD":
			return unicodeNorm{norm.NFKD}, nil
		case "Lowercase":
			return lowercaseNorm{}, nil
		case "StripAccents":
			return stripAccentsNorm{}, nil
		}
		return byteLevelNorm{}, nil
	case "Strip":
		if err := o.allow("Strip normalizer", "strip_left", "strip_right"); err != nil {
			return nil, err
		}
		l, err := o.boolean("strip_left", true)
		if err != nil {
			return nil, err
		}
		r, err := o.boolean("strip_right", true)
		if err != nil {
			return nil, err
		}
		return stripNorm{left: l, right: r}, nil
	case "Prepend":
		if err := o.allow("Prepend normalizer", "prepend"); err != nil {
			return nil, err
		}
		p, err := o.str("prepend", "")
		if err != nil {
			return nil, err
		}
		return prependNorm{prefix: p}, nil
	case "Replace":
		if err := o.allow("Replace normalizer", "pattern", "content"); err != nil {
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
		return replaceNorm{m: m, content: c}, nil
	case "Sequence":
		steps, err := parseSequence(o, "normalizer", "normalizers", func(so *obj, _ bool) (normalizer, error) { return parseNormalizer(so) })
		return sequenceNorm(steps), err
	}
	return nil, unsupported(o.sub("type"), "normalizer type %q (supported: NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip, Prepend, Replace, ByteLevel, Sequence)", t)
}
