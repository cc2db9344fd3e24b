package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The keys each row format reads. A row with any other key is refused,
// naming the key: a misspelt key is otherwise read as a missing one (a row
// with "hashids" instead of "hash_ids" replays with no prefix shared, and a
// 0 % cache hit rate, without a word).
var (
	mooncakeKeys = []string{"timestamp", "input_length", "output_length", "hash_ids", "session_id", "created_time", "delay", "delay_ms"}
	tokensKeys   = []string{"timestamp", "tokens", "output_length", "session_id"}
	textsKeys    = []string{"timestamp", "text", "output_length", "session_id"}
)

// checkKeys refuses a row (valid JSON: it was decoded) holding a top-level
// key that is not one of known, as json.Unmarshal matches them (ignoring
// case). It scans the row's bytes once, without allocating.
func checkKeys(b []byte, line int, format Format, known []string) error {
	var bad error
	topKeys(b, func(raw []byte) bool {
		if bytes.IndexByte(raw, '\\') < 0 && knownKey(raw, known) {
			return true // the common case: no allocation
		}
		key := string(raw)
		if err := json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &key); err != nil {
			key = string(raw)
		}
		for _, k := range known {
			if strings.EqualFold(k, key) {
				return true
			}
		}
		msg := fmt.Sprintf("unknown key %q", clip([]byte(key), 60))
		if near := nearest(key, known); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		bad = lineErr(line, "%s: a %s row's keys are %s; a misspelt key is read as a missing one, so the row is refused (remove other keys, e.g. with jq 'del(.%s)')",
			msg, format, strings.Join(known, ", "), clip([]byte(key), 60))
		return false
	})
	return bad
}

// knownKey reports whether raw (without escapes) is one of known, ignoring
// ASCII case as json.Unmarshal does for these keys.
func knownKey(raw []byte, known []string) bool {
	for _, k := range known {
		if len(k) != len(raw) {
			continue
		}
		i := 0
		for ; i < len(k); i++ {
			c := raw[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != k[i] {
				break
			}
		}
		if i == len(k) {
			return true
		}
	}
	return false
}

// nearest is the known key key most likely misspells: the same letters
// without case, '_' and '-', or within two edits; "" when none is.
func nearest(key string, known []string) string {
	norm := func(s string) string {
		return strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(s))
	}
	best, bestD := "", 3
	for _, k := range known {
		if norm(k) == norm(key) {
			return k
		}
		if d := editDistance(strings.ToLower(key), k, bestD); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, or limit when it is
// at least limit (keys are short: a row's keys are cut to 64 bytes first).
func editDistance(a, b string, limit int) int {
	if len(a) > 64 || len(b) > 64 {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

// topKeys calls fn with the raw bytes of each top-level key of the JSON
// object b (valid JSON), until fn returns false.
func topKeys(b []byte, fn func(raw []byte) bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return // '}' or the end
		}
		end := skipString(b, i)
		if !fn(b[i+1 : end-1]) {
			return
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return
		}
		i = skipValue(b, skipSpace(b, i+1))
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"').
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}
