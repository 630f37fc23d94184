"""The pykern kernels the benchmarks run, written with the public API as a user would.

Three ways to write elementwise add, measured side by side:

- `add`: one element per invocation, the natural kernel (grid = n).
- `add_x4`: four elements per invocation, a grid apart (grid = n / 4): invocations next to each
  other still touch neighbouring elements (coalesced), and each one has eight loads in flight
  before its first store.
- `add_grid_stride`: a loop over i, i + grid, i + 2 grid, ... with a grid sized to the device
  rather than to n (grid-stride loop).

benchmarks/elementwise.py runs them with the compiler's default workgroup size and `add` and
`add_x4` also with the other usual size (64 or 256 invocations).
"""

from __future__ import annotations

import pykern as pk


@pk.kernel
def add(a: pk.f32[:], b: pk.f32[:], c: pk.f32[:]):
    i = pk.global_id(0)
    c[i] = a[i] + b[i]


@pk.kernel
def add_x4(a: pk.f32[:], b: pk.f32[:], c: pk.f32[:]):
    i = pk.global_id(0)
    g = pk.grid(0)
    n = c.shape[0]
    if i + 3 * g < n:
        a0 = a[i]
        a1 = a[i + g]
        a2 = a[i + 2 * g]
        a3 = a[i + 3 * g]
        b0 = b[i]
        b1 = b[i + g]
        b2 = b[i + 2 * g]
        b3 = b[i + 3 * g]
        c[i] = a0 + b0
        c[i + g] = a1 + b1
        c[i + 2 * g] = a2 + b2
        c[i + 3 * g] = a3 + b3
    else:
        j = i
        while j < n:
            c[j] = a[j] + b[j]
            j += g


@pk.kernel
def add_grid_stride(a: pk.f32[:], b: pk.f32[:], c: pk.f32[:]):
    i = pk.global_id(0)
    g = pk.grid(0)
    n = c.shape[0]
    while i < n:
        c[i] = a[i] + b[i]
        i += g


@pk.kernel
def saxpy(alpha: pk.f32, x: pk.f32[:], y: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = alpha * x[i] + y[i]


@pk.kernel
def saxpy_x4(alpha: pk.f32, x: pk.f32[:], y: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    g = pk.grid(0)
    n = out.shape[0]
    if i + 3 * g < n:
        x0 = x[i]
        x1 = x[i + g]
        x2 = x[i + 2 * g]
        x3 = x[i + 3 * g]
        y0 = y[i]
        y1 = y[i + g]
        y2 = y[i + 2 * g]
        y3 = y[i + 3 * g]
        out[i] = alpha * x0 + y0
        out[i + g] = alpha * x1 + y1
        out[i + 2 * g] = alpha * x2 + y2
        out[i + 3 * g] = alpha * x3 + y3
    else:
        j = i
        while j < n:
            out[j] = alpha * x[j] + y[j]
            j += g
