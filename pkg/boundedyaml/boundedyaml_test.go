package boundedyaml_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/memguard"
	"github.com/ai-dynamo/kubectl-dynamo/pkg/boundedyaml"
)

// equivalence is YAML that converts exactly as sigs.k8s.io/yaml converts it.
var equivalence = []struct{ name, doc string }{
	{"object", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: \"1\"\n"},
	{"scalars", "i: 1\nf: 1.5\nb: true\nn: null\ns: hello\nbig: 18446744073709551615\nneg: -3\nexp: 1e300\n"},
	{"yaml 1.1 booleans", "a: yes\nb: on\nc: off\nd: y\n"},
	{"octal and hex", "a: 0755\nb: 0x1F\n"},
	{"timestamp", "t: 2026-11-25T10:00:00Z\nd: 2026-11-25\n"},
	{"keys of every type", "1: a\n1.5: b\ntrue: c\n~: d\n"},
	{"merge keys", "base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3\n"},
	{"aliases", "a: &s text\nb: *s\nlist: &l [1, 2]\nc: *l\n"},
	{"block scalars", "s: |\n  line one\n  line two\nf: >\n  folded\n  text\n"},
	{"escapes", "s: \"\\x1b]0;title\\a\\u202e<&>\"\n"},
	{"top-level list", "- 1\n- two\n- {three: 3}\n"},
	{"scalar document", "just text\n"},
	{"empty", ""},
	{"flow", "{a: [1, {b: c}], d: []}"},
	{"json", `{"a": [1, 2, {"b": "c"}], "n": 1.0}`},
}

func TestToJSONMatchesSigsYAML(t *testing.T) {
	for _, tt := range equivalence {
		t.Run(tt.name, func(t *testing.T) {
			want, wantErr := yaml.YAMLToJSON([]byte(tt.doc))
			got, err := boundedyaml.ToJSON([]byte(tt.doc))
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("error %v, sigs.k8s.io/yaml's %v", err, wantErr)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("ToJSON\n got %s\nwant %s", got, want)
			}
			var v, w any
			if err := boundedyaml.Unmarshal([]byte(tt.doc), &v); err != nil && wantErr == nil {
				t.Errorf("Unmarshal: %v", err)
			}
			_ = yaml.Unmarshal([]byte(tt.doc), &w)
			if fmt.Sprint(v) != fmt.Sprint(w) {
				t.Errorf("Unmarshal %v, sigs.k8s.io/yaml %v", v, w)
			}
		})
	}
}

// bomb is the review's attack: one string of size bytes anchored once and
// aliased refs times — a 130 KB document that is 1 GB of JSON.
func bomb(size, refs int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata:\n  name: x\n  annotations:\n    a: &big ")
	b.WriteString(strings.Repeat("A", size))
	b.WriteString("\nspec:\n  refs:\n")
	for range refs {
		b.WriteString("  - *big\n")
	}
	return []byte(b.String())
}

// nodeBomb aliases a wide mapping many times: few bytes per alias, many
// values. filler plain values keep the alias share under the YAML library's
// own ratio guard, which counts values and lets this through.
func nodeBomb(width, refs, filler int) []byte {
	var b strings.Builder
	b.WriteString("filler:\n")
	for range filler {
		b.WriteString("- 1\n")
	}
	b.WriteString("m: &m\n")
	for i := range width {
		fmt.Fprintf(&b, "  k%d: %d\n", i, i)
	}
	b.WriteString("refs:\n")
	for range refs {
		b.WriteString("- *m\n")
	}
	return []byte(b.String())
}

func TestExpansionIsBounded(t *testing.T) {
	tests := []struct {
		name      string
		doc       []byte
		nodes     bool
		wantError bool
	}{
		{"a 130 KB string bomb (1 GB of JSON)", bomb(100_000, 10_000), false, true},
		{"a 230 KB string bomb (2 GB of JSON)", bomb(200_000, 10_000), false, true},
		{"aliases to a wide mapping (660,000 values from 250 KB)", nodeBomb(100, 3000, 60_000), true, true},
		{"a few aliases to a shared block", bomb(1000, 20), false, false},
		{"aliases within the factor", bomb(10_000, 15), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := memguard.Watch(t, 256<<20)
			_, err := boundedyaml.ToJSON(tt.doc)
			checkErr := boundedyaml.Check(append([]byte("a: 1\n---\n"), tt.doc...))
			peak := g.Stop()
			t.Logf("%d bytes: peak %s", len(tt.doc), memguard.MiB(peak))
			var ee *boundedyaml.ExpansionError
			if !tt.wantError {
				if err != nil || checkErr != nil {
					t.Fatalf("ToJSON %v, Check %v: want success", err, checkErr)
				}
				return
			}
			if !errors.As(err, &ee) || ee.Nodes != tt.nodes {
				t.Fatalf("ToJSON: %v, want an ExpansionError (nodes %v)", err, tt.nodes)
			}
			for _, want := range []string{"expands its anchors and aliases to more than", "write the repeated values out"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q lacks %q", err, want)
				}
			}
			if !errors.As(checkErr, &ee) || ee.Document != 2 {
				t.Fatalf("Check: %v, want an ExpansionError in document 2", checkErr)
			}
			if !strings.HasPrefix(checkErr.Error(), "YAML document 2 expands") {
				t.Errorf("Check's message %q does not name the document", checkErr)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		data string
		ok   bool
	}{
		{"no anchors", "a: 1\n---\nb: [1, 2]\n", true},
		{"an ampersand in text is not an anchor", "a: b&c\nurl: http://x?a=1&b=2\n", true},
		{"JSON", `{"a": "&x"}`, true},
		{"unparseable", "a: [\n", true},
		{"an anchor used within the budget", "a: &x [1, 2]\nb: *x\n", true},
		{"shell commands (&& and globs) are not aliases", "args: [sh, -c, 'make && ls *.txt']\n", true},
		{"an anchor after a quoted flow key", `{"a":&b "` + strings.Repeat("x", 100_000) + `", "c": [` + strings.TrimSuffix(strings.Repeat("*b,", 100), ",") + `]}`, false},
		{"a bomb split over documents", string(bomb(100_000, 300)) + "---\n" + string(bomb(100_000, 300)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := boundedyaml.Check([]byte(tt.data)); (err == nil) != tt.ok {
				t.Errorf("Check: %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// sigsMayGive reports whether sigs.k8s.io/yaml converts doc to want on some
// run. Where two keys of a mapping become the same JSON key (0 and 0.0 are both
// "0"), its answer depends on Go's map iteration order and changes from run to
// run ({"0":0} 30 times and {"0":null} 170 times in 200 for "0: &a 00\n0. :",
// the fuzzer's find on 2026-11-27); ToJSON picks one of its answers by a fixed
// rule.
func sigsMayGive(doc, want []byte) bool {
	for range 256 {
		if got, err := yaml.YAMLToJSON(doc); err == nil && bytes.Equal(got, want) {
			return true
		}
	}
	return false
}

// TestToJSONCollidingKeys: keys that become the same JSON key convert the same
// way every time (sigs.k8s.io/yaml's pick varies between runs): a string key
// before an integer, an integer before a float, the smaller float first.
func TestToJSONCollidingKeys(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{"0: 1\n0.0: 2\n", `{"0":1}`},
		{"0.0: 2\n0: 1\n", `{"0":1}`},
		{"0: &a 00\n0. :", `{"0":0}`},
		{"true: 1\n\"true\": 2\n", `{"true":2}`},
		{"\"1\": a\n1: b\n1.0: c\n", `{"1":"a"}`},
		{"0.10000000001: p\n0.1: q\n", `{"0.1":"q"}`},
	} {
		for range 50 {
			got, err := boundedyaml.ToJSON([]byte(tt.doc))
			if err != nil || string(got) != tt.want {
				t.Fatalf("ToJSON(%q) = %s, %v; want %s", tt.doc, got, err, tt.want)
			}
		}
		if !sigsMayGive([]byte(tt.doc), []byte(tt.want)) {
			t.Errorf("sigs.k8s.io/yaml never converts %q to %s", tt.doc, tt.want)
		}
	}
}

// FuzzToJSON: ToJSON never panics, equals sigs.k8s.io/yaml whenever it
// converts, and fails only where sigs.k8s.io/yaml fails or the budget is
// exceeded; Check never refuses what ToJSON converts within its budget.
func FuzzToJSON(f *testing.F) {
	for _, tt := range equivalence {
		f.Add([]byte(tt.doc))
	}
	f.Add(bomb(100, 50))
	f.Add(nodeBomb(10, 10, 10))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("a: &a\n  b: *a\n"))
	f.Add([]byte("- &a [x, x, x, x]\n- &b [*a, *a, *a, *a]\n- &c [*b, *b, *b, *b]\n- [*c, *c, *c, *c]\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if len(doc) > 1<<16 {
			return
		}
		got, err := boundedyaml.ToJSON(doc)
		var ee *boundedyaml.ExpansionError
		if errors.As(err, &ee) {
			return
		}
		want, wantErr := yaml.YAMLToJSON(doc)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("ToJSON error %v, sigs.k8s.io/yaml's %v", err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) && !sigsMayGive(doc, got) {
			t.Fatalf("ToJSON %s, sigs.k8s.io/yaml %s", got, want)
		}
		if again, _ := boundedyaml.ToJSON(doc); err == nil && !bytes.Equal(again, got) {
			t.Fatalf("ToJSON is not deterministic: %s, then %s", got, again)
		}
		if err == nil {
			if cerr := boundedyaml.Check(doc); cerr != nil {
				t.Fatalf("Check refuses a document ToJSON converts: %v", cerr)
			}
		}
	})
}
