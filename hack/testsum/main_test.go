package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

func TestMain(m *testing.M) { hermetic.Main(m) }

// goTestJSON runs the real `go test -json` over a throwaway module made of
// files, and returns its event stream.
func goTestJSON(t *testing.T, files map[string]string) []byte {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.test/m\n\ngo 1.24\n"
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-json", "-count=1", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	_ = cmd.Run() // fails when a test fails, which some cases want
	return out.Bytes()
}

func TestSummary(t *testing.T) {
	cases := []struct {
		name     string
		files    map[string]string
		code     int
		want     []string // regular expressions, each must match a line
		dontWant []string
	}{
		{
			name: "pass and skip",
			files: map[string]string{
				"a/a_test.go": `package a
import "testing"
func TestOne(t *testing.T) { t.Log("quiet") }
func TestTwo(t *testing.T) { t.Run("sub", func(t *testing.T) {}) }
func TestPlatform(t *testing.T) { t.Skipf("needs %s", "linux/arm64") }
`,
			},
			code: 0,
			want: []string{
				`^ok +example\.test/m/a +[0-9.]+s +3 passed, 1 skipped$`,
				`^  example\.test/m/a +1  needs linux/arm64  \[TestPlatform\]$`,
				`^tests: 3 passed, 0 failed, 1 skipped$`,
			},
			dontWant: []string{`quiet`},
		},
		{
			name: "a failing test shows its output",
			files: map[string]string{
				"b/b_test.go": `package b
import "testing"
func TestGood(t *testing.T) { t.Log("hidden") }
func TestBad(t *testing.T) { t.Log("the evidence"); t.Fatal("boom") }
`,
			},
			code: 1,
			want: []string{
				`^--- FAIL: example\.test/m/b TestBad`,
				`the evidence`,
				`boom`,
				`^FAIL +example\.test/m/b .* 1 passed, 1 failed, 0 skipped$`,
				`^tests: 1 passed, 1 failed, 0 skipped$`,
			},
			dontWant: []string{`hidden`},
		},
		{
			name: "a TestMain that fails outside any test fails the run",
			files: map[string]string{
				"c/c_test.go": `package c
import ("fmt"; "os"; "testing")
func TestMain(m *testing.M) { fmt.Println("cannot start the control plane"); os.Exit(1) }
func TestNeverRuns(t *testing.T) {}
`,
			},
			code: 1,
			want: []string{`^FAIL +example\.test/m/c`, `cannot start the control plane`, `^tests: 0 passed, 0 failed, 0 skipped$`},
		},
		{
			name: "a build failure fails the run",
			files: map[string]string{
				"d/d_test.go": "package d\nimport \"testing\"\nfunc TestX(t *testing.T) { undefinedThing() }\n",
			},
			code: 1,
			want: []string{`undefined: undefinedThing`, `^FAIL +example\.test/m/d`},
		},
		{
			name:  "no test at all is a failure",
			files: map[string]string{"e/e.go": "package e\n"},
			code:  1,
			want:  []string{`^tests: FAIL: no test ran$`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stream := goTestJSON(t, tc.files)
			var out, errOut bytes.Buffer
			code := run(nil, bytes.NewReader(stream), &out, &errOut)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out.String(), errOut.String())
			}
			lines := strings.Split(out.String(), "\n")
			for _, w := range tc.want {
				re := regexp.MustCompile(w)
				found := false
				for _, l := range lines {
					if re.MatchString(l) {
						found = true
						break
					}
				}
				if !found {
					t.Errorf("no line matches %q in:\n%s", w, out.String())
				}
			}
			for _, w := range tc.dontWant {
				if regexp.MustCompile(w).MatchString(out.String()) {
					t.Errorf("output matches %q, want it hidden:\n%s", w, out.String())
				}
			}
		})
	}
}

func TestCutOffStreamFails(t *testing.T) {
	stream := `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestLong"}
{"Action":"output","Package":"p","Test":"TestLong","Output":"working...\n"}
`
	var out bytes.Buffer
	if code := run(nil, strings.NewReader(stream), &out, &out); code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out.String())
	}
	for _, w := range []string{"ended before the package finished", "(running: TestLong)", "working..."} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("missing %q in:\n%s", w, out.String())
		}
	}
}

func TestRecordAndTotal(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "runs.jsonl")
	runs := []struct{ label, stream string }{
		{"race", `{"Action":"run","Package":"p","Test":"A"}
{"Action":"pass","Package":"p","Test":"A"}
{"Action":"run","Package":"p","Test":"B"}
{"Action":"output","Package":"p","Test":"B","Output":"    x_test.go:9: no FMA on this CPU\n"}
{"Action":"skip","Package":"p","Test":"B"}
{"Action":"pass","Package":"p"}
`},
		{"plain", `{"Action":"run","Package":"q","Test":"C"}
{"Action":"pass","Package":"q","Test":"C"}
{"Action":"pass","Package":"q"}
`},
	}
	for _, r := range runs {
		var out bytes.Buffer
		if code := run([]string{"-label", r.label, "-record", rec}, strings.NewReader(r.stream), &out, &out); code != 0 {
			t.Fatalf("%s: exit %d\n%s", r.label, code, out.String())
		}
	}
	var out bytes.Buffer
	if code := run([]string{"-total", rec, "-label", "all tests"}, nil, &out, &out); code != 0 {
		t.Fatalf("total: exit %d\n%s", code, out.String())
	}
	for _, w := range []string{"race:", "plain:", "1  p: no FMA on this CPU", "all tests: 2 passed, 0 failed, 1 skipped"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("missing %q in:\n%s", w, out.String())
		}
	}
}
