package routecore

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ai-dynamo/kubectl-dynamo/internal/testutil/hermetic"
)

// libmVector is one line of testdata/libm: an input and glibc's exp, tanh and
// expm1 of it.
type libmVector struct {
	x, exp, tanh, expm1 float64
}

// parseLibmVectors reads lines of four hex bit patterns, skipping # comments.
func parseLibmVectors(t *testing.T, name string, data []byte) []libmVector {
	t.Helper()
	var vs []libmVector
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("%s:%d: want 4 fields, got %q", name, n, line)
		}
		var u [4]float64
		for i, s := range f {
			b, err := strconv.ParseUint(s, 16, 64)
			if err != nil {
				t.Fatalf("%s:%d: %v", name, n, err)
			}
			u[i] = math.Float64frombits(b)
		}
		vs = append(vs, libmVector{u[0], u[1], u[2], u[3]})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return vs
}

// libmSame compares bit patterns; every NaN equals every NaN (glibc and Go may
// differ in the payload, and no cost or probability is ever NaN).
func libmSame(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

// libmMismatches checks every vector and returns a description of the first few
// differences and how many there were, per function.
func libmMismatches(vs []libmVector) (report []string, exp, tanh, expm1 int) {
	check := func(name string, x, got, want float64, n *int) {
		if libmSame(got, want) {
			return
		}
		*n++
		if len(report) < 10 {
			report = append(report, fmt.Sprintf("%s(%v [%016x]) = %v [%016x], glibc %v [%016x]",
				name, x, math.Float64bits(x), got, math.Float64bits(got), want, math.Float64bits(want)))
		}
	}
	for _, v := range vs {
		check("exp", v.x, libmExp(v.x), v.exp, &exp)
		check("tanh", v.x, libmTanh(v.x), v.tanh, &tanh)
		check("expm1", v.x, libmExpm1(v.x), v.expm1, &expm1)
	}
	return report, exp, tanh, expm1
}

// TestLibmMatchesGlibcVectors checks exp, tanh and expm1 bit for bit against
// the vectors glibc produced (hack/libm/glibc-vectors.py), and that the vectors
// tell glibc apart from Go's math package, which is why the port exists.
func TestLibmMatchesGlibcVectors(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "libm", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no vectors under testdata/libm (%v)", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			vs := parseLibmVectors(t, file, data)
			if len(vs) < 1000 {
				t.Fatalf("only %d vectors", len(vs))
			}
			report, e, th, em := libmMismatches(vs)
			if e+th+em > 0 {
				t.Errorf("%d vectors: %d exp, %d tanh and %d expm1 results differ from glibc:\n%s",
					len(vs), e, th, em, strings.Join(report, "\n"))
			}
			var goExp, goTanh int
			for _, v := range vs {
				if !libmSame(math.Exp(v.x), v.exp) {
					goExp++
				}
				if !libmSame(math.Tanh(v.x), v.tanh) {
					goTanh++
				}
			}
			t.Logf("%d vectors; Go's math.Exp differs from glibc on %d, math.Tanh on %d", len(vs), goExp, goTanh)
			if goExp == 0 || goTanh == 0 {
				t.Errorf("the vectors do not tell glibc from Go's math package (exp %d, tanh %d differences)", goExp, goTanh)
			}
		})
	}
}

// libmGlibcVerified lists the glibc versions whose exp, expm1 and tanh this
// port was checked against on an x86-64 CPU with FMA; on those,
// TestLibmMatchesSystemLibm requires every result to match.
var libmGlibcVerified = map[string]bool{"2.36": true}

// TestLibmMatchesSystemLibm compares the port with the machine's own C library
// (through python3, whose math functions call it) on fresh random inputs each
// run. It needs linux/amd64, glibc, python3 and a CPU with FMA; elsewhere it
// skips, and the committed vectors (TestLibmMatchesGlibcVectors) still run. On a
// glibc version not in libmGlibcVerified differences are logged, not failed:
// they say that glibc changed, not that the port did.
func TestLibmMatchesSystemLibm(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the reference is glibc on linux/amd64; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	cpu, err := os.ReadFile("/proc/cpuinfo")
	if err != nil || !bytes.Contains(cpu, []byte(" fma ")) {
		t.Skip("the CPU has no FMA: glibc would select its non-FMA builds, which round differently")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: it is how the test calls the C library")
	}
	out, err := exec.Command(py, "-c", "import platform; print(' '.join(platform.libc_ver()))").Output()
	if err != nil {
		t.Skipf("python3 does not run: %v", err)
	}
	libc := strings.Fields(string(out))
	if len(libc) != 2 || libc[0] != "glibc" {
		t.Skipf("the C library is %q, not glibc", strings.TrimSpace(string(out)))
	}
	seed := time.Now().UnixNano()
	n := hermetic.Size(20_000, 100_000, 2_000_000)
	script := filepath.Join("..", "..", "hack", "libm", "glibc-vectors.py")
	data, err := exec.Command(py, script, "vectors", strconv.Itoa(n), strconv.FormatInt(seed, 10)).Output()
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	vs := parseLibmVectors(t, "glibc-vectors.py output", data)
	report, e, th, em := libmMismatches(vs)
	t.Logf("glibc %s, seed %d: %d inputs, %d exp, %d tanh and %d expm1 differences", libc[1], seed, len(vs), e, th, em)
	if e+th+em == 0 {
		return
	}
	msg := fmt.Sprintf("glibc %s differs (reproduce: python3 hack/libm/glibc-vectors.py vectors %d %d):\n%s",
		libc[1], n, seed, strings.Join(report, "\n"))
	if libmGlibcVerified[libc[1]] {
		t.Error(msg)
	} else {
		t.Log("not a verified glibc version; " + msg)
	}
}

// TestLibmEdgeCases pins the special values and range boundaries.
func TestLibmEdgeCases(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	negZero := math.Copysign(0, -1)
	cases := []struct {
		name string
		f    func(float64) float64
		x    float64
		want float64
	}{
		{"exp(0)", libmExp, 0, 1},
		{"exp(-0)", libmExp, negZero, 1},
		{"exp(+inf)", libmExp, inf, inf},
		{"exp(-inf)", libmExp, -inf, 0},
		{"exp(NaN)", libmExp, nan, nan},
		{"exp(1)", libmExp, 1, math.E},
		{"exp overflows", libmExp, 709.7827128933841, inf},
		{"exp largest finite", libmExp, 709.782712893384, math.Float64frombits(0x7fefffffffffff2a)},
		{"exp smallest subnormal", libmExp, -745.1332191019411, math.Float64frombits(1)},
		{"exp underflows", libmExp, -745.1332191019412, 0},
		{"exp(-1024)", libmExp, -1024, 0},
		{"exp(1024)", libmExp, 1024, inf},
		{"exp tiny", libmExp, 0x1p-60, 1},
		{"tanh(0)", libmTanh, 0, 0},
		{"tanh(-0)", libmTanh, negZero, negZero},
		{"tanh(+inf)", libmTanh, inf, 1},
		{"tanh(-inf)", libmTanh, -inf, -1},
		{"tanh(NaN)", libmTanh, nan, nan},
		{"tanh(22)", libmTanh, 22, 1},
		{"tanh(-30)", libmTanh, -30, -1},
		{"tanh tiny", libmTanh, 0x1p-60, 0x1p-60},
		{"expm1(0)", libmExpm1, 0, 0},
		{"expm1(-0)", libmExpm1, negZero, negZero},
		{"expm1(-inf)", libmExpm1, -inf, -1},
		{"expm1(+inf)", libmExpm1, inf, inf},
		{"expm1(-40)", libmExpm1, -40, -1},
		{"expm1 overflows", libmExpm1, 710, inf},
		{"expm1 tiny", libmExpm1, 0x1p-60, 0x1p-60},
	}
	for _, c := range cases {
		if got := c.f(c.x); !libmSame(got, c.want) {
			t.Errorf("%s = %v [%016x], want %v [%016x]", c.name, got, math.Float64bits(got), c.want, math.Float64bits(c.want))
		}
	}
}

// FuzzLibm checks properties that hold for any double: each function is
// within a few ulps of Go's (an independent implementation), tanh is odd and
// bounded by 1, exp is never negative, and special values pass through.
func FuzzLibm(f *testing.F) {
	for _, x := range []float64{0, 1, -1, 0.5, 22, -745.13, 709.78, 1e-300, math.Inf(1), math.NaN(), -0.85, 37.5} {
		f.Add(math.Float64bits(x))
	}
	f.Fuzz(func(t *testing.T, u uint64) {
		x := math.Float64frombits(u)
		e, th, em := libmExp(x), libmTanh(x), libmExpm1(x)
		if math.IsNaN(x) {
			if !math.IsNaN(e) || !math.IsNaN(th) || !math.IsNaN(em) {
				t.Fatalf("NaN in, got exp %v tanh %v expm1 %v", e, th, em)
			}
			return
		}
		if e < 0 || math.IsNaN(e) {
			t.Fatalf("exp(%v) = %v", x, e)
		}
		if math.Abs(th) > 1 || math.IsNaN(th) {
			t.Fatalf("tanh(%v) = %v", x, th)
		}
		if n := libmTanh(-x); !libmSame(n, -th) {
			t.Fatalf("tanh(-%v) = %v, want %v", x, n, -th)
		}
		for _, c := range []struct {
			name     string
			got, ref float64
			ulps     uint64
		}{{"exp", e, math.Exp(x), 2}, {"tanh", th, math.Tanh(x), 3}, {"expm1", em, math.Expm1(x), 3}} {
			if c.name == "exp" && math.IsInf(c.ref, 1) && x < libmExpm1Overflow {
				continue // Go's amd64 math.Exp overflows early (exp(709.78) = +Inf); glibc and this port do not
			}
			if d := libmUlps(c.got, c.ref); d > c.ulps {
				t.Fatalf("%s(%v [%016x]) = %v, Go's %v: %d ulps apart", c.name, x, u, c.got, c.ref, d)
			}
		}
	})
}

// libmUlps is how many doubles lie between a and b (same-signed or zero).
func libmUlps(a, b float64) uint64 {
	if libmSame(a, b) || a == b {
		return 0
	}
	if math.Signbit(a) != math.Signbit(b) {
		return libmUlps(math.Abs(a), 0) + libmUlps(math.Abs(b), 0)
	}
	ua, ub := math.Float64bits(math.Abs(a)), math.Float64bits(math.Abs(b))
	if ua > ub {
		return ua - ub
	}
	return ub - ua
}

// TestLibmExpTable recomputes libmExpTable from 2^(k/128) in 300-bit arithmetic
// (2^(1/128) by seven square roots of 2) and compares it with libm_table.go;
// UPDATE_GOLDEN=1 rewrites the file.
func TestLibmExpTable(t *testing.T) {
	const prec = 300
	root := new(big.Float).SetPrec(prec).SetInt64(2)
	for range libmExpTableBits {
		root.Sqrt(root)
	}
	one := new(big.Float).SetPrec(prec).SetInt64(1)
	p := new(big.Float).SetPrec(prec).SetInt64(1) // 2^(k/128)
	var table [2 * libmExpN]uint64
	for k := range libmExpN {
		scale, _ := p.Float64() // nearest
		tail := new(big.Float).SetPrec(prec).Quo(p, new(big.Float).SetPrec(prec).SetFloat64(scale))
		tf, _ := tail.Sub(tail, one).Float64()
		table[2*k] = math.Float64bits(tf)
		table[2*k+1] = math.Float64bits(scale) - uint64(k)<<(52-libmExpTableBits)
		p.Mul(p, root)
	}
	if table != libmExpTable {
		for i := range table {
			if table[i] != libmExpTable[i] {
				t.Errorf("libmExpTable[%d] = %#016x, want %#016x", i, libmExpTable[i], table[i])
			}
		}
	}
	src, err := os.ReadFile("libm_table.go")
	if err != nil {
		t.Fatal(err)
	}
	const open = "var libmExpTable = [2 * libmExpN]uint64{\n"
	i := bytes.Index(src, []byte(open))
	if i < 0 {
		t.Fatalf("libm_table.go has no %q", open)
	}
	var b bytes.Buffer
	b.Write(src[:i+len(open)])
	for i := 0; i < len(table); i += 4 {
		fmt.Fprintf(&b, "\t%#016x, %#016x, %#016x, %#016x,\n", table[i], table[i+1], table[i+2], table[i+3])
	}
	b.WriteString("}\n")
	if bytes.Equal(b.Bytes(), src) {
		return
	}
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile("libm_table.go", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Error("libm_table.go is not what the table computes to; run UPDATE_GOLDEN=1 go test ./pkg/routecore -run TestLibmExpTable")
}

func BenchmarkLibm(b *testing.B) {
	xs := make([]float64, 1024)
	for i := range xs {
		xs[i] = -float64(i) / 1024 // softmax exponents at T = 1
	}
	var sink float64
	for _, c := range []struct {
		name string
		f    func(float64) float64
	}{{"exp", libmExp}, {"math.Exp", math.Exp}, {"tanh", libmTanh}, {"math.Tanh", math.Tanh}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				for _, x := range xs {
					sink += c.f(x)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(xs)), "ns/call")
		})
	}
	_ = sink
}
