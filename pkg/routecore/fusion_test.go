package routecore

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Rust never fuses a multiplication and an addition into one FMA instruction
// (one rounding instead of two); the Go spec allows it, and Go's compilers do it
// on arm64, ppc64le, s390x, riscv64 and loong64 — across statements too — unless
// a product is converted explicitly (float64(a*b)). kubectl-dynamo ships arm64
// binaries (Apple silicon, Graviton, Grace), where a fused cost term would
// differ from the router's in the last bit and could change a tie set or a
// pick. These tests keep every product in routecore rounded on its own.

// fusedOp matches the floating-point fused multiply-add instructions in Go's
// assembly listing: arm64 FMADDD/FMSUBD/FNMADDD/FNMSUBD and single-precision
// forms, s390x FMADD/FMSUB/FNMADD/FNMSUB and their S forms (not the integer
// MADD/MSUB).
var fusedOp = regexp.MustCompile(`^FN?M(ADD|SUB)[DS]?$`)

// asmLine matches an instruction line of `go build -gcflags=-S`:
// "\t0x0034 00052 (/path/file.go:120)\tFMADDD\tF3, F2, F1, F1".
var asmLine = regexp.MustCompile(`^\s+0x[0-9a-f]+ \d+ \(([^)]+\.go):(\d+)\)\s+(\S+)`)

// fusedSite is one source line of one function compiled to fused instructions.
type fusedSite struct {
	fn, file string
	line     int
	count    int
}

// fusedSites compiles the package in dir for goarch and lists where the
// compiler emitted fused multiply-adds, per function and source line.
func fusedSites(t *testing.T, dir, goarch string, tests bool) []fusedSite {
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
	var sites []fusedSite
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
			sites[i].count++
			continue
		}
		index[key] = len(sites)
		sites = append(sites, fusedSite{fn: fn, file: m[1], line: n, count: 1})
	}
	if !strings.Contains(string(out), " STEXT") {
		t.Fatalf("go %s for %s printed no assembly listing:\n%.2000s", strings.Join(args, " "), goarch, out)
	}
	return sites
}

// TestNoImplicitFusedMultiplyAdd compiles routecore (and its tests, whose
// reference implementations must round like the router too) for arm64 and
// s390x and fails on any fused multiply-add the compiler chose by itself. The
// only fused instructions allowed are explicit math.FMA calls (the libm port
// reproduces glibc's FMA builds), at most one per call on the line.
func TestNoImplicitFusedMultiplyAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (the arm64 run under qemu): cross-compiles the package twice per architecture; the native run does it")
	}
	src := map[string][]string{}
	sourceLine := func(file string, n int) string {
		lines, ok := src[file]
		if !ok {
			path := file
			if !filepath.IsAbs(path) {
				// Built with -trimpath (make test sets it in GOFLAGS): the
				// listing names module/pkg/routecore/file.go; the files are here.
				path = filepath.Base(path)
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
	for _, goarch := range []string{"arm64", "s390x"} {
		for _, tests := range []bool{false, true} {
			explicit := 0
			for _, s := range fusedSites(t, ".", goarch, tests) {
				line := sourceLine(s.file, s.line)
				if calls := strings.Count(line, "math.FMA("); calls > 0 && s.count <= calls {
					explicit += s.count
					continue
				}
				t.Errorf("%s (tests %v): %s:%d in %s has %d fused multiply-add(s) the source does not ask for; "+
					"round the product first, float64(a*b) + c:\n\t%s",
					goarch, tests, filepath.Base(s.file), s.line, s.fn, s.count, strings.TrimSpace(line))
			}
			if explicit == 0 {
				t.Errorf("%s: no math.FMA found in the listing; the scan no longer sees fused instructions", goarch)
			}
		}
	}
}

// TestFusedSitesSeesFusion is the check of the check: a plain a*b + c must be
// reported on arm64, and float64(a*b) + c must not.
func TestFusedSitesSeesFusion(t *testing.T) {
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
	write("f.go", "package fusecheck\n\n"+
		"func Fused(a, b, c float64) float64 { return a*b + c }\n\n"+
		"func Rounded(a, b, c float64) float64 { return float64(a*b) + c }\n")
	sites := fusedSites(t, dir, "arm64", false)
	var fns []string
	for _, s := range sites {
		fns = append(fns, s.fn)
	}
	if len(sites) != 1 || !strings.HasSuffix(sites[0].fn, ".Fused") || sites[0].line != 3 {
		t.Fatalf("want one fused site in Fused at f.go:3, got %v (%+v)", fns, sites)
	}
}

// fusionCase is an input on which fusing one multiply-add changes the result:
// each case checks that the vector discriminates (the fused value differs)
// and that routecore returns the separately rounded value, Rust's.
type fusionCase struct {
	name           string
	got            func() float64
	rounded, fused float64
}

// TestCostArithmeticIsNeverFused runs the cost formula, the decay factor and
// the softmax on inputs where a fused multiply-add would round differently.
// On amd64 Go never fuses; on arm64 (make test-arm64) these failed before
// every product was rounded explicitly.
func TestCostArithmeticIsNeverFused(t *testing.T) {
	b, err := ProfileLatest.Behavior()
	if err != nil {
		t.Fatal(err)
	}
	w := ResolvedWeights{OverlapScoreCredit: 0.7, OverlapScoreCreditDecay: 0.3, PrefillLoadScale: 1.1,
		HostCacheHitWeight: 0.3, DecodeActiveRequestWeight: 0.1, TrackPrefillTokens: true}
	in := CostInput{ISL: 1000, BlockSize: 16, RequestBlocks: 63, HasLoad: true,
		ActivePrefillTokens: 946, ActiveDecodeBlocks: 5, ActiveRequests: 3, DeviceBlocks: 12, HostBlocks: 3}
	terms := CandidateLogit(b, w, in)

	// The formula with every product rounded, as Rust computes it.
	norm := float64(946) / 16 / 63
	decayRounded := 1 / (1 + float64(0.3*norm))
	effCredit := float64(0.7 * decayRounded)
	creditRounded := float64(effCredit*12) + float64(0.3*3)
	raw := float64(946+1000) / 16
	reqCost := float64(0.1 * 3)
	logitRounded := float64(1.1*(raw-creditRounded)) + 5 + reqCost

	costs := []float64{0.1, 0.74, 1.3, 2.9}
	probs, err := SoftmaxProbabilities(costs, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	// softmaxWeights' exponent for cost 0.74, rounded and with lo·scale fused
	// into the subtraction (what arm64 compiled before).
	lo, hi, temp := 0.1, 2.9, 0.9
	scale := -1.0 / ((hi - lo) * temp)
	expRounded := float64(0.74*scale) - float64(lo*scale)
	expFused := math.FMA(-lo, scale, float64(0.74*scale))

	cases := []fusionCase{
		{"decay factor", func() float64 { return terms.DecayFactor }, decayRounded, 1 / math.FMA(0.3, norm, 1)},
		{"credit blocks", func() float64 { return terms.CreditBlocks },
			creditRounded, math.FMA(effCredit, 12, float64(0.3*3))},
		{"logit", func() float64 { return terms.Logit }, logitRounded, math.FMA(1.1, raw-creditRounded, 5) + reqCost},
		{"softmax exponent", func() float64 {
			p := make([]float64, len(costs))
			softmaxWeights(p, costs, lo, hi, len(costs), temp)
			return p[1]
		}, libmExp(expRounded), libmExp(expFused)},
	}
	for _, c := range cases {
		if c.rounded == c.fused {
			t.Errorf("%s: the vector does not discriminate (fused and rounded are both %v)", c.name, c.rounded)
			continue
		}
		if got := c.got(); got != c.rounded {
			t.Errorf("%s = %v [%016x], want the separately rounded %v [%016x] (fused would give %v)",
				c.name, got, math.Float64bits(got), c.rounded, math.Float64bits(c.rounded), c.fused)
		}
	}
	if sum := probs[0] + probs[1] + probs[2] + probs[3]; math.Abs(sum-1) > 1e-15 {
		t.Errorf("probabilities sum to %v", sum)
	}
}
