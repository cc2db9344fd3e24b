package fusion

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSitesSeesFusion is the check of the check: a plain a*b + c must be
// reported on every architecture Check compiles for, float64(a*b) + c must
// not, and Check fails on the first and counts an explicit math.FMA.
func TestSitesSeesFusion(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (the arm64 run under qemu): cross-compiles a package; the native run does it")
	}
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module fusecheck\n\ngo 1.26\n")
	write("f.go", "package fusecheck\n\nimport \"math\"\n\n"+
		"func Fused(a, b, c float64) float64 { return a*b + c }\n\n"+
		"func Rounded(a, b, c float64) float64 { return float64(a*b) + c }\n\n"+
		"func Explicit(a, b, c float64) float64 { return math.FMA(a, b, c) }\n")
	for _, goarch := range Arches {
		var fns []string
		fused := 0
		for _, s := range Sites(t, dir, goarch, false) {
			fns = append(fns, s.Func)
			if strings.HasSuffix(s.Func, ".Rounded") {
				t.Errorf("%s: float64(a*b) + c reported as fused: %+v", goarch, s)
			}
			if strings.HasSuffix(s.Func, ".Fused") && s.Line == 5 {
				fused++
			}
		}
		if fused != 1 {
			t.Errorf("%s: want one fused site in Fused at f.go:5, got %v", goarch, fns)
		}
	}

	rec := &recorder{TB: t}
	explicit := Check(rec, dir, false)
	if len(rec.errors) != len(Arches) {
		t.Errorf("Check reported %d errors, want one per architecture (Fused): %q", len(rec.errors), rec.errors)
	}
	for _, e := range rec.errors {
		if !strings.Contains(e, "f.go:5 in") || !strings.Contains(e, "a*b + c") {
			t.Errorf("Check's error does not name the fused line: %s", e)
		}
	}
	for _, goarch := range Arches {
		if explicit[goarch] < 1 {
			t.Errorf("%s: the explicit math.FMA was not counted: %v", goarch, explicit)
		}
	}
}

// recorder collects Errorf calls instead of failing the test.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
