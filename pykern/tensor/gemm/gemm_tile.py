"""The GEMM micro-kernel that matmul (linalg) and conv2d's implicit GEMM (nn) share.

A workgroup of WGX×WGY invocations computes a BM×BN tile of the output; each invocation keeps
its TM×TN block in a `pk.local` accumulator `acc`, whose element (i, j) is the output at row
`ty + i·WGY` and column `tx + j·WGX` of the tile (strided, so that neighbouring invocations
read neighbouring shared-memory columns). These `@pk.func`s take the kernel's `pk.local` and
`pk.shared` arrays by reference; their loops run over the arrays' constant sizes.

`step` is a compile-time `@pk.func`: `fused_step` (one fma, one rounding, for float
accumulators) or `wrapping_step` (integers); `step_for(acc_dtype)` picks it.
"""

from __future__ import annotations

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.lang.func import Func


@pk.func
def tile_position(bm, bn):
    """(tx, ty, m0, n0): this invocation's place in its WGX×WGY workgroup and the first row and
    column of the workgroup's BM×BN output tile (groups run along N in x, along M in y)."""
    return pk.local_id(0), pk.local_id(1), pk.group_id(1) * bm, pk.group_id(0) * bn


@pk.func
def fused_step(a, b, acc):
    """acc + a·b with one rounding: twice the rate of a multiply and an add."""
    return pk.fma(a, b, acc)


@pk.func
def wrapping_step(a, b, acc):
    """acc + a·b for integer accumulators (wrapping, as numpy's)."""
    return acc + a * b


def step_for(acc: DType) -> Func:
    """The multiply-accumulate step of an accumulator dtype."""
    return fused_step if acc.is_float else wrapping_step


@pk.func
def accumulate_outer(acc, av, bv, step):
    """acc[i, j] = step(av[i], bv[j], acc[i, j]) over the TM×TN block: one k of the product."""
    for i in range(av.shape[0]):
        for j in range(bv.shape[0]):
            acc[i, j] = step(av[i], bv[j], acc[i, j])


@pk.func
def multiply_tiles(As, Bs, acc, av, bv, tx, ty, wgx, wgy, step):
    """acc += this invocation's part of As ⋅ Bs for one BK-deep slice staged in shared memory:
    As is the A slice transposed (BK × BM, k-major), Bs the B slice (BK × BN); av and bv are
    the invocation's TM and TN register copies of one k-row of each."""
    for kk in range(As.shape[0]):
        for i in range(av.shape[0]):
            av[i] = As[kk, ty + i * wgy]
        for j in range(bv.shape[0]):
            bv[j] = Bs[kk, tx + j * wgx]
        accumulate_outer(acc, av, bv, step)


@pk.func
def store_tile(c, z1, z2, acc, row0, col0, wgx, wgy, accumulate):
    """c[z1, z2, row0 + i·wgy, col0 + j·wgx] = acc[i, j] (plus the old value where
    `accumulate` is not 0, when K is split over launches), for the rows and columns inside c."""
    for i in range(acc.shape[0]):
        row = row0 + i * wgy
        if row < c.shape[2]:
            for j in range(acc.shape[1]):
                col = col0 + j * wgx
                if col < c.shape[3]:
                    v = acc[i, j]
                    if accumulate != 0:
                        v += acc.dtype(c[z1, z2, row, col])
                    c[z1, z2, row, col] = v
