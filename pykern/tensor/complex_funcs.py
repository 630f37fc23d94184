"""Element functions of complex values, each a `@pk.func` on the parts: a complex number is
passed as its real and imaginary parts (x, y) of the part type (f32 for c64, f64 for c128)
and a complex result is returned as a tuple (re, im). `complex_elementwise` runs them in the
kernels of `complex_kernels`; nothing here knows tensors.

The formulas follow numpy's results: Smith's scaled division, `exp(b log a)` for powers, and
the principal branches (branch cuts on the real or imaginary axis outside [-1, 1], as numpy and
C99 place them). Overflow is avoided where a plain formula would overflow in the middle (`abs`
is a scaled hypot, `tanh` of large parts saturates); the special values of C99 Annex G (inf and
nan parts) are not all followed (docs/tensor.md, "Complex numbers").
"""

from __future__ import annotations

import builtins
import math

import pykern as pk

from pykern.tensor.binary_ops import hypot_f
from pykern.tensor.unary_ops import expm1_f, log1p_f

HALF_PI = 1.5707963267948966
LN2 = 0.6931471805599453
LN10 = 2.302585092994046


# ---------------------------------------------------------------- arithmetic


@pk.func
def c_add(x, y, u, v):
    return x + u, y + v


@pk.func
def c_sub(x, y, u, v):
    return x - u, y - v


@pk.func
def c_mul(x, y, u, v):
    return x * u - y * v, x * v + y * u


@pk.func
def c_div(x, y, u, v):
    # Smith's algorithm (as numpy): the ratio of the divisor's parts keeps the intermediate
    # products in range; a zero divisor divides by |u| (giving inf or nan parts)
    big = builtins.abs(u) >= builtins.abs(v)
    rat1 = v / pk.select(u == 0.0, 1.0, u)
    scl1 = 1.0 / (u + v * rat1)
    rat2 = u / pk.select(v == 0.0, 1.0, v)
    scl2 = 1.0 / (v + u * rat2)
    re = pk.select(big, (x + y * rat1) * scl1, (x * rat2 + y) * scl2)
    im = pk.select(big, (y - x * rat1) * scl1, (y * rat2 - x) * scl2)
    zero = u == 0.0 and v == 0.0
    return pk.select(zero, x / builtins.abs(u), re), pk.select(zero, y / builtins.abs(u), im)


@pk.func
def c_pow(x, y, u, v):
    # a ** b = exp(b log a); 0 ** b is 0 for b with a positive real part and no imaginary
    # part, and anything ** 0 is 1 (as numpy)
    lr, li = c_log(x, y)
    er, ei = c_exp(lr * u - li * v, lr * v + li * u)
    zero_base = x == 0.0 and y == 0.0 and u > 0.0 and v == 0.0
    one = u == 0.0 and v == 0.0
    re = pk.select(one, 1.0, pk.select(zero_base, 0.0, er))
    im = pk.select(one, 0.0, pk.select(zero_base, 0.0, ei))
    return re, im


@pk.func
def c_equal(x, y, u, v):
    return x == u and y == v


@pk.func
def c_not_equal(x, y, u, v):
    return x != u or y != v


# ---------------------------------------------------------------- to real values


@pk.func
def c_abs(x, y):
    return hypot_f(x, y)


@pk.func
def c_angle(x, y):
    return pk.atan2(y, x)


@pk.func
def c_isnan(x, y):
    return x != x or y != y


@pk.func
def c_is_zero(x, y):
    return x == 0.0 and y == 0.0


@pk.func
def c_isinf(x, y):
    return pk.isinf(x) or pk.isinf(y)


@pk.func
def c_isfinite(x, y):
    return not (x != x or y != y or pk.isinf(x) or pk.isinf(y))


# ---------------------------------------------------------------- complex to complex


@pk.func
def c_negative(x, y):
    return -x, -y


@pk.func
def c_positive(x, y):
    return x, y


@pk.func
def c_conj(x, y):
    return x, -y


@pk.func
def c_square(x, y):
    return x * x - y * y, 2.0 * x * y


@pk.func
def c_reciprocal(x, y):
    return c_div(1.0, 0.0, x, y)


@pk.func
def c_sign(x, y):
    # z / |z| (numpy 2), 0 for 0
    m = hypot_f(x, y)
    d = pk.select(m == 0.0, 1.0, m)
    return pk.select(m == 0.0, 0.0, x / d), pk.select(m == 0.0, 0.0, y / d)


@pk.func
def c_exp(x, y):
    # a real argument keeps a zero imaginary part exactly, as numpy
    e = pk.exp(x)
    re = pk.select(y == 0.0, e, e * pk.cos(y))
    im = pk.select(y == 0.0, y, e * pk.sin(y))
    return re, im


@pk.func
def c_exp2(x, y):
    return c_exp(x * LN2, y * LN2)


@pk.func
def c_expm1(x, y):
    # e**x cos y - 1 = expm1(x) cos y - 2 sin(y/2)**2, without the cancellation near 0
    s = pk.sin(0.5 * y)
    return expm1_f(x) * pk.cos(y) - 2.0 * s * s, pk.exp(x) * pk.sin(y)


@pk.func
def c_log(x, y):
    return pk.log(hypot_f(x, y)), pk.atan2(y, x)


@pk.func
def c_log2(x, y):
    re, im = c_log(x, y)
    return re * (1.0 / LN2), im * (1.0 / LN2)


@pk.func
def c_log10(x, y):
    re, im = c_log(x, y)
    return re * (1.0 / LN10), im * (1.0 / LN10)


@pk.func
def c_log1p(x, y):
    # log|1 + z| = log1p(2x + x**2 + y**2) / 2, accurate for small z
    return 0.5 * log1p_f(2.0 * x + x * x + y * y), pk.atan2(y, 1.0 + x)


@pk.func
def c_sqrt(x, y):
    # t = sqrt((|x| + |z|) / 2) never cancels; the other part is y / 2t. The result's
    # imaginary part has y's sign (also for -0.0), as numpy
    m = hypot_f(x, y)
    t = pk.sqrt(0.5 * (builtins.abs(x) + m))
    d = pk.select(t == 0.0, 1.0, 2.0 * t)
    re = pk.select(x >= 0.0, t, builtins.abs(y) / d)
    im = pk.select(x >= 0.0, y / d, pk.copysign(t, y))
    zero = x == 0.0 and y == 0.0
    inf_im = pk.isinf(y)
    re = pk.select(zero, 0.0, pk.select(inf_im, math.inf, re))
    im = pk.select(zero, y, pk.select(inf_im, y, im))
    return re, im


@pk.func
def c_sin(x, y):
    return pk.sin(x) * pk.cosh(y), pk.cos(x) * pk.sinh(y)


@pk.func
def c_cos(x, y):
    return pk.cos(x) * pk.cosh(y), -(pk.sin(x) * pk.sinh(y))


@pk.func
def c_sinh(x, y):
    return pk.sinh(x) * pk.cos(y), pk.cosh(x) * pk.sin(y)


@pk.func
def c_cosh(x, y):
    return pk.cosh(x) * pk.cos(y), pk.sinh(x) * pk.sin(y)


@pk.func
def c_tanh(x, y):
    # (sinh 2x + i sin 2y) / (cosh 2x + cos 2y); past |x| = 20 (where cosh 2x swamps cos 2y
    # in f64) the real part is +-1 and the imaginary part 4 sin y cos y e**-2|x|
    ax = builtins.abs(x)
    small = ax < 20.0
    xs = pk.select(small, x, 0.0)
    d = pk.cosh(2.0 * xs) + pk.cos(2.0 * y)
    re = pk.select(small, pk.sinh(2.0 * xs) / d, pk.copysign(1.0, x))
    tail = 4.0 * pk.sin(y) * pk.cos(y) * pk.exp(-2.0 * ax)
    im = pk.select(small, pk.sin(2.0 * y) / d, tail)
    return re, im


@pk.func
def c_tan(x, y):
    # tan z = -i tanh(iz)
    u, v = c_tanh(-y, x)
    return v, -u


@pk.func
def c_asinh(x, y):
    # log(z + sqrt(z**2 + 1)) on the half plane x >= 0 (no cancellation there); odd symmetry
    # for the other half
    s = pk.select(x < 0.0, -1.0, 1.0)
    a = s * x
    b = s * y
    qr, qi = c_sqrt(a * a - b * b + 1.0, 2.0 * a * b)
    lr, li = c_log(a + qr, b + qi)
    return s * lr, s * li


@pk.func
def c_asin(x, y):
    # asin z = -i asinh(iz)
    u, v = c_asinh(-y, x)
    return v, -u


@pk.func
def c_acos(x, y):
    u, v = c_asin(x, y)
    return HALF_PI - u, -v


@pk.func
def c_acosh(x, y):
    # log(z + sqrt(z + 1) sqrt(z - 1)): the principal branch, with the cut on x < 1
    ar, ai = c_sqrt(x + 1.0, y)
    br, bi = c_sqrt(x - 1.0, y)
    pr_, pi_ = c_mul(ar, ai, br, bi)
    return c_log(x + pr_, y + pi_)


@pk.func
def c_atanh(x, y):
    # (log(1 + z) - log(1 - z)) / 2, each through log1p for accuracy near 0
    ar, ai = c_log1p(x, y)
    br, bi = c_log1p(-x, -y)
    return 0.5 * (ar - br), 0.5 * (ai - bi)


@pk.func
def c_atan(x, y):
    # atan z = -i atanh(iz)
    u, v = c_atanh(-y, x)
    return v, -u
