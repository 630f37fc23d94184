"""The generic kernels of complex elementwise ops, each taking the element function `F` of
`complex_funcs` as a constexpr, so one compiled variant holds one op for one precision. They
take flat complex arrays (the kernel language lowers a complex value to its two parts) and
write a complex, real or bool result."""

from __future__ import annotations

import pykern as pk


@pk.kernel
def complex_math_kernel(x: pk.Array, out: pk.Array, F: pk.constexpr):  # noqa: N803
    """out = F(x) for 1-D complex `x` (`out` complex, real or bool), F a `@pk.func` of a
    complex value."""
    i = pk.global_id(0)
    out[i] = F(x[i])


@pk.kernel
def complex_math_binary_kernel(a: pk.Array, b: pk.Array, out: pk.Array,
                               F: pk.constexpr):  # noqa: N803
    """out = F(a, b) for 1-D complex arrays, F a `@pk.func` of two complex values."""
    i = pk.global_id(0)
    out[i] = F(a[i], b[i])
