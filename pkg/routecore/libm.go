package routecore

import "math"

// Dynamo's router is Rust: f64::exp and f64::tanh call the C library's exp and
// tanh, which on Linux is glibc. Go's math.Exp and math.Tanh are other
// algorithms — they differ from glibc in the last bit for about one input in
// six (exp) and one in three (tanh) — and Go's exp even differs between amd64
// and arm64. The preferred-taint multiplier exp(−tanh(Σw)) and the softmax
// weights feed costs, tie sets and probabilities, so routecore carries its own
// exp and tanh that reproduce glibc's results bit for bit, on every GOARCH.
//
// What is reproduced is glibc (verified against 2.36, whose exp, expm1 and tanh
// are the implementations since 2.28) on an x86-64 CPU with FMA, which is where
// Dynamo's router runs: glibc then selects the FMA builds of exp and expm1, in
// which the compiler fused some multiply-adds. The fused operations are written
// out with math.FMA, every other product is rounded on its own (explicit
// float64 conversions), so no Go compiler can fuse anything else:
//
//   - exp is the table-driven algorithm of glibc's exp (from Arm's Optimized
//     Routines): x = k·ln2/128 + r, exp(x) = 2^(k/128)·(1 + tail + r + …) with
//     a degree-5 polynomial; libmExpTable holds 2^(k/128);
//   - tanh is the fdlibm algorithm glibc uses: ±(1 − 2/(expm1(2|x|) + 2)) for
//     |x| ≥ 1, −expm1(−2|x|)/(expm1(−2|x|) + 2) below, ±1 from 22 on;
//   - expm1 is glibc's fdlibm-derived expm1, whose polynomial glibc evaluates
//     in a different order than fdlibm and Go's math.Expm1.
//
// TestLibmMatchesGlibcVectors checks both against vectors produced by glibc
// (testdata/libm), and TestLibmMatchesSystemLibm against the machine's own libm
// where it can call it.

// The exp algorithm's constants: N = 2^7 table entries, ln2/N split in two
// parts, the rounding shift 1.5·2^52 and the polynomial coefficients.
const (
	libmExpTableBits = 7
	libmExpN         = 1 << libmExpTableBits
	libmInvLn2N      = 0x1.71547652b82fep0 * libmExpN
	libmNegLn2HiN    = -0x1.62e42fefa0000p-8
	libmNegLn2LoN    = -0x1.cf79abc9e3b3ap-47
	libmShift        = 0x1.8p52
	libmExpC2        = 0x1.ffffffffffdbdp-2
	libmExpC3        = 0x1.555555555543cp-3
	libmExpC4        = 0x1.55555cf172b91p-5
	libmExpC5        = 0x1.1111167a4d017p-7
)

// libmTop12 is the sign and exponent bits of x.
func libmTop12(x float64) uint32 { return uint32(math.Float64bits(x) >> 52) }

// libmExp returns e^x exactly as glibc's exp does on a CPU with FMA.
func libmExp(x float64) float64 {
	abstop := libmTop12(x) & 0x7ff
	// |x| < 2^-54, |x| >= 512, infinities and NaN leave the main path.
	if abstop-0x3c9 >= 0x408-0x3c9 { // unsigned: also true below 0x3c9
		if abstop < 0x3c9 {
			return 1.0 + x // tiny x: 1 rounded the way 1 + x rounds
		}
		if abstop >= 0x409 { // |x| >= 1024
			switch {
			case x == math.Inf(-1):
				return 0
			case abstop >= 0x7ff: // +Inf or NaN
				return 1.0 + x
			case x < 0:
				return 0 // underflow
			default:
				return math.Inf(1) // overflow
			}
		}
		abstop = 0 // 512 <= |x| < 1024: the result's scale needs care
	}
	// k = round(x·N/ln2) through the shift, r = x − k·ln2/N in two parts.
	kd := math.FMA(libmInvLn2N, x, libmShift)
	ki := math.Float64bits(kd)
	kd -= libmShift
	r := math.FMA(kd, libmNegLn2LoN, math.FMA(kd, libmNegLn2HiN, x))
	idx := 2 * (ki % libmExpN)
	top := ki << (52 - libmExpTableBits)
	tail := math.Float64frombits(libmExpTable[idx])
	sbits := libmExpTable[idx+1] + top // 2^(k/N) as scale·(1 + tail)
	r2 := float64(r * r)
	tmp := math.FMA(float64(r2*r2), math.FMA(r, libmExpC5, libmExpC4),
		math.FMA(r2, math.FMA(r, libmExpC3, libmExpC2), tail+r))
	if abstop == 0 {
		return libmExpSpecial(tmp, sbits, ki)
	}
	scale := math.Float64frombits(sbits)
	return math.FMA(scale, tmp, scale)
}

// libmExpSpecial finishes exp for 512 <= |x| < 1024, where the scale 2^(k/N)
// may not be a normal double: the exponent is adjusted, the result computed,
// and scaled back, rounding once more carefully when it is subnormal.
func libmExpSpecial(tmp float64, sbits, ki uint64) float64 {
	if ki&0x80000000 == 0 { // k > 0: the scale's exponent may have overflowed
		sbits -= 1009 << 52
		scale := math.Float64frombits(sbits)
		return 0x1p1009 * math.FMA(scale, tmp, scale)
	}
	// k < 0. Here glibc's compiler did not fuse: scale·tmp has two uses.
	sbits += 1022 << 52
	scale := math.Float64frombits(sbits)
	st := float64(scale * tmp)
	y := scale + st
	if y < 1.0 {
		// Round y to the subnormal precision before scaling it down, so that
		// the result is not rounded twice.
		lo := scale - y + st
		hi := 1.0 + y
		lo = 1.0 - hi + y + lo
		y = (hi + lo) - 1.0
		if y == 0 {
			y = 0 // never −0
		}
	}
	return 0x1p-1022 * y
}

// The expm1 constants: the overflow threshold, ln2 in two parts (the high part
// has trailing zeros so that k·ln2Hi is exact), 1/ln2 and the scaled
// polynomial coefficients Q1…Q5.
const (
	libmExpm1Overflow = 7.09782712893383973096e+02
	libmLn2Hi         = 6.93147180369123816490e-01
	libmLn2Lo         = 1.90821492927058770002e-10
	libmInvLn2        = 1.44269504088896338700e+00
	libmQ1            = -3.33333333333331316428e-02
	libmQ2            = 1.58730158725481460165e-03
	libmQ3            = -7.93650757867487942473e-05
	libmQ4            = 4.00821782732936239552e-06
	libmQ5            = -2.01099218183624371326e-07
)

// libmHi is the high 32 bits of x; libmWithHi replaces them.
func libmHi(x float64) uint32 { return uint32(math.Float64bits(x) >> 32) }

func libmWithHi(x float64, hi uint32) float64 {
	return math.Float64frombits(uint64(hi)<<32 | math.Float64bits(x)&0xffffffff)
}

// libmExpm1 returns e^x − 1 exactly as glibc's expm1 does on a CPU with FMA.
func libmExpm1(x float64) float64 {
	hx := libmHi(x)
	neg := hx&0x80000000 != 0
	hx &= 0x7fffffff
	if hx >= 0x4043687a { // |x| >= 56·ln2
		if hx >= 0x40862e42 { // |x| >= 709.78…
			if hx >= 0x7ff00000 {
				switch {
				case math.IsNaN(x):
					return x + x
				case neg:
					return -1
				default:
					return x
				}
			}
			if x > libmExpm1Overflow {
				return math.Inf(1)
			}
		}
		if neg {
			return -1 // e^x is below half an ulp of 1
		}
	}
	// Reduce: x = k·ln2 + (hi − lo), with c the rounding error of hi − lo.
	var c float64
	var k int32
	switch {
	case hx > 0x3fd62e42: // |x| > ln2/2
		var hi, lo float64
		if hx < 0x3ff0a2b2 { // |x| < 1.5·ln2: k = ±1
			if neg {
				hi, lo, k = x+libmLn2Hi, -libmLn2Lo, -1
			} else {
				hi, lo, k = x-libmLn2Hi, libmLn2Lo, 1
			}
			x = hi - lo
			c = (hi - x) - lo
		} else {
			half := 0.5
			if neg {
				half = -0.5
			}
			k = int32(math.FMA(libmInvLn2, x, half)) // truncation, as C's conversion
			t := float64(k)
			hi = math.FMA(-t, libmLn2Hi, x)
			// glibc's compiler fused t·ln2Lo into both of its uses.
			x = math.FMA(-t, libmLn2Lo, hi)
			c = math.FMA(-t, libmLn2Lo, hi-x)
		}
	case hx < 0x3c900000: // |x| < 2^-54
		return x
	}
	// x is now in [−ln2/2, ln2/2].
	hfx := 0.5 * x
	hxs := float64(x * hfx)
	r1a := math.FMA(hxs, libmQ1, 1)
	h2 := float64(hxs * hxs)
	r2 := math.FMA(hxs, libmQ3, libmQ2)
	h4 := float64(h2 * h2)
	r3 := math.FMA(hxs, libmQ5, libmQ4)
	r1 := math.FMA(h4, r3, math.FMA(h2, r2, r1a))
	t := math.FMA(-r1, hfx, 3.0)
	e := float64(hxs * ((r1 - t) / math.FMA(-x, t, 6.0)))
	if k == 0 {
		return x - math.FMA(x, e, -hxs)
	}
	e = math.FMA(x, e-c, -c)
	e -= hxs
	switch {
	case k == -1:
		return math.FMA(0.5, x-e, -0.5)
	case k == 1 && x < -0.25:
		return -2.0 * (e - (x + 0.5))
	case k == 1:
		return math.FMA(2.0, x-e, 1)
	case k <= -2 || k > 56: // e^x − 1 ≈ e^x
		y := 1 - (e - x)
		y = libmWithHi(y, libmHi(y)+uint32(k)<<20) // y·2^k
		return y - 1
	case k < 20:
		t := math.Float64frombits(uint64(0x3ff00000-(0x200000>>uint(k))) << 32) // 1 − 2^-k
		y := t - (e - x)
		return libmWithHi(y, libmHi(y)+uint32(k)<<20)
	default:
		t := math.Float64frombits(uint64(0x3ff-k) << 52) // 2^-k
		y := x - (e + t)
		y += 1
		return libmWithHi(y, libmHi(y)+uint32(k)<<20)
	}
}

// libmTanh returns tanh(x) exactly as glibc's tanh does on a CPU with FMA
// (tanh itself is not an FMA build; the expm1 it calls is).
func libmTanh(x float64) float64 {
	hx := libmHi(x)
	ix := hx & 0x7fffffff
	if ix >= 0x7ff00000 { // ±Inf or NaN
		if int32(hx) >= 0 {
			return 1/x + 1
		}
		return 1/x - 1
	}
	var z float64
	switch {
	case ix >= 0x40360000: // |x| >= 22
		z = 1
	case x == 0:
		return x // ±0
	case ix < 0x3c800000: // |x| < 2^-55
		return x * (1 + x)
	case ix >= 0x3ff00000: // |x| >= 1
		t := libmExpm1(2 * math.Abs(x))
		z = 1 - 2/(t+2)
	default:
		t := libmExpm1(-2 * math.Abs(x))
		z = -t / (t + 2)
	}
	if int32(hx) >= 0 {
		return z
	}
	return -z
}
