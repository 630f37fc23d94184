"""The generic kernels of complex elementwise ops, each taking the element function `F` of
`complex_funcs` as a constexpr, so one compiled variant holds one op for one precision.
The `complex_*_kernel`s of part functions take their operands as real (n, 2) views
(`complex_views.view_as_real` of a flat complex tensor: column 0 the real parts, column 1 the
imaginary parts) and the part type `CT`; the `complex_math*` kernels take flat complex
arrays."""

from __future__ import annotations

import pykern as pk


@pk.kernel
def complex_unary_kernel(x: pk.Array, out: pk.Array, F: pk.constexpr,  # noqa: N803
                         CT: pk.constexpr):  # noqa: N803
    """out = F(x), complex to complex."""
    i = pk.global_id(0)
    re, im = F(CT(x[i, 0]), CT(x[i, 1]))
    out[i, 0] = re
    out[i, 1] = im


@pk.kernel
def complex_to_real_kernel(x: pk.Array, out: pk.Array, F: pk.constexpr,  # noqa: N803
                           CT: pk.constexpr):  # noqa: N803
    """out = F(x): a real or bool result (`out` is 1-D) of each complex element."""
    i = pk.global_id(0)
    out[i] = F(CT(x[i, 0]), CT(x[i, 1]))


@pk.kernel
def complex_binary_kernel(a: pk.Array, b: pk.Array, out: pk.Array, F: pk.constexpr,  # noqa: N803
                          CT: pk.constexpr):  # noqa: N803
    """out = F(a, b), complex to complex."""
    i = pk.global_id(0)
    re, im = F(CT(a[i, 0]), CT(a[i, 1]), CT(b[i, 0]), CT(b[i, 1]))
    out[i, 0] = re
    out[i, 1] = im


@pk.kernel
def complex_compare_kernel(a: pk.Array, b: pk.Array, out: pk.Array, F: pk.constexpr,  # noqa: N803
                           CT: pk.constexpr):  # noqa: N803
    """out = F(a, b): a bool (`out` is 1-D) of each pair of complex elements."""
    i = pk.global_id(0)
    out[i] = F(CT(a[i, 0]), CT(a[i, 1]), CT(b[i, 0]), CT(b[i, 1]))


@pk.kernel
def complex_math_kernel(x: pk.Array, out: pk.Array, F: pk.constexpr):  # noqa: N803
    """out = F(x) for 1-D complex `x` (`out` complex or real), F a `@pk.func` of a complex
    value: the kernel language's complex math."""
    i = pk.global_id(0)
    out[i] = F(x[i])


@pk.kernel
def complex_math_binary_kernel(a: pk.Array, b: pk.Array, out: pk.Array,
                               F: pk.constexpr):  # noqa: N803
    """out = F(a, b) for 1-D complex arrays, F a `@pk.func` of two complex values."""
    i = pk.global_id(0)
    out[i] = F(a[i], b[i])
