package cmdutil

import "strings"

// Suggest returns the candidate closest to word for a "did you mean …?",
// "" when none is close: at most one edit away for words of up to four
// letters, two for longer ones (case-insensitive; an exact match is not a
// suggestion).
func Suggest(word string, candidates []string) string {
	w := strings.ToLower(word)
	limit := 1
	if len([]rune(w)) > 4 {
		limit = 2
	}
	best, bestD := "", limit+1
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if lc == w {
			return ""
		}
		if d := editDistance(w, lc); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
