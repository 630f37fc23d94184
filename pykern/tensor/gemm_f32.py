"""Candidate f32 GEMM kernels for GPUs without f32 cooperative matrices (CUDA cores).

Each candidate is one shared-memory GEMM in which every invocation computes an 8 x 8 block of
C, held in 64 plain scalar locals (eight 8-tuples: a tuple is lowered to its elements, so no
array is indexed at run time and the driver keeps every accumulator in a register, where the
`pk.local` blocks of `linalg` spill at 8 x 8). The k slices of A and B are staged in shared
memory, A's transposed (k-major) so that one k step reads 8 A values and 8 B values from two
shared rows; the next slice is fetched from global memory into registers while the current one
is multiplied, so there is one barrier pair per slice and the loads overlap the multiplies.

The candidates differ in their block of C (128 x 128 from a 16 x 16 workgroup, 64 x 128 from
8 x 16), the depth of a slice (8 or 16) and how an invocation's 8 rows and columns are laid
out in the block:

- strided: rows `ty + i * WGY` (i < 8), columns `tx + j * WGX`: every shared read of a warp is
  conflict-free, one 4-byte read per element;
- quad: two groups of 4 consecutive rows (`4 * ty + i` and `BM / 2 + 4 * ty + i`) and columns
  likewise: each group is 16-byte aligned in shared memory, which lets the driver read it as
  one 16-byte load (4 values per load instruction, a quarter warp on 64 consecutive bytes).

`candidates()` lists them as (name, launch) pairs, with the signature of `linalg._launch`:
`launch(a, b, c, accumulate)` for 4-d views (B1, B2, M, K), (B1, B2, K, N), (B1, B2, M, N)
of f32 (any strides; `accumulate` 1 adds the product to c). benchmarks/f32_gemm_candidates.py
times them; the fastest is for `linalg._choose`. They are correct on every device but meant
for GPUs: on lavapipe a launch loops K / BK times per invocation (its loop cap applies).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import pykern as pk
from pykern.tensor.gemm_tile import tile_position
from pykern.tensor.strided import cdiv
from pykern.tensor.tensor import Tensor

PAD = 4  # floats added to each shared row: keeps rows 16-byte aligned, shifts their banks


@dataclass(frozen=True)
class F32Tiling:
    """A WGX x WGY workgroup of 8 x 8 blocks: BM = 8 WGY rows, BN = 8 WGX columns of C, the
    k slices BK deep; `quad` lays an invocation's rows and columns out in groups of 4."""

    wgx: int
    wgy: int
    bk: int
    quad: bool

    @property
    def bm(self) -> int:
        return 8 * self.wgy

    @property
    def bn(self) -> int:
        return 8 * self.wgx

    @property
    def threads(self) -> int:
        return self.wgx * self.wgy

    @property
    def name(self) -> str:
        layout = "quad" if self.quad else "strided"
        return f"f32_{self.bm}x{self.bn}_k{self.bk}_{layout}"


TILINGS = (
    F32Tiling(16, 16, 8, quad=False),
    F32Tiling(16, 16, 8, quad=True),
    F32Tiling(16, 16, 16, quad=False),
    F32Tiling(16, 16, 16, quad=True),
    F32Tiling(16, 8, 8, quad=True),  # twice the workgroups: for outputs that fill few SMs
)

Launch = Callable[[Tensor, Tensor, Tensor, int], None]


def candidates() -> list[tuple[str, Launch]]:
    """(name, launch) for every candidate kernel; `launch(a, b, c, accumulate)` as above."""
    return [(t.name, functools.partial(launch, tiling=t)) for t in TILINGS]


def launch(a: Tensor, b: Tensor, c: Tensor, accumulate: int, tiling: F32Tiling,
           interpret: bool = False) -> None:
    """c = a @ b (+ c where `accumulate` is 1) with one candidate kernel, for 4-d f32 views
    (B1, B2, M, K), (B1, B2, K, N), (B1, B2, M, N)."""
    b1, b2, m, _ = a.shape
    n = b.shape[3]
    a_kfast = abs(a.element_strides[3]) <= abs(a.element_strides[2])
    b_nfast = abs(b.element_strides[3]) <= abs(b.element_strides[2])
    kern = _kernel(tiling, a_kfast, b_nfast, interpret)
    grid = (cdiv(n, tiling.bn) * tiling.wgx, cdiv(m, tiling.bm) * tiling.wgy, b1 * b2)
    kern[grid](a, b, c, accumulate)


# ------------------------------------------------------------ the micro-kernel's steps


@pk.func
def load_a(a, z1, z2, e, m0, k0, rd, kd, bm, bk):
    """Element e of the BM x BK slice of A at (m0, k0): its row is (e // rd) % bm and its k
    (e // kd) % bk; rows past the end read the last row, k past the end gives 0."""
    gm = min(m0 + (e // rd) % bm, a.shape[2] - 1)
    gk = k0 + (e // kd) % bk
    v = a[z1, z2, gm, min(gk, a.shape[3] - 1)]
    return pk.select(gk < a.shape[3], v, 0.0)


@pk.func
def load_b(b, z1, z2, e, n0, k0, nd, kd, bn, bk):
    """Element e of the BK x BN slice of B at (k0, n0), as `load_a` with columns for rows."""
    gn = min(n0 + (e // nd) % bn, b.shape[3] - 1)
    gk = k0 + (e // kd) % bk
    v = b[z1, z2, min(gk, b.shape[2] - 1), gn]
    return pk.select(gk < b.shape[2], v, 0.0)


@pk.func
def four_a(a, z1, z2, e, nt, m0, k0, rd, kd, bm, bk):
    """Elements e, e + nt, e + 2 nt, e + 3 nt of A's slice (an invocation's share)."""
    return (load_a(a, z1, z2, e, m0, k0, rd, kd, bm, bk),
            load_a(a, z1, z2, e + nt, m0, k0, rd, kd, bm, bk),
            load_a(a, z1, z2, e + 2 * nt, m0, k0, rd, kd, bm, bk),
            load_a(a, z1, z2, e + 3 * nt, m0, k0, rd, kd, bm, bk))


@pk.func
def four_b(b, z1, z2, e, nt, n0, k0, nd, kd, bn, bk):
    """Elements e, e + nt, e + 2 nt, e + 3 nt of B's slice."""
    return (load_b(b, z1, z2, e, n0, k0, nd, kd, bn, bk),
            load_b(b, z1, z2, e + nt, n0, k0, nd, kd, bn, bk),
            load_b(b, z1, z2, e + 2 * nt, n0, k0, nd, kd, bn, bk),
            load_b(b, z1, z2, e + 3 * nt, n0, k0, nd, kd, bn, bk))


@pk.func
def stash_four(s, vals, e, nt, md, kd, size, bk):
    """s[k, i] = vals[r] for the elements e + r nt (r < 4) of a slice (i = (e // md) % size,
    k = (e // kd) % bk): the slice stored k-major in shared memory."""
    s[(e // kd) % bk, (e // md) % size] = vals[0]
    s[((e + nt) // kd) % bk, ((e + nt) // md) % size] = vals[1]
    s[((e + 2 * nt) // kd) % bk, ((e + 2 * nt) // md) % size] = vals[2]
    s[((e + 3 * nt) // kd) % bk, ((e + 3 * nt) // md) % size] = vals[3]


@pk.func
def fetch8(s, k, p, step, half):
    """Row k of a shared slice at this invocation's 8 places: p + i step and p + half + i step
    for i < 4."""
    return (s[k, p], s[k, p + step], s[k, p + 2 * step], s[k, p + 3 * step],
            s[k, p + half], s[k, p + half + step], s[k, p + half + 2 * step],
            s[k, p + half + 3 * step])


@pk.func
def fma8(x, bv, acc):
    """acc[j] + x * bv[j] for j < 8, one rounding each: one k of one row of the block."""
    return (pk.fma(x, bv[0], acc[0]), pk.fma(x, bv[1], acc[1]), pk.fma(x, bv[2], acc[2]),
            pk.fma(x, bv[3], acc[3]), pk.fma(x, bv[4], acc[4]), pk.fma(x, bv[5], acc[5]),
            pk.fma(x, bv[6], acc[6]), pk.fma(x, bv[7], acc[7]))


@pk.func
def store_one(c, z1, z2, row, col, v, accumulate):
    """c[z1, z2, row, col] = v (plus the old value where `accumulate` is not 0) inside c."""
    if col < c.shape[3]:
        if accumulate != 0:
            v += c[z1, z2, row, col]
        c[z1, z2, row, col] = v


@pk.func
def store8(c, z1, z2, row, p, step, half, vals, accumulate):
    """One row of the block: vals[j] at the columns p + j step and p + half + j step (j < 4)."""
    if row < c.shape[2]:
        store_one(c, z1, z2, row, p, vals[0], accumulate)
        store_one(c, z1, z2, row, p + step, vals[1], accumulate)
        store_one(c, z1, z2, row, p + 2 * step, vals[2], accumulate)
        store_one(c, z1, z2, row, p + 3 * step, vals[3], accumulate)
        store_one(c, z1, z2, row, p + half, vals[4], accumulate)
        store_one(c, z1, z2, row, p + half + step, vals[5], accumulate)
        store_one(c, z1, z2, row, p + half + 2 * step, vals[6], accumulate)
        store_one(c, z1, z2, row, p + half + 3 * step, vals[7], accumulate)


# ------------------------------------------------------------ the kernel


@functools.lru_cache(maxsize=None)
def _kernel(t: F32Tiling, a_kfast: bool, b_nfast: bool, interpret: bool) -> pk.Kernel:
    WGX, WGY, BM, BN, BK, NT = t.wgx, t.wgy, t.bm, t.bn, t.bk, t.threads  # noqa: N806
    FOUR_A, FOUR_B = BM * BK // (4 * NT), BN * BK // (4 * NT)  # noqa: N806  (1 or 2 each)
    # slice element e -> (row, k) of A: consecutive invocations read along A's fastest index
    RD, KDA = (BK, 1) if a_kfast else (1, BM)  # noqa: N806
    ND, KDB = (1, BN) if b_nfast else (BK, 1)  # noqa: N806
    # an invocation's rows: p + i step and p + half + i step (i < 4); columns likewise
    RSTEP, CSTEP = (1, 1) if t.quad else (WGY, WGX)  # noqa: N806
    RMUL, CMUL = (4, 4) if t.quad else (1, 1)  # noqa: N806
    RHALF, CHALF = BM // 2, BN // 2  # noqa: N806
    # each invocation stages 4 or 8 elements of each slice (one or two `four_*` calls)
    assert BM * BK % (4 * NT) == 0 and BN * BK % (4 * NT) == 0 and FOUR_A <= 2 and FOUR_B <= 2

    @pk.kernel(workgroup=(WGX, WGY, 1), interpret=interpret)
    def matmul_f32(a: pk.f32[:, :, :, :], b: pk.f32[:, :, :, :], c: pk.f32[:, :, :, :],
                   accumulate: int):
        As = pk.shared(pk.f32, (BK, BM + PAD))  # A's slice transposed: k-major
        Bs = pk.shared(pk.f32, (BK, BN + PAD))
        tx, ty, m0, n0 = tile_position(BM, BN)
        tid = ty * WGX + tx
        z1, z2 = pk.unravel(pk.group_id(2), c.shape[:2])
        rp = ty * RMUL
        cp = tx * CMUL
        c0 = (0.0,) * 8
        c1 = c0
        c2 = c0
        c3 = c0
        c4 = c0
        c5 = c0
        c6 = c0
        c7 = c0
        # the first slice into registers; each iteration stores the slice it holds and
        # fetches the next while this one is multiplied
        xa = four_a(a, z1, z2, tid, NT, m0, 0, RD, KDA, BM, BK)
        if FOUR_A == 2:
            xa2 = four_a(a, z1, z2, tid + 4 * NT, NT, m0, 0, RD, KDA, BM, BK)
        xb = four_b(b, z1, z2, tid, NT, n0, 0, ND, KDB, BN, BK)
        if FOUR_B == 2:
            xb2 = four_b(b, z1, z2, tid + 4 * NT, NT, n0, 0, ND, KDB, BN, BK)
        for k0 in range(0, a.shape[3], BK):
            stash_four(As, xa, tid, NT, RD, KDA, BM, BK)
            if FOUR_A == 2:
                stash_four(As, xa2, tid + 4 * NT, NT, RD, KDA, BM, BK)
            stash_four(Bs, xb, tid, NT, ND, KDB, BN, BK)
            if FOUR_B == 2:
                stash_four(Bs, xb2, tid + 4 * NT, NT, ND, KDB, BN, BK)
            pk.barrier()
            k1 = k0 + BK
            if k1 < a.shape[3]:
                xa = four_a(a, z1, z2, tid, NT, m0, k1, RD, KDA, BM, BK)
                if FOUR_A == 2:
                    xa2 = four_a(a, z1, z2, tid + 4 * NT, NT, m0, k1, RD, KDA, BM, BK)
                xb = four_b(b, z1, z2, tid, NT, n0, k1, ND, KDB, BN, BK)
                if FOUR_B == 2:
                    xb2 = four_b(b, z1, z2, tid + 4 * NT, NT, n0, k1, ND, KDB, BN, BK)
            for kk in range(BK):
                av = fetch8(As, kk, rp, RSTEP, RHALF)
                bv = fetch8(Bs, kk, cp, CSTEP, CHALF)
                c0 = fma8(av[0], bv, c0)
                c1 = fma8(av[1], bv, c1)
                c2 = fma8(av[2], bv, c2)
                c3 = fma8(av[3], bv, c3)
                c4 = fma8(av[4], bv, c4)
                c5 = fma8(av[5], bv, c5)
                c6 = fma8(av[6], bv, c6)
                c7 = fma8(av[7], bv, c7)
            pk.barrier()
        r = m0 + rp
        n = n0 + cp
        store8(c, z1, z2, r, n, CSTEP, CHALF, c0, accumulate)
        store8(c, z1, z2, r + RSTEP, n, CSTEP, CHALF, c1, accumulate)
        store8(c, z1, z2, r + 2 * RSTEP, n, CSTEP, CHALF, c2, accumulate)
        store8(c, z1, z2, r + 3 * RSTEP, n, CSTEP, CHALF, c3, accumulate)
        store8(c, z1, z2, r + RHALF, n, CSTEP, CHALF, c4, accumulate)
        store8(c, z1, z2, r + RHALF + RSTEP, n, CSTEP, CHALF, c5, accumulate)
        store8(c, z1, z2, r + RHALF + 2 * RSTEP, n, CSTEP, CHALF, c6, accumulate)
        store8(c, z1, z2, r + RHALF + 3 * RSTEP, n, CSTEP, CHALF, c7, accumulate)

    return matmul_f32
