package boundedyaml

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzCheckIsSound: Check parses only what may hold an anchor and an alias
// (mayHaveAnchor); a no must be certain. With a budget small enough that
// aliases reach it, every single document ToJSONBudget refuses, Check with
// the same budget refuses too.
func FuzzCheckIsSound(f *testing.F) {
	for _, s := range []string{
		"a: &x [1, 2, 3, 4, 5, 6, 7, 8]\nb: [*x, *x, *x, *x, *x, *x, *x, *x]\n",
		`{"a":&b [1,2,3,4,5,6,7,8], "c": [*b,*b,*b,*b,*b,*b,*b,*b]}`,
		"- &a [x, x, x, x]\n- &b [*a, *a, *a, *a]\n- [*b, *b, *b, *b]\n",
		"a: &x \"0123456789\"\nb: [*x,*x,*x,*x,*x,*x,*x,*x,*x,*x,*x,*x,*x,*x,*x,*x,*x,*x,*x,*x]\n",
		"\xc2\x85&a [1,2,3]",
		"base: &b {x: 1, y: 2}\nd1: {<<: *b}\nd2: {<<: *b}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if len(doc) > 1<<14 || bytes.Contains(doc, []byte("---")) || bytes.Contains(doc, []byte("...")) {
			return // one document, as ToJSON reads
		}
		b := Budget{Bytes: 256 + Factor*int64(len(doc)), Nodes: 64 + int64(len(doc))}
		var ee *ExpansionError
		if _, err := ToJSONBudget(doc, b); !errors.As(err, &ee) {
			return
		}
		if err := checkBudget(doc, b); err == nil {
			t.Fatalf("ToJSON refuses %q (%v), Check lets it through", doc, ee)
		}
	})
}
