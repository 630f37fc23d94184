"""The prelude of f64 math: pykern functions for the math calls a target cannot lower in f64.

Vulkan's GLSL.std.450 has its transcendental functions for 16- and 32-bit floats only, so the
decomposition pass (`pykern.passes.decompose`) rewrites `pk.exp(x)` on an f64 `x` (and log,
sin, ..., `**`) into a call of the function `IMPLEMENTATIONS` names here. They use only what
every f64 device has: + - * /, comparisons, floor, sqrt, copysign, conversions; exp, log and
pow are straight-line code (no loop iterations for a driver's per-invocation budget).

- `exp`: x = k ln2 + r with |r| <= ln2/2 (Cody-Waite split of ln2), a degree-13 Taylor
  polynomial of e^r (truncation below 2^-60), times 2^k built exactly from powers of two (in two
  halves, so 2^k is representable down to the subnormal range).
- `log`: x = 2^k m with m in [sqrt(1/2), sqrt(2)) — k from the f32 logarithm after scaling
  x into the f32 range by exact powers of two, then corrected (`exponent_of`) — and
  log m = 2 atanh((m - 1)/(m + 1)) by its series to s^23 (|s| <= 0.172, truncation below
  2^-58); k ln2 added in two parts.
- sinh/cosh/tanh from exp and a series of e^x - 1 near 0 (where it cancels).
- sin/cos/tan: fdlibm's kernels after a reduction by pi/2: Cody and Waite's in three parts for
  |x| < 2**20 pi/2 (about 1.6e6), Payne and Hanek's beyond (x times 24-bit chunks of 2/pi,
  in exact products summed in triple-double), so every finite argument is reduced to 53 bits
  or more. atan: fdlibm's reduction and polynomial; atan2, asin, acos from it.
- erf: its Taylor series for |x| < 0.5; 2/sqrt(pi) e^(-x^2) sum 2^k x^(2k+1)/(2k+1)!! (all terms
  positive) below 2; 1 - erfc(x) by erfc's continued fraction below 6; +-1 beyond. e^(-x^2)
  from x^2 split exactly into two parts.

Within a few ULP of numpy's on lavapipe and an H200 (tests/passes/test_prelude_f64.py). The
formulas rely on + - * being rounded separately: pykern emits them with NoContraction. Each
function calls only prelude functions for f64 math, never `pk.exp` and the like, so the
decomposition never meets its own output.
"""

from __future__ import annotations

import math

import pykern as pk
from pykern import ir

LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
LOG2E = 1.44269504088896338700e+00
SPLITTER = 134217729.0  # 2**27 + 1: Veltkamp's split of an f64 into two 26-bit halves

# polynomial coefficients, the highest power's first (each evaluated by Horner's scheme)
EXP_TAYLOR = tuple(1.0 / math.factorial(n) for n in range(13, -1, -1))  # e**y, |y| <= ln2/2
EXPM1_TAYLOR = tuple(1.0 / math.factorial(n) for n in range(17, 1, -1))  # (e**x - 1 - x)/x**2
ATANH_SERIES = tuple(1.0 / (2 * k + 1) for k in range(11, -1, -1))  # atanh(s)/s in s**2
# erf(a)/a - 1 in z = a**2, over z: (-1)**k / (k! (2k+1)) for k = 14 down to 1
ERF_TAYLOR = (3.9554295164585257e-13, -5.9477940136376354e-12, 8.35070279514724e-11,
              -1.0892221037148573e-09, 1.3122532963802806e-08, -1.4503852223150468e-07,
              1.4589169000933706e-06, -1.3227513227513228e-05, 0.00010683760683760684,
              -0.0007575757575757576, 0.004629629629629629, -0.023809523809523808, 0.1,
              -0.3333333333333333)


POW_BITS = 10  # power_by_squaring takes exponents below 2**POW_BITS


@pk.func
def power_by_squaring(base, n):
    """base ** n in f64 for an integer 0 <= n < 2**POW_BITS: the product of base ** (2**b)
    over the bits b of n (exact for powers of two; straight-line code, no loop for a driver's
    loop budget to count)."""
    square: pk.f64 = base
    p: pk.f64 = 1.0
    for b in pk.static_range(POW_BITS):
        p = pk.select((n & (1 << b)) != 0, p * square, p)
        square = square * square
    return p


@pk.func
def pow2_f64(k):
    """2**k (f64) for an integer |k| <= 1023, exactly."""
    return power_by_squaring(pk.f64(pk.select(k < 0, 0.5, 2.0)), abs(k))


@pk.func
def saturated(core, x, above, below):
    """An exponential at x: nan for a nan x, inf where `above` (past its largest finite
    value), 0 where `below` (under its smallest subnormal), else core(x)."""
    r: pk.f64 = 0.0
    if x != x:
        r = x
    elif above:
        r = math.inf
    elif below:
        r = 0.0
    else:
        r = core(x)
    return r


@pk.func
def exp_in_range(x):
    """e**x in f64 for x in [-745.2, 709.78]: 2**round(x / ln2) times a Taylor polynomial of
    the remainder."""
    kf = pk.floor(x * LOG2E + 0.5)
    y = x - kf * LN2_HI - kf * LN2_LO
    p: pk.f64 = EXP_TAYLOR[0]
    for term in pk.static_range(1, len(EXP_TAYLOR)):  # Horner's scheme
        p = p * y + EXP_TAYLOR[term]
    return scale2(p, pk.i32(kf))


@pk.func
def exp_f64(x):
    """e**x in f64 (inf above 709.78, 0 below -745.2, nan for nan)."""
    return saturated(exp_in_range, x, x > 709.782712893384, x < -745.2)


@pk.func
def exp2_in_range(x):
    """2**x in f64 for x in [-1080, 1024]: 2**round(x) (exact) times e**(f ln2) for the
    fraction f (|f| <= 1/2: f ln2 is always in exp_in_range's range)."""
    kf = pk.floor(x + 0.5)
    return scale2(exp_in_range((x - kf) * 0.6931471805599453), pk.i32(kf))


@pk.func
def exp2_f64(x):
    """2**x in f64 (inf above 1024, 0 below -1080, nan for nan)."""
    return saturated(exp2_in_range, x, x > 1024.0, x < -1080.0)


@pk.func
def scale2(x, n):
    """x * 2**n for an integer |n| <= 2046, exactly where the result is normal (two halves:
    2**n itself may not be representable)."""
    half = n // 2
    return x * pow2_f64(half) * pow2_f64(n - half)


# exponent_of's scaling steps: a is multiplied by 2**SCALE_BITS[i] (SCALE_UP) where it lies
# below 2**-SCALE_BITS[i] (SCALE_DOWN), and by SCALE_DOWN where it lies above SCALE_UP
SCALE_BITS = (512, 256, 128, 64)
SCALE_UP = tuple(2.0 ** b for b in SCALE_BITS)
SCALE_DOWN = tuple(2.0 ** -b for b in SCALE_BITS)


@pk.func
def exponent_of(a):
    """The e with 2**e <= a < 2**(e + 1), for a positive finite f64 (subnormals too): a is
    scaled into [2**-114, 2**64] exactly, the f32 log2 estimates the rest, which is then
    corrected by one where the estimate is off."""
    m = a
    k = 0
    for step in pk.static_range(len(SCALE_BITS)):
        if m < SCALE_DOWN[step]:
            m = m * SCALE_UP[step]
            k -= SCALE_BITS[step]
        elif m > SCALE_UP[step]:
            m = m * SCALE_DOWN[step]
            k += SCALE_BITS[step]
    e = pk.i32(pk.floor(pk.log2(pk.f32(m))))
    r = m * pow2_f64(-e)  # in [1, 2) but for an estimate one off
    if r >= 2.0:
        e += 1
    elif r < 1.0:
        e -= 1
    return k + e


@pk.func
def log_f64(x):
    """The natural logarithm in f64 (nan below 0, -inf at 0, inf at inf): x = 2**k m with m in
    [sqrt(1/2), sqrt(2)), log m by `log_near_one`, k ln2 added in two parts."""
    r: pk.f64 = 0.0
    if x != x or x < 0.0:
        r = math.nan
    elif x == 0.0:
        r = -math.inf
    elif x == math.inf:
        r = math.inf
    else:
        k = exponent_of(x)
        m = scale2(x, -k)
        if m > 1.4142135623730951:
            m = m * 0.5
            k += 1
        kf = pk.f64(k)
        r = kf * LN2_HI + (log_near_one(m) + kf * LN2_LO)
    return r


@pk.func
def log_near_one(m):
    """log m for m in [sqrt(1/2), sqrt(2)]: 2 atanh(s), s = (m - 1)/(m + 1), by its series to
    s**23 (|s| <= 0.172: truncation below 2**-58)."""
    s = (m - 1.0) / (m + 1.0)
    s2 = s * s
    t: pk.f64 = ATANH_SERIES[0]
    for term in pk.static_range(1, len(ATANH_SERIES)):
        t = t * s2 + ATANH_SERIES[term]
    return 2.0 * s * t


@pk.func
def log2_f64(x):
    """The base-2 logarithm in f64."""
    return log_f64(x) * 1.4426950408889634


@pk.func
def expm1_f64(x):
    """e**x - 1, by its Taylor series for |x| < 0.5 (-0.0 stays -0.0)."""
    r: pk.f64 = x
    if x == 0.0:
        r = x  # x + x * x * p would give +0.0 for -0.0
    elif abs(x) < 0.5:
        p: pk.f64 = EXPM1_TAYLOR[0]
        for term in pk.static_range(1, len(EXPM1_TAYLOR)):
            p = p * x + EXPM1_TAYLOR[term]
        r = x + x * x * p
    else:
        r = exp_f64(x) - 1.0
    return r


@pk.func
def tanh_f64(x):
    """The hyperbolic tangent in f64 (+-1 beyond |x| = 20)."""
    a = abs(x)
    r: pk.f64 = 0.0
    if a > 20.0:
        r = 1.0
    else:
        t = expm1_f64(2.0 * a)
        r = t / (t + 2.0)
    return pk.copysign(r, x)


@pk.func
def sinh_f64(x):
    """The hyperbolic sine in f64 (e**|x| in two halves near the overflow)."""
    a = abs(x)
    r: pk.f64 = 0.0
    if a < 0.5:
        t = expm1_f64(a)
        r = 0.5 * (t + t / (t + 1.0))
    elif a > 709.0:
        h = exp_f64(0.5 * a)
        r = 0.5 * h * h
    else:
        e = exp_f64(a)
        r = 0.5 * (e - 1.0 / e)
    return pk.copysign(r, x)


@pk.func
def cosh_f64(x):
    """The hyperbolic cosine in f64."""
    a = abs(x)
    r: pk.f64 = 0.0
    if a > 709.0:
        h = exp_f64(0.5 * a)
        r = 0.5 * h * h
    else:
        e = exp_f64(a)
        r = 0.5 * (e + 1.0 / e)
    return r


@pk.func
def powi_f64(x, n):
    """x ** n for an f64 x and an integer 0 <= n < 128, by squaring (straight-line code)."""
    return power_by_squaring(x, n)


@pk.func
def pow_f64(x, y):
    """x ** y in f64 as exp(y log |x|) (by squaring for integral |y| <= 64), with numpy's
    special cases: x ** 0 == 1, 1 ** y == 1, x ** 2 == x * x exactly, a finite negative base
    needs an integral exponent (else nan), and a negative base (or -0.0) takes its sign from
    the parity of an integral exponent (-inf ** 0.5 is inf, as numpy)."""
    r: pk.f64 = 0.0
    yi = pk.trunc(y)
    if y == 0.0 or x == 1.0:
        r = 1.0
    elif x != x or y != y:
        r = x + y
    elif y == 2.0:
        r = x * x
    elif x < 0.0 and yi != y and not pk.isinf(x):
        r = math.nan
    else:
        ax = abs(x)
        if ax == 0.0:
            r = math.inf
            if y > 0.0:
                r = 0.0
        elif ax == 1.0:
            r = 1.0
        else:
            r = exp_f64(y * log_f64(ax))
            if yi == y and abs(y) <= 64.0:
                # integral powers by squaring: exact where the result is representable
                p = powi_f64(ax, pk.i32(abs(y)))
                if y > 0.0:
                    r = p
                elif p != math.inf:
                    r = 1.0 / p
        if yi == y and (x < 0.0 or (x == 0.0 and pk.copysign(1.0, x) < 0.0)):
            half = yi * 0.5
            if pk.trunc(half) != half:  # odd exponent
                r = -r
    return r


# ---------------------------------------------------------------- trigonometry (fdlibm)

PIO2_1 = 1.57079632673412561417e+00  # the first 33 bits of pi/2
PIO2_2 = 6.07710050630396597660e-11  # the next 33 bits
PIO2_3 = 2.02226624871116645580e-21  # the third 33 bits
PIO2_3T = 8.47842766036889956997e-32  # pi/2 - PIO2_1 - PIO2_2 - PIO2_3
INV_PIO2 = 6.36619772367581382433e-01
PI_HI = 3.1415926535897931160e+00
PIO2_LIMIT = 1647099.3291652855  # 2**20 pi/2: Cody-Waite below, Payne-Hanek above
PIO2_HI = 1.5707963267948966  # pi/2 in two doubles
PIO2_LO = 6.123233995736766e-17
PIO2_HI_1 = 1.5707963407039642  # PIO2_HI in two 26-bit halves
PIO2_HI_2 = -1.3909067675399456e-08
PI_LO = 1.2246467991473531772e-16


@pk.func
def sin_kernel(x, y):
    """sin(x + y) for |x| <= pi/4, y the tail of x (fdlibm __kernel_sin)."""
    z = x * x
    v = z * x
    r = 8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04 + z * (
        2.75573137070700676789e-06 + z * (-2.50507602534068634195e-08
                                          + z * 1.58969099521155010221e-10)))
    return x - ((z * (0.5 * y - v * r) - y) - v * -1.66666666666666324348e-01)


@pk.func
def cos_kernel(x, y):
    """cos(x + y) for |x| <= pi/4 (fdlibm __kernel_cos, without its last-bit refinement)."""
    z = x * x
    r = z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03 + z * (
        2.48015872894767294178e-05 + z * (-2.75573143513906633035e-07 + z * (
            2.08757232129817482790e-09 + z * -1.13596475577881948265e-11)))))
    hz = 0.5 * z
    w = 1.0 - hz
    return w + (((1.0 - w) - hz) + (z * r - x * y))


# bits 24k + 1 to 24k + 24 of 2/pi after the binary point (k = 0..57), as integral f64s
TWO_OVER_PI_CHUNKS = (
    10680707.0, 7228996.0, 1387004.0, 2578385.0, 16069853.0, 12639074.0, 9804092.0,
    4427841.0, 16666979.0, 11263675.0, 12935607.0, 2387514.0, 4345298.0, 14681673.0,
    3074569.0, 13734428.0, 16653803.0, 1880361.0, 10960616.0, 8533493.0, 3062596.0,
    8710556.0, 7349940.0, 6258241.0, 3772886.0, 3769171.0, 3798172.0, 8675211.0, 12450088.0,
    3874808.0, 9961438.0, 366607.0, 15675153.0, 9132554.0, 7151469.0, 3571407.0, 2607881.0,
    12013382.0, 4155038.0, 6285869.0, 7677882.0, 13102053.0, 15825725.0, 473591.0,
    9065106.0, 15363067.0, 6271263.0, 9264392.0, 5636912.0, 4652155.0, 7056368.0,
    13614112.0, 10155062.0, 1944035.0, 9527646.0, 15080200.0, 6658437.0, 6231200.0)
HALF_CHUNKS = 29  # two_over_pi_chunk tests k against one half of the table only


@pk.func
def two_over_pi_chunk(k):
    """Bits 24k + 1 to 24k + 24 of 2/pi after the binary point, as an integral f64 (k in 0..57:
    enough for every f64 argument): straight-line selects over the half of the table that
    holds k."""
    d: pk.f64 = 0.0
    if k < HALF_CHUNKS:
        for low in pk.static_range(HALF_CHUNKS):
            d = pk.select(k == low, TWO_OVER_PI_CHUNKS[low], d)
    else:
        for high in pk.static_range(HALF_CHUNKS, len(TWO_OVER_PI_CHUNKS)):
            d = pk.select(k == high, TWO_OVER_PI_CHUNKS[high], d)
    return d


@pk.func
def mod4(t):
    """t mod 4 for a non-negative integral multiple t of 2**s, exact for s >= -51 (and t < 1
    below that, left as it is)."""
    return t - 4.0 * pk.floor(t * 0.25)


@pk.func
def pio2_fraction(a, part):
    """|a| 2/pi = n + f for a finite |a| >= 2**20 pi/2, by Payne and Hanek's reduction: with
    a = (mh 2**26 + ml) 2**e, each 24-bit chunk d_k of 2/pi contributes mh d_k and ml d_k
    (exact products) times powers of two, taken mod 4 (exactly) where they reach past 4, and
    summed in double-double from the first chunk that matters. part 0: n mod 4 (n the nearest
    integer); 1 and 2: the head and tail of f (|f| <= 1/2)."""
    e = exponent_of(abs(a)) - 52
    m = scale2(abs(a), -e)  # integral, in [2**52, 2**53)
    mh = pk.floor(m * 1.4901161193847656e-08)  # m / 2**26
    ml = m - mh * 67108864.0
    start = e // 24 - 1  # below it every mh and ml term is a multiple of 4
    if start < 0:
        start = 0
    hi: pk.f64 = 0.0
    lo: pk.f64 = 0.0
    lo2: pk.f64 = 0.0
    for j in range(18):  # chunks down to 2**-160 or so, an mh and an ml term of each
        k = start + j // 2
        scale = pk.select(j % 2 == 0, 16777216.0, 0.25)  # mh terms 2**24 above, ml ones 2**-2
        t = mod4(pk.select(j % 2 == 0, mh, ml) * two_over_pi_chunk(k) *
                 pow2_f64(e + 2 - 24 * (k + 1)) * scale)
        # hi + lo + lo2 += t, exactly but for lo2's roundings (Knuth's two-sum, twice): the
        # fraction may cancel down to 2**-61, and needs 53 bits below that
        s = hi + t
        b = s - hi
        err = (hi - (s - b)) + (t - b)
        hi = s
        s = lo + err
        b = s - lo
        lo2 = lo2 + ((lo - (s - b)) + (err - b))
        lo = s
    n = pk.floor(hi + 0.5)
    head = hi - n  # exact
    s = head + lo
    b = s - head
    tail = ((head - (s - b)) + (lo - b)) + lo2
    f = s + tail
    r = f
    if part == 0:
        r = n - 4.0 * pk.floor(n * 0.25)
    elif part == 2:
        r = tail - (f - s)
    return r


@pk.func
def sin_quadrants(x, shift):
    """sin(x + shift pi/2) of an f64 x (shift 0: sin, 1: cos) and, for shift 2, tan(x): x = n
    pi/2 + (y0 + y1), then the kernels by the quadrant. The reduction is Cody and Waite's in
    three parts (fdlibm's medium case) for |x| < 2**20 pi/2, Payne and Hanek's beyond."""
    nf = pk.floor(x * INV_PIO2 + 0.5)
    y0: pk.f64 = 0.0
    y1: pk.f64 = 0.0
    if abs(x) < PIO2_LIMIT:
        t = x - nf * PIO2_1  # exact: nf has at most 20 significant bits here, PIO2_1 33
        w = nf * PIO2_2
        r = t - w
        t = r
        w = nf * PIO2_3
        r = t - w
        w = nf * PIO2_3T - ((t - r) - w)
        y0 = r - w
        y1 = (r - y0) - w
    elif not pk.isinf(x):
        sign = pk.copysign(1.0, x)
        nf = sign * pio2_fraction(x, 0)
        fh = sign * pio2_fraction(x, 1)
        fl = sign * pio2_fraction(x, 2)
        y0 = times_pio2(fh, fl, 0)
        y1 = times_pio2(fh, fl, 1)
    s = sin_kernel(y0, y1)
    c = cos_kernel(y0, y1)
    # the quadrant, (n + shift) mod 4, in floats: exact for the integral nf < 2**53
    q = nf + pk.f64(shift)
    q = q - 4.0 * pk.floor(q * 0.25)
    res: pk.f64 = s
    if shift == 2:
        res = s / c
        if q == 1.0 or q == 3.0:
            res = -c / s
    elif q == 1.0:
        res = c
    elif q == 2.0:
        res = -s
    elif q == 3.0:
        res = -c
    if x != x or pk.isinf(x):
        res = math.nan
    return res


@pk.func
def times_pio2(fh, fl, part):
    """(fh + fl) pi/2 in double-double: its head (part 0) or tail (1). fh * PIO2_HI is split
    exactly by Dekker's product (fh and PIO2_HI cut into 26-bit halves)."""
    p = fh * PIO2_HI
    c = SPLITTER * fh
    h1 = c - (c - fh)
    h2 = fh - h1
    err = ((h1 * PIO2_HI_1 - p) + h1 * PIO2_HI_2 + h2 * PIO2_HI_1) + h2 * PIO2_HI_2
    tail = err + (fh * PIO2_LO + fl * PIO2_HI)
    head = p + tail
    r = head
    if part == 1:
        r = tail - (head - p)
    return r


@pk.func
def sin_f64(x):
    """The sine of an f64 x."""
    return sin_quadrants(x, 0)


@pk.func
def cos_f64(x):
    """The cosine of an f64 x."""
    return sin_quadrants(x, 1)


@pk.func
def tan_f64(x):
    """The tangent of an f64 x."""
    return sin_quadrants(x, 2)


@pk.func
def atan_f64(x):
    """atan of an f64 x (fdlibm: reduction by atan(1/2), atan(1), atan(3/2), atan(inf), then an
    odd polynomial)."""
    a = abs(x)
    hi: pk.f64 = 0.0
    lo: pk.f64 = 0.0
    reduced = True
    u = a
    if a < 0.4375:
        reduced = False
    elif a < 0.6875:
        hi = 4.63647609000806093515e-01
        lo = 2.26987774529616870924e-17
        u = (2.0 * a - 1.0) / (2.0 + a)
    elif a < 1.1875:
        hi = 7.85398163397448278999e-01
        lo = 3.06161699786838301793e-17
        u = (a - 1.0) / (a + 1.0)
    elif a < 2.4375:
        hi = 9.82793723247329054082e-01
        lo = 1.39033110312309984516e-17
        u = (a - 1.5) / (1.0 + 1.5 * a)
    else:
        hi = 1.57079632679489655800e+00
        lo = 6.12323399573676603587e-17
        u = -1.0 / a
    z = u * u
    w = z * z
    s1 = z * (3.33333333333329318027e-01 + w * (1.42857142725034663711e-01 + w * (
        9.09088713343650656196e-02 + w * (6.66107313738753120669e-02 + w * (
            4.97687799461593236017e-02 + w * 1.62858201153657823623e-02)))))
    s2 = w * (-1.99999999998764832476e-01 + w * (-1.11111104054623557880e-01 + w * (
        -7.69187620504482999495e-02 + w * (-5.83357013379057348645e-02
                                          + w * -3.65315727442169155270e-02))))
    r = u - u * (s1 + s2)
    if reduced:
        r = hi - ((u * (s1 + s2) - lo) - u)
    if a != a:
        r = a
    return pk.copysign(r, x)


@pk.func
def atan2_f64(y, x):
    """atan2(y, x) in f64 with C99's special cases (signed zeros, infinities)."""
    r: pk.f64 = 0.0
    pi: pk.f64 = PI_HI
    zero: pk.f64 = 0.0
    if x != x or y != y:
        r = x + y
    elif y == 0.0:
        r = pk.copysign(pk.select(pk.copysign(1.0, x) > 0.0, zero, pi), y)
    elif x == 0.0:
        r = pk.copysign(0.5 * pi, y)
    elif pk.isinf(x):
        if pk.isinf(y):
            r = pk.copysign(pk.select(x > 0.0, 0.25 * pi, 0.75 * pi), y)
        else:
            r = pk.copysign(pk.select(x > 0.0, zero, pi), y)
    elif pk.isinf(y):
        r = pk.copysign(0.5 * pi, y)
    else:
        a = atan_f64(abs(y / x))
        if x < 0.0:
            a = PI_HI - (a - PI_LO)
        r = pk.copysign(a, y)
    return r


@pk.func
def asin_f64(x):
    """The inverse sine in f64 (nan outside [-1, 1])."""
    r = atan2_f64(x, pk.sqrt((1.0 - x) * (1.0 + x)))
    return pk.select(abs(x) > 1.0, math.nan, r)


@pk.func
def acos_f64(x):
    """The inverse cosine in f64 (nan outside [-1, 1])."""
    r = 2.0 * atan_f64(pk.sqrt((1.0 - x) / (1.0 + x)))
    if x == -1.0:
        r = PI_HI
    return pk.select(abs(x) > 1.0, math.nan, r)


# ---------------------------------------------------------------- the error function

TWO_OVER_SQRT_PI = 1.1283791670955126
ONE_OVER_SQRT_PI = 0.5641895835477563


@pk.func
def exp_minus_square(a):
    """e**(-a*a) for a >= 0, with a*a split exactly (a = hi + lo, hi of 26 bits: hi*hi is
    exact), so the rounding of a*a does not cost |a|**2 ULP."""
    c = SPLITTER * a
    hi = c - (c - a)
    lo = a - hi
    return exp_f64(-(hi * hi)) * exp_f64(-(lo * (2.0 * hi + lo)))


@pk.func
def erf_f64(x):
    """The error function in f64 (odd; +-1 beyond |x| = 6, where erf rounds to 1)."""
    a = abs(x)
    r: pk.f64 = 1.0
    if a != a:
        r = a
    elif a < 0.5:  # Taylor: sum (-1)**k x**(2k+1) / (k! (2k+1))
        z = a * a
        p: pk.f64 = ERF_TAYLOR[0]
        for term in pk.static_range(1, len(ERF_TAYLOR)):
            p = p * z + ERF_TAYLOR[term]
        r = TWO_OVER_SQRT_PI * (a + a * (p * z))
    elif a < 2.0:  # positive terms, summed from the tail: 1 + t/3 (1 + t/5 (1 + ...)), t = 2a^2
        t = 2.0 * a * a
        p2: pk.f64 = 1.0
        for k in range(35, 0, -1):
            p2 = 1.0 + p2 * t / (2.0 * pk.f64(k) + 1.0)
        r = TWO_OVER_SQRT_PI * exp_minus_square(a) * (a * p2)
    elif a < 6.0:  # erfc's continued fraction a + (1/2)/(a + 1/(a + (3/2)/(a + ...)))
        f = a
        for k in range(45, 0, -1):
            f = a + 0.5 * pk.f64(k) / f
        r = 1.0 - ONE_OVER_SQRT_PI * exp_minus_square(a) / f
    return pk.copysign(r, x)


# the prelude function of each math function the target may lack in f64
IMPLEMENTATIONS: dict[ir.MathFn, object] = {
    ir.MathFn.EXP: exp_f64, ir.MathFn.EXP2: exp2_f64, ir.MathFn.LOG: log_f64,
    ir.MathFn.LOG2: log2_f64, ir.MathFn.SIN: sin_f64, ir.MathFn.COS: cos_f64,
    ir.MathFn.TAN: tan_f64, ir.MathFn.ASIN: asin_f64, ir.MathFn.ACOS: acos_f64,
    ir.MathFn.ATAN: atan_f64, ir.MathFn.ATAN2: atan2_f64, ir.MathFn.SINH: sinh_f64,
    ir.MathFn.COSH: cosh_f64, ir.MathFn.TANH: tanh_f64, ir.MathFn.POW: pow_f64,
    ir.MathFn.ERF: erf_f64,
}
