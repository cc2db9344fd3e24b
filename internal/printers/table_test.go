package printers

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

func TestTableRender(t *testing.T) {
	tbl := Table{Columns: []Column{{Header: "Name"}, {Header: "Value"}, {Header: "Extra", Wide: true}}}
	tbl.AddRow("alpha", "1", "x")
	tbl.AddRow("b", "", "multi\nline\tcell")
	tests := []struct {
		name string
		opts TableOptions
		want string
	}{
		{"table", TableOptions{}, "NAME    VALUE\nalpha   1\nb       <none>\n"},
		{"wide", TableOptions{Wide: true}, "NAME    VALUE    EXTRA\nalpha   1        x\nb       <none>   multi line cell\n"},
		{"no headers", TableOptions{NoHeaders: true}, "alpha   1\nb       <none>\n"},
		{"styled header keeps alignment", TableOptions{HeaderStyle: func(s string) string { return "<" + s + ">" }},
			"<NAME    VALUE>\nalpha   1\nb       <none>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tbl.Render(&b, tt.opts); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), tt.want)
			}
		})
	}
}

func TestSerializeKeepsU64Strings(t *testing.T) {
	doc := struct {
		Hash string `json:"hash"`
		N    int    `json:"n"`
	}{"18446744073709551615", 3}
	var j, y bytes.Buffer
	if err := JSON(&j, doc); err != nil {
		t.Fatal(err)
	}
	if err := YAML(&y, doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(j.String(), `"hash": "18446744073709551615"`) {
		t.Errorf("json: %s", j.String())
	}
	if !strings.Contains(y.String(), `hash: "18446744073709551615"`) {
		t.Errorf("yaml must quote the numeric string: %s", y.String())
	}
}

// TestJoinCutPrintsAsJoin: a column cell built with JoinCut prints exactly
// as the whole join does, for plain and hostile items, every separator and
// every cut.
func TestJoinCutPrintsAsJoin(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 2))
	alphabet := []string{"a", "b", "-", "0", " ", "é", "東", "\x1b", "\t", "\u202e"}
	for range hermetic.Size(300, 3000, 30000) {
		items := make([]string, rng.IntN(40))
		hostile := rng.IntN(4) == 0
		for i := range items {
			var b strings.Builder
			for range rng.IntN(30) {
				if hostile {
					b.WriteString(alphabet[rng.IntN(len(alphabet))])
				} else {
					b.WriteString(alphabet[rng.IntN(5)])
				}
			}
			items[i] = b.String()
		}
		sep := []string{", ", ",", "", " | "}[rng.IntN(4)]
		for _, limit := range []int{Unlimited, 1, 2, 3, 4, 5, MaxCellWidth, MaxLastCellWidth, rng.IntN(100)} {
			if limit == 0 {
				continue
			}
			got, want := sanitizeCell(JoinCut(items, sep, limit), limit), sanitizeCell(strings.Join(items, sep), limit)
			if got != want {
				t.Fatalf("JoinCut(%q, %q, %d) prints %q, the join %q", items, sep, limit, got, want)
			}
		}
	}
}

func TestCellLimit(t *testing.T) {
	tb := &Table{Columns: []Column{{Header: "A"}, {Header: "B"}, {Header: "C", Wide: true}, {Header: "D", MaxWidth: Unlimited}}}
	for _, tc := range []struct {
		col  int
		wide bool
		want int
	}{{0, false, MaxCellWidth}, {1, false, MaxCellWidth}, {3, false, Unlimited}, {2, true, MaxCellWidth}} {
		if got := tb.CellLimit(tc.col, tc.wide); got != tc.want {
			t.Errorf("CellLimit(%d, %v) = %d, want %d", tc.col, tc.wide, got, tc.want)
		}
	}
	tb = &Table{Columns: []Column{{Header: "A"}, {Header: "B"}, {Header: "C", Wide: true}}}
	if tb.CellLimit(1, false) != MaxLastCellWidth || tb.CellLimit(1, true) != MaxCellWidth || tb.CellLimit(2, true) != MaxLastCellWidth {
		t.Error("the last column shown gets MaxLastCellWidth")
	}
}
