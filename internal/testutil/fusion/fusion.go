package fusion

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Arches are the architectures Check compiles for: arm64, which the release
// ships, and s390x, whose compiler fuses by other rules (a second look at the
// same source).
var Arches = []string{"arm64", "s390x"}

// fusedOp matches the floating-point fused multiply-add instructions in Go's
// assembly listing: arm64 FMADDD/FMSUBD/FNMADDD/FNMSUBD and single-precision
// forms, s390x FMADD/FMSUB/FNMADD/FNMSUB and their S forms (not the integer
// MADD/MSUB).
var fusedOp = regexp.MustCompile(`^FN?M(ADD|SUB)[DS]?$`)

// asmLine matches an instruction line of `go build -gcflags=-S`:
// "\t0x0034 00052 (/path/file.go:120)\tFMADDD\tF3, F2, F1, F1".
var asmLine = regexp.MustCompile(`^\s+0x[0-9a-f]+ \d+ \(([^)]+\.go):(\d+)\)\s+(\S+)`)

// Site is one source line of one function compiled to fused instructions.
type Site struct {
	Func, File string
	Line       int
	Count      int
}

// Sites compiles the package in dir (and its tests when tests is set) for
// goarch and lists where the compiler emitted fused multiply-adds, per
// function and source line. Only the package itself is listed (-gcflags
// applies to the packages named), its dependencies are compiled as usual.
func Sites(t testing.TB, dir, goarch string, tests bool) []Site {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to compile the package for %s: %v", goarch, err)
	}
	args := []string{"build", "-gcflags=-S", "-o", os.DevNull, "."}
	if tests {
		args = []string{"test", "-c", "-gcflags=-S", "-o", os.DevNull, "."}
	}
	cmd := exec.Command(gobin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s for %s: %v\n%s", strings.Join(args, " "), goarch, err, out)
	}
	var sites []Site
	index := map[string]int{}
	fn := ""
	for _, l := range strings.Split(string(out), "\n") {
		if i := strings.Index(l, " STEXT"); i > 0 && !strings.HasPrefix(l, "\t") {
			fn = l[:i]
			continue
		}
		m := asmLine.FindStringSubmatch(l)
		if len(m) != 4 || !fusedOp.MatchString(m[3]) {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		key := fmt.Sprintf("%s|%s|%d", fn, m[1], n)
		if i, ok := index[key]; ok {
			sites[i].Count++
			continue
		}
		index[key] = len(sites)
		sites = append(sites, Site{Func: fn, File: m[1], Line: n, Count: 1})
	}
	if !strings.Contains(string(out), " STEXT") {
		t.Fatalf("go %s for %s printed no assembly listing:\n%.2000s", strings.Join(args, " "), goarch, out)
	}
	return sites
}

// Check compiles the package in dir for each of arches (Arches when none is
// given; its tests too when tests is set) and fails t on every fused
// multiply-add on a source line that does not call math.FMA at least as many
// times. It returns how many fused instructions the source asks for
// explicitly, per architecture and pass.
func Check(t testing.TB, dir string, tests bool, arches ...string) map[string]int {
	t.Helper()
	src := map[string][]string{}
	sourceLine := func(file string, n int) string {
		lines, ok := src[file]
		if !ok {
			path := file
			if !filepath.IsAbs(path) {
				// Built with -trimpath (make test sets it in GOFLAGS): the
				// listing names module/pkg/…/file.go; the files are in dir.
				path = filepath.Join(dir, filepath.Base(path))
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read %s: %v", file, err)
			}
			lines = strings.Split(string(data), "\n")
			src[file] = lines
		}
		if n < 1 || n > len(lines) {
			return ""
		}
		return lines[n-1]
	}
	explicit := map[string]int{}
	passes := []bool{false}
	if tests {
		passes = append(passes, true)
	}
	if len(arches) == 0 {
		arches = Arches
	}
	for _, goarch := range arches {
		for _, withTests := range passes {
			key := goarch
			if withTests {
				key += " (tests)"
			}
			explicit[key] = 0
			for _, s := range Sites(t, dir, goarch, withTests) {
				line := sourceLine(s.File, s.Line)
				if calls := strings.Count(line, "math.FMA("); calls > 0 && s.Count <= calls {
					explicit[key] += s.Count
					continue
				}
				t.Errorf("%s: %s:%d in %s has %d fused multiply-add(s) the source does not ask for; "+
					"round the product first, float64(a*b) + c:\n\t%s",
					key, filepath.Base(s.File), s.Line, s.Func, s.Count, strings.TrimSpace(line))
			}
		}
	}
	return explicit
}
