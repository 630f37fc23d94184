"""The small DFTs (butterflies) of the shared-memory FFT kernel, as device functions on tuples of
complex values: `BUTTERFLIES[r]` is the forward DFT of length r, X_k = Σ_j a_j exp(-2πi jk/r),
for every radix r in RADICES.

- 2, 4 and 8 are written out (8 as two 4-point DFTs, the odd one twiddled by w_8^k, whose
  parts are ±cos(π/4): two real multiplies each);
- the odd primes 3, 5, 7, 11 and 13 pair the inputs j and r - j: with s_j = a_j + a_(r-j) and
  d_j = a_j - a_(r-j), X_k = a_0 + Σ s_j cos(2πjk/r) - i Σ d_j sin(2πjk/r) and X_(r-k) the same
  with +i, so each pair costs two real multiplies per output pair;
- the composites 6, 9, 10, 12 and 16 are p·q: q DFTs of length p over the inputs q apart, a
  twiddle w_r^(n2·k1) by constants, then p DFTs of length q (X_(k1 + p·k2)).

Every constant is a Python float (f64), rounded to the working dtype where it meets a value
(never passed to a device function: a constant alone is f32). Real scalings are written as two
real multiplies (a complex product with a zero part would cost four).
"""

from __future__ import annotations

import functools
import math

import pykern as pk

H = 0.7071067811865476  # cos(π/4)


@pk.func
def times_minus_i(z):
    """z · (-i)."""
    return complex(z.imag, -z.real)


@pk.func
def dft2(a):
    return a[0] + a[1], a[0] - a[1]


@pk.func
def dft4(a):
    s0 = a[0] + a[2]
    s1 = a[0] - a[2]
    s2 = a[1] + a[3]
    s3 = times_minus_i(a[1] - a[3])
    return s0 + s2, s1 + s3, s0 - s2, s1 - s3


@pk.func
def dft8(a):
    e0, e1, e2, e3 = dft4((a[0], a[2], a[4], a[6]))
    o0, o1, o2, o3 = dft4((a[1], a[3], a[5], a[7]))
    o1 = complex(H * (o1.real + o1.imag), H * (o1.imag - o1.real))
    o2 = times_minus_i(o2)
    o3 = complex(H * (o3.imag - o3.real), -H * (o3.real + o3.imag))
    return e0 + o0, e1 + o1, e2 + o2, e3 + o3, e0 - o0, e1 - o1, e2 - o2, e3 - o3


def _odd_prime(r: int) -> object:
    """The DFT of the odd prime length r, through the symmetric pairs (module docstring)."""
    half = (r - 1) // 2
    cos_table = tuple(math.cos(2 * math.pi * k / r) for k in range(r))
    sin_table = tuple(math.sin(2 * math.pi * k / r) for k in range(r))

    @pk.func
    def dft_odd(a):
        out = a
        total = a[0]
        for j in pk.static_range(1, r):
            total = total + a[j]
        out[0] = total
        for k in pk.static_range(1, half + 1):
            s1 = a[1] + a[r - 1]
            d1 = a[1] - a[r - 1]
            even = a[0] + complex(s1.real * cos_table[k % r], s1.imag * cos_table[k % r])
            odd = complex(d1.real * sin_table[k % r], d1.imag * sin_table[k % r])
            for j in pk.static_range(2, half + 1):
                sj = a[j] + a[r - j]
                dj = a[j] - a[r - j]
                even = even + complex(sj.real * cos_table[(j * k) % r],
                                      sj.imag * cos_table[(j * k) % r])
                odd = odd + complex(dj.real * sin_table[(j * k) % r],
                                    dj.imag * sin_table[(j * k) % r])
            turned = times_minus_i(odd)
            out[k] = even + turned
            out[r - k] = even - turned
        return out

    return dft_odd


def _columns(dft: object, count: int, length: int, read: tuple[int, int],
             write: tuple[int, int]) -> object:
    """A device function (a, out) -> out that runs `count` DFTs of `length`: DFT c reads its
    inputs j from a[c·rc + j·re] and writes its outputs k to out[c·wc + k·we], where
    read = (rc, re) and write = (wc, we); the rest of `out` is passed through."""
    rc, re = read
    wc, we = write

    @pk.func
    def dft_columns(a, out):
        column = (a[0],) * length
        for c in pk.static_range(count):
            for j in pk.static_range(length):
                column[j] = a[c * rc + j * re]
            column = dft(column)
            for k in pk.static_range(length):
                out[c * wc + k * we] = column[k]
        return out

    return dft_columns


def _composite(p: int, q: int, dft_p: object, dft_q: object) -> object:
    """The DFT of length p·q from q DFTs of length p and p of length q (module docstring)."""
    r = p * q
    cos_table = tuple(math.cos(2 * math.pi * k / r) for k in range(r))
    sin_table = tuple(math.sin(2 * math.pi * k / r) for k in range(r))
    # y[n2·p + k1]: the inner DFT k1 of the inputs n2, n2 + q, ...; X_(k1 + p·k2) = the outer
    # DFT k2 of y[k1], y[p + k1], ... (once twiddled)
    inner = _columns(dft_p, q, p, read=(1, q), write=(p, 1))
    outer = _columns(dft_q, p, q, read=(1, p), write=(1, p))

    @pk.func
    def dft_composite(a):
        y = inner(a, a)
        for n2 in pk.static_range(1, q):
            for k1 in pk.static_range(1, p):
                z = y[n2 * p + k1]
                y[n2 * p + k1] = complex(
                    z.real * cos_table[(n2 * k1) % r] + z.imag * sin_table[(n2 * k1) % r],
                    z.imag * cos_table[(n2 * k1) % r] - z.real * sin_table[(n2 * k1) % r])
        return outer(y, a)

    return dft_composite


dft3 = _odd_prime(3)
dft5 = _odd_prime(5)
dft7 = _odd_prime(7)
dft11 = _odd_prime(11)
dft13 = _odd_prime(13)
dft6 = _composite(3, 2, dft3, dft2)
dft9 = _composite(3, 3, dft3, dft3)
dft10 = _composite(5, 2, dft5, dft2)
dft12 = _composite(4, 3, dft4, dft3)
dft16 = _composite(4, 4, dft4, dft4)

BUTTERFLIES = {2: dft2, 3: dft3, 4: dft4, 5: dft5, 6: dft6, 7: dft7, 8: dft8, 9: dft9,
               10: dft10, 11: dft11, 12: dft12, 13: dft13, 16: dft16}
RADICES = tuple(sorted(BUTTERFLIES))
PRIMES = (2, 3, 5, 7, 11, 13)  # lengths whose prime factors are all here run without Bluestein


@pk.func
def _unchanged(values):
    return values


@functools.lru_cache(maxsize=None)
def butterfly_at(start: int, radix: int) -> object:
    """A device function of a tuple of complex values that runs the DFT of length `radix` on
    its elements start .. start + radix - 1 and returns the whole tuple: the FFT kernel holds
    every butterfly of an invocation in one tuple and calls `STEPS[s][q](vals)`. A radix of
    1 (a transform of length 1) leaves the tuple as it is."""
    if radix == 1:
        return _unchanged
    dft = BUTTERFLIES[radix]

    @pk.func
    def butterfly(values):
        segment = dft(values[start:start + radix])
        out = values
        for r in pk.static_range(radix):
            out[start + r] = segment[r]
        return out

    return butterfly
