#!/usr/bin/env python3
"""Prints exp, tanh and expm1 of chosen inputs as computed by this machine's C
library, for pkg/routecore's libm port (testdata/libm/*.txt and
TestLibmMatchesSystemLibm).

CPython's math.exp, math.tanh and math.expm1 call the C library's functions
directly, so on Linux with glibc this is glibc's answer, from the build that
glibc selects for this CPU (the FMA builds on an x86-64 CPU with FMA).

Usage:
  glibc-vectors.py vectors COUNT SEED   COUNT inputs from the ranges the router
                                        uses and from all doubles, plus the edge
                                        cases, with a header naming the libc
  glibc-vectors.py stdin                one input per line (hex bits) on stdin

Each output line is: x exp(x) tanh(x) expm1(x), as 16-digit hex bit patterns.
"""
import math
import platform
import random
import struct
import sys


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def double(u):
    return struct.unpack("<d", struct.pack("<Q", u))[0]


def call(f, x):
    try:
        return f(x)
    except OverflowError:  # CPython raises where the C function returns inf
        return math.inf
    except ValueError:
        return math.nan


def line(x):
    return "%016x %016x %016x %016x" % (bits(x), bits(call(math.exp, x)),
                                        bits(call(math.tanh, x)), bits(call(math.expm1, x)))


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def edge_cases():
    xs = [0.0, -0.0, math.inf, -math.inf, 1.0, -1.0, 0.5, -0.5, 22.0, -22.0,
          709.782712893384, 709.7827128933841, -708.3964185322641, -745.1332191019411,
          -745.1332191019412, 512.0, -512.0, 1024.0, -1024.0, 2.0 ** -54, -2.0 ** -54,
          2.0 ** -55, 2.0 ** -1074, -2.0 ** -1074, 2.0 ** -1022, 1.7976931348623157e308,
          -1.7976931348623157e308, 0.34657359027997264, 1.0397207708399179,
          38.816242111356935, -38.816242111356935, 56 * math.log(2), -56 * math.log(2)]
    for x in list(xs):
        xs += [math.nextafter(x, math.inf), math.nextafter(x, -math.inf)]
    xs += [double(0x7ff8000000000000), double(0x7ff0000000000001), double(0xfff8000000000000)]
    # Preferred-taint weights are f32 widened to f64 and summed.
    for w in (0.25, 0.5, 0.75, 0.85, 1.0, 1.5, 2.0, 3.0, -0.25, -0.5, -1.0, 0.1, 0.3):
        s = float(f32(w))
        xs += [s, -s, -math.tanh(s), -math.tanh(-s)]
    return xs


def chosen(count, seed):
    rnd = random.Random(seed)
    gens = [
        lambda: rnd.uniform(-1, 0),            # softmax weights at T >= 1
        lambda: rnd.uniform(-100, 0),          # softmax weights at small T
        lambda: -math.tanh(rnd.uniform(-6, 6)),  # the multiplier's exponent
        lambda: sum(f32(rnd.uniform(-2, 2)) for _ in range(rnd.randint(1, 4))),  # weight sums
        lambda: rnd.uniform(-3, 3),
        lambda: rnd.uniform(-745.2, -700),     # exp's subnormal results
        lambda: rnd.uniform(500, 709.8),       # exp's large results
        lambda: double(rnd.getrandbits(64)),   # any double
        lambda: rnd.uniform(-1e-6, 1e-6) * rnd.choice([1, 1e-5, 1e-10]),
        lambda: rnd.uniform(-45, 45),
    ]
    return [gens[i % len(gens)]() for i in range(count)]


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "stdin":
        out = [line(double(int(tok, 16))) for tok in sys.stdin.read().split()]
        sys.stdout.write("\n".join(out) + ("\n" if out else ""))
        return
    if len(sys.argv) != 4 or sys.argv[1] != "vectors":
        sys.exit(__doc__)
    count, seed = int(sys.argv[2]), int(sys.argv[3])
    libc = " ".join(platform.libc_ver())
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for l in f:
                if l.startswith("flags"):
                    have = set(l.split(":", 1)[1].split())
                    flags = " ".join(x for x in ("fma", "avx2") if x in have)
                    break
    except OSError:
        pass
    print("# exp, tanh and expm1 from %s on %s (cpu flags: %s), python %s" % (
        libc, platform.machine(), flags or "none", platform.python_version()))
    print("# written by hack/libm/glibc-vectors.py vectors %d %d" % (count, seed))
    print("# x exp(x) tanh(x) expm1(x), as IEEE 754 bit patterns in hex")
    for x in edge_cases() + chosen(count, seed):
        print(line(x))


if __name__ == "__main__":
    main()
