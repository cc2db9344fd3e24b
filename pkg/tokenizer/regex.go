package tokenizer

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// matcher finds the non-overlapping matches of a pattern, left to right, as
// [start, end) byte offsets. Empty matches are not reported.
type matcher interface {
	matches(s string, buf [][2]int) [][2]int
}

// scanMatcher runs a hand-written scanner.
type scanMatcher struct{ scan scanner }

func (m scanMatcher) matches(s string, buf [][2]int) [][2]int {
	for i := 0; i < len(s); {
		j := m.scan(s, i)
		buf = append(buf, [2]int{i, j})
		i = j
	}
	return buf
}

// literalMatcher finds a literal string.
type literalMatcher struct{ lit string }

func (m literalMatcher) matches(s string, buf [][2]int) [][2]int {
	if m.lit == "" {
		return buf
	}
	for off := 0; ; {
		k := strings.Index(s[off:], m.lit)
		if k < 0 {
			return buf
		}
		buf = append(buf, [2]int{off + k, off + k + len(m.lit)})
		off += k + len(m.lit)
	}
}

// regexMatcher runs an arbitrary pattern with regexp2, a backtracking engine
// that supports lookarounds like Oniguruma does.
type regexMatcher struct{ re *regexp2.Regexp }

func (m regexMatcher) matches(s string, buf [][2]int) [][2]int {
	runes := []rune(s)
	// byteAt[k] is the byte offset of rune k.
	byteAt := make([]int, len(runes)+1)
	off := 0
	for k, r := range runes {
		byteAt[k] = off
		off += utf8.RuneLen(r)
	}
	byteAt[len(runes)] = off
	match, err := m.re.FindRunesMatch(runes)
	for err == nil && match != nil {
		if match.Length > 0 {
			buf = append(buf, [2]int{byteAt[match.Index], byteAt[match.Index+match.Length]})
		}
		match, err = m.re.FindNextMatch(match)
	}
	if err != nil {
		// Encode recovers this and returns it: a match that ran out of time
		// must not silently end the split with the text half tokenized.
		panic(&RegexTimeoutError{Pattern: m.re.String(), Timeout: m.re.MatchTimeout, Err: err})
	}
	return buf
}

// RegexMatchTimeout bounds one match of a tokenizer.json regex (a Split or
// Replace pattern without a hand-written scanner): a backtracking engine can
// take exponential time on a pattern such as (a+)+$, and the pattern comes
// from a file. Encode fails with a *RegexTimeoutError instead.
var RegexMatchTimeout = 2 * time.Second

// RegexTimeoutError is returned by Encode when a tokenizer.json regex took
// longer than RegexMatchTimeout on the text.
type RegexTimeoutError struct {
	Pattern string
	Timeout time.Duration
	Err     error
}

func (e *RegexTimeoutError) Error() string {
	p := e.Pattern
	if len(p) > 80 {
		p = p[:80] + "…"
	}
	return fmt.Sprintf("the tokenizer's regex %q did not finish within %s on this text (catastrophic backtracking): "+
		"the tokenizer.json is not usable here; tokenize with the frontend (--frontend-url) or pass --tokens", p, e.Timeout)
}

func (e *RegexTimeoutError) Unwrap() error { return e.Err }

// compilePattern compiles the pattern of a Split or Replace, recognising the
// known regexes that have a hand-written scanner.
func compilePattern(p pattern, path string) (matcher, error) {
	if !p.isRegex {
		return literalMatcher{lit: p.literal}, nil
	}
	if sc := knownScanner(p.regex); sc != nil {
		return scanMatcher{scan: sc}, nil
	}
	re, err := compileRegex(p.regex)
	if err != nil {
		return nil, unsupported(path, "regex %q: %v", p.regex, err)
	}
	return regexMatcher{re: re}, nil
}

// unsupportedRegexSyntax lists Oniguruma constructs whose meaning differs in
// regexp2 (.NET syntax); patterns containing them are refused. Oniguruma's
// Ruby syntax always treats ^ and $ as line anchors, hence Multiline below.
var unsupportedRegexSyntax = regexp.MustCompile(`\\[hHGKRXyY]|\\x\{|\\[pP]\{\^|\(\?[imsx-]*[ms][imsx-]*[:)]|\[\[:|\(\?~|&&`)

func compileRegex(expr string) (*regexp2.Regexp, error) {
	if loc := unsupportedRegexSyntax.FindStringIndex(expr); loc != nil {
		return nil, fmt.Errorf("construct %q is not supported", expr[loc[0]:loc[1]])
	}
	if !utf8.ValidString(expr) {
		return nil, fmt.Errorf("pattern is not valid UTF-8")
	}
	re, err := regexp2.Compile(expr, regexp2.Multiline)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = RegexMatchTimeout
	return re, nil
}
