"""Element functions of complex values for `complex_elementwise`, which runs them in the
kernels of `complex_kernels`; nothing here knows tensors. Each takes complex values of the
kernel language (docs/language.md) and returns a complex, real or bool value.

- The `c_*` functions only rearrange or compare the parts (add, multiply, ==, isnan, ...),
  written on `z.real` and `z.imag` so that each part is computed as numpy computes it (the
  product is the plain (ac - bd, ad + bc), as numpy's).
- The `z_*` functions use the language's complex math: Smith's division, powers, exp, log,
  sqrt, the trigonometric and hyperbolic functions and their inverses, with numpy's branch
  cuts and C99 Annex G's special values.
"""

from __future__ import annotations

import pykern as pk

from pykern.tensor.elementwise.binary_ops import hypot_f

LN2 = 0.6931471805599453


# ---------------------------------------------------------------- arithmetic


@pk.func
def c_add(a, b):
    return complex(a.real + b.real, a.imag + b.imag)


@pk.func
def c_sub(a, b):
    return complex(a.real - b.real, a.imag - b.imag)


@pk.func
def c_mul(a, b):
    x = a.real
    y = a.imag
    u = b.real
    v = b.imag
    return complex(x * u - y * v, x * v + y * u)


@pk.func
def c_equal(a, b):
    return a.real == b.real and a.imag == b.imag


@pk.func
def c_not_equal(a, b):
    return a.real != b.real or a.imag != b.imag


# ---------------------------------------------------------------- to real values


@pk.func
def c_isnan(z):
    return z.real != z.real or z.imag != z.imag


@pk.func
def c_is_zero(z):
    return z.real == 0.0 and z.imag == 0.0


@pk.func
def c_isinf(z):
    return pk.isinf(z.real) or pk.isinf(z.imag)


@pk.func
def c_isfinite(z):
    x = z.real
    y = z.imag
    return not (x != x or y != y or pk.isinf(x) or pk.isinf(y))


# ---------------------------------------------------------------- complex to complex


@pk.func
def c_negative(z):
    return complex(-z.real, -z.imag)


@pk.func
def c_positive(z):
    return z


@pk.func
def c_conj(z):
    return complex(z.real, -z.imag)


@pk.func
def c_square(z):
    x = z.real
    y = z.imag
    return complex(x * x - y * y, 2.0 * x * y)


@pk.func
def c_sign(z):
    # z / |z| (numpy 2), 0 for 0; a number with one infinite part points along that part
    # (numpy: sign(inf + nan j) is 1)
    x = z.real
    y = z.imag
    m = hypot_f(x, y)
    d = pk.select(m == 0.0, 1.0, m)
    re = pk.select(m == 0.0, 0.0, x / d)
    im = pk.select(m == 0.0, 0.0, y / d)
    x_inf = pk.isinf(x)
    y_inf = pk.isinf(y)
    one = x_inf != y_inf
    re = pk.select(one, pk.select(x_inf, pk.copysign(1.0, x), 0.0), re)
    im = pk.select(one, pk.select(y_inf, pk.copysign(1.0, y), 0.0), im)
    return complex(re, im)


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
