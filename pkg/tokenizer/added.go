package tokenizer

import (
	"unicode/utf8"
)

// addedToken is one entry of the file's added_tokens.
type addedToken struct {
	ID         uint32 `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized *bool  `json:"normalized"`
	Special    bool   `json:"special"`
}

// section is a part of the input: either text (id < 0) or an added token.
type section struct {
	start, end int
	id         int64
}

// tokenTrie finds added tokens leftmost-longest, like the Aho-Corasick
// automaton (MatchKind::LeftmostLongest) of the Rust crate.
type tokenTrie struct {
	nodes []trieNode
	first [256]bool
	toks  []*addedToken
}

type trieNode struct {
	next map[byte]int32
	tok  int32 // index into toks, or -1
}

func newTokenTrie() *tokenTrie {
	return &tokenTrie{nodes: []trieNode{{tok: -1}}}
}

func (t *tokenTrie) add(pattern string, tok *addedToken) {
	if pattern == "" {
		return
	}
	n := int32(0)
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		nx, ok := t.nodes[n].next[c]
		if !ok {
			if t.nodes[n].next == nil {
				t.nodes[n].next = map[byte]int32{}
			}
			nx = int32(len(t.nodes))
			t.nodes = append(t.nodes, trieNode{tok: -1})
			t.nodes[n].next[c] = nx
		}
		n = nx
	}
	if t.nodes[n].tok < 0 {
		t.nodes[n].tok = int32(len(t.toks))
		t.toks = append(t.toks, tok)
	}
	t.first[pattern[0]] = true
}

// longestAt returns the end of the longest token starting at i and that
// token, or -1.
func (t *tokenTrie) longestAt(s string, i int) (int, *addedToken) {
	end, tok := -1, (*addedToken)(nil)
	n := int32(0)
	for j := i; j < len(s); j++ {
		nx, ok := t.nodes[n].next[s[j]]
		if !ok {
			break
		}
		n = nx
		if k := t.nodes[n].tok; k >= 0 {
			end, tok = j+1, t.toks[k]
		}
	}
	return end, tok
}

// split cuts s into text sections and added-token sections, honouring
// single_word, lstrip and rstrip as AddedVocabulary::find_matches does.
func (t *tokenTrie) split(s string, out []section) []section {
	startOffset := 0
	for i := 0; i < len(s); {
		if !t.first[s[i]] {
			i++
			continue
		}
		end, tok := t.longestAt(s, i)
		if end < 0 {
			i++
			continue
		}
		start, stop := i, end
		i = end
		if tok.SingleWord {
			startSpace := start == 0 || !endsWithWord(s[:start])
			stopSpace := stop == len(s) || !startsWithWord(s[stop:])
			if !startSpace || !stopSpace {
				continue
			}
		}
		if tok.LStrip {
			ns := start
			for ns > 0 {
				r, w := utf8.DecodeLastRuneInString(s[:ns])
				if !isWS(r) {
					break
				}
				ns -= w
			}
			start = max(ns, startOffset)
		}
		if tok.RStrip {
			for stop < len(s) {
				r, w := decodeAt(s, stop)
				if !isWS(r) {
					break
				}
				stop += w
			}
			i = stop
		}
		if startOffset < start {
			out = append(out, section{startOffset, start, -1})
		}
		out = append(out, section{start, stop, int64(tok.ID)})
		startOffset = stop
	}
	if startOffset < len(s) {
		out = append(out, section{startOffset, len(s), -1})
	}
	return out
}

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && isWordChar(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && isWordChar(r)
}
