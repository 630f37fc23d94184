"""Element functions of complex values for `complex_elementwise`, which runs them in the
kernels of `complex_kernels`; nothing here knows tensors. Two kinds:

- `c_*` take the parts: a complex number is passed as its real and imaginary parts (x, y) of
  the part type (f32 for c64, f64 for c128), a complex result returned as a tuple (re, im).
  These are the ops that only rearrange or compare parts (add, multiply, ==, isnan, ...).
- `z_*` take complex values and use the kernel language's complex math (docs/language.md):
  Smith's division, powers, exp, log, sqrt, the trigonometric and hyperbolic functions and
  their inverses, with numpy's branch cuts and C99 Annex G's special values.
"""

from __future__ import annotations

import pykern as pk

from pykern.tensor.binary_ops import hypot_f

LN2 = 0.6931471805599453


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
def c_equal(x, y, u, v):
    return x == u and y == v


@pk.func
def c_not_equal(x, y, u, v):
    return x != u or y != v


# ---------------------------------------------------------------- to real values


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
def c_sign(x, y):
    # z / |z| (numpy 2), 0 for 0; a number with one infinite part points along that part
    # (numpy: sign(inf + nan j) is 1)
    m = hypot_f(x, y)
    d = pk.select(m == 0.0, 1.0, m)
    re = pk.select(m == 0.0, 0.0, x / d)
    im = pk.select(m == 0.0, 0.0, y / d)
    x_inf = pk.isinf(x)
    y_inf = pk.isinf(y)
    one = x_inf != y_inf
    re = pk.select(one, pk.select(x_inf, pk.copysign(1.0, x), 0.0), re)
    im = pk.select(one, pk.select(y_inf, pk.copysign(1.0, y), 0.0), im)
    return re, im


# ---------------------------------------------------------------- the language's complex math


@pk.func
def z_divide(a, b):
    return a / b


@pk.func
def z_pow(a, b):
    return a ** b


@pk.func
def z_reciprocal(z):
    # numpy's own formula (not its division 1 / z): Smith's scaling with the conjugate's
    # signs, so the imaginary part of 1 / (x + 0j) is -0.0 (a later sqrt or log then takes
    # numpy's side of its branch cut); 0 gives nan + nan j (1 / 0 is inf + nan j)
    x = z.real
    y = z.imag
    re = x
    im = y
    if pk.abs(y) <= pk.abs(x):
        r = y / x
        d = x + y * r
        re = 1.0 / d
        im = -r / d
    else:
        r = x / y
        d = x * r + y
        re = r / d
        im = -1.0 / d
    return complex(re, im)


@pk.func
def z_abs(z):
    return pk.abs(z)


@pk.func
def z_angle(z):
    return pk.angle(z)


@pk.func
def z_exp2(z):
    # each part scaled by log(2) (a complex product with log(2) + 0j would turn inf * 0 into
    # a nan imaginary part)
    return pk.exp(complex(z.real * LN2, z.imag * LN2))


@pk.func
def z_exp(z):
    return pk.exp(z)


@pk.func
def z_expm1(z):
    return pk.expm1(z)


@pk.func
def z_log(z):
    return pk.log(z)


@pk.func
def z_log2(z):
    return pk.log2(z)


@pk.func
def z_log10(z):
    return pk.log10(z)


@pk.func
def z_log1p(z):
    return pk.log1p(z)


@pk.func
def z_sqrt(z):
    return pk.sqrt(z)


@pk.func
def z_sin(z):
    return pk.sin(z)


@pk.func
def z_cos(z):
    return pk.cos(z)


@pk.func
def z_tan(z):
    return pk.tan(z)


@pk.func
def z_sinh(z):
    return pk.sinh(z)


@pk.func
def z_cosh(z):
    return pk.cosh(z)


@pk.func
def z_tanh(z):
    return pk.tanh(z)


@pk.func
def z_asin(z):
    return pk.asin(z)


@pk.func
def z_acos(z):
    return pk.acos(z)


@pk.func
def z_atan(z):
    return pk.atan(z)


@pk.func
def z_asinh(z):
    return pk.asinh(z)


@pk.func
def z_acosh(z):
    return pk.acosh(z)


@pk.func
def z_atanh(z):
    return pk.atanh(z)
