"""Candidate f32 GEMM kernels for GPUs without f32 cooperative matrices (CUDA cores).

Each candidate is one shared-memory GEMM in which every invocation computes an 8 x 8 block of C,
held in 64 plain scalar locals (a 64-tuple, updated by loops over `pk.static_range`: a tuple is
lowered to its elements, so no array is indexed at run time and the driver keeps every accumulator
in a register, where the `pk.local` blocks of `linalg` spill at 8 x 8). The k slices of A and B are
staged in shared memory, A's transposed (k-major) so that one k step reads 8 A values and 8 B values
from two shared rows; the next slice is fetched from global memory into registers while the current
one is multiplied, so there is one barrier pair per slice and the loads overlap the multiplies.

The candidates differ in their block of C (128 x 128 from a 16 x 16 workgroup, 64 x 128 from
16 x 8), the depth of a slice (8 or 16) and how an invocation's 8 rows and columns are laid
out in the block, and whether the global loads move 4 or 8 bytes:

- strided: rows `ty + i * WGY` (i < 8), columns `tx + j * WGX`: every shared read of a warp is
  conflict-free, one 4-byte read per element;
- quad: two groups of 4 consecutive rows (`4 * ty + i` and `BM / 2 + 4 * ty + i`) and columns
  likewise: each group is 16-byte aligned in shared memory, which lets the driver read it as
  one 16-byte load (4 values per load instruction, a quarter warp on 64 consecutive bytes);
- u64: the global loads read two f32 at once, the operands viewed as u64 words over the same
  memory (`_pairs`) and each word split back with `pk.bitcast`, where every row of A (along K)
  and of B (along N) is contiguous, of even length and starts on an 8-byte boundary; other
  operands (transposed views, odd K or N) and devices without 64-bit integers take the 4-byte
  loads of the same tiling.

`candidates()` lists them as (name, launch) pairs, with the signature of `linalg._launch`:
`launch(a, b, c, accumulate)` for 4-d views (B1, B2, M, K), (B1, B2, K, N), (B1, B2, M, N)
of f32 (any strides; `accumulate` 1 adds the product to c). benchmarks/f32_gemm_candidates.py
times them; the fastest is for `linalg._choose`. They are correct on every device but meant
for GPUs: on lavapipe a launch loops K / BK times per invocation (its loop cap applies).
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace

import pykern as pk
from pykern.lang.func import Func
from pykern.tensor.gemm.gemm_tile import tile_position
from pykern.tensor.core.strided import cdiv, view
from pykern.tensor.core.tensor import Tensor

PAD = 4  # floats added to each shared row: keeps rows 16-byte aligned, shifts their banks


@dataclass(frozen=True)
class F32Tiling:
    """A WGX x WGY workgroup of 8 x 8 blocks: BM = 8 WGY rows, BN = 8 WGX columns of C, the
    k slices BK deep; `quad` lays an invocation's rows and columns out in groups of 4."""

    wgx: int
    wgy: int
    bk: int
    quad: bool
    words: bool = False  # global loads as u64 pairs of f32 where the operands allow


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
        return f"f32_{self.bm}x{self.bn}_k{self.bk}_{layout}" + ("_u64" if self.words else "")


TILINGS = (
    F32Tiling(16, 16, 8, quad=False),
    F32Tiling(16, 16, 8, quad=True),
    F32Tiling(16, 16, 16, quad=True),
    F32Tiling(16, 8, 8, quad=True),  # twice the workgroups: for outputs that fill few SMs
    F32Tiling(16, 16, 8, quad=True, words=True),
    F32Tiling(16, 16, 16, quad=True, words=True),
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
    wide = tiling.words and c.device.info.features.int64  # type: ignore[attr-defined]
    words = (_pairs(a), _pairs(b)) if wide else (None, None)
    if None in words:
        words = None  # the operands' rows are not whole aligned pairs: 4-byte loads
        tiling = replace(tiling, words=False)
    kern = _kernel(tiling, a_kfast, b_nfast, interpret)
    grid = (cdiv(n, tiling.bn) * tiling.wgx, cdiv(m, tiling.bm) * tiling.wgy, b1 * b2)
    kern[grid](*(words or (a, b)), c, accumulate)


def log2(n: int) -> int:
    """The exponent of a power of two."""
    assert n > 0 and n & (n - 1) == 0, n
    return n.bit_length() - 1


def _pairs(t: Tensor) -> Tensor | None:
    """A 4-d f32 view as u64 words of two consecutive elements of its last dimension, over the
    same memory; None unless that dimension is contiguous, of even size, and every row starts
    on an 8-byte boundary (even offset and strides)."""
    *lead, last = t.element_strides
    if last != 1 or t.shape[-1] % 2 or t.offset % 2 or any(s % 2 for s in lead):
        return None
    words = Tensor(t.buffer, t.shape, pk.u64, t.element_strides, 0)
    return view(words, t.shape[:-1] + (t.shape[-1] // 2,), tuple(s // 2 for s in lead) + (1,),
                t.offset // 2)


# ------------------------------------------------------------ the micro-kernel's steps
# Every size here is a power of two, so slice positions are shifts and masks: `digit`. (An
# i32 // or % keeps Python's floor semantics, which costs a few more instructions each.)


@pk.func
def digit(e, shift, size):
    """(e // 2**shift) % size for a power-of-two size, as two bit operations."""
    return (e >> shift) & (size - 1)



@pk.func
def load_a(a, z1, z2, e, m0, k0, rs, ks, bm, bk):
    """Element e of the BM x BK slice of A at (m0, k0): its row is digit(e, rs, bm) and its k
    digit(e, ks, bk); rows past the end read the last row, k past the end gives 0."""
    gm = min(m0 + digit(e, rs, bm), a.shape[2] - 1)
    gk = k0 + digit(e, ks, bk)
    v = a[z1, z2, gm, min(gk, a.shape[3] - 1)]
    return pk.select(gk < a.shape[3], v, 0.0)


@pk.func
def load_b(b, z1, z2, e, n0, k0, ns, ks, bn, bk):
    """Element e of the BK x BN slice of B at (k0, n0), as `load_a` with columns for rows."""
    gn = min(n0 + digit(e, ns, bn), b.shape[3] - 1)
    gk = k0 + digit(e, ks, bk)
    v = b[z1, z2, min(gk, b.shape[2] - 1), gn]
    return pk.select(gk < b.shape[2], v, 0.0)


@pk.func
def stash_element(s, v, e, ms, ks, size, bk):
    """s[k, i] = v for element e of a slice (i = digit(e, ms, size), k = digit(e, ks, bk)): the
    slice stored k-major in shared memory (A's transposed, B's as it is)."""
    s[digit(e, ks, bk), digit(e, ms, size)] = v


# The same steps with 8-byte loads: `aw`, `bw` are A and B as u64 words of two f32 of a row
# (A's k, B's n; `_pairs`), so a slice row holds wpr = BK / 2 words of A, BN / 2 of B. A
# word's functions take the signatures of an element's (both slice sizes, one of them unused).


@pk.func
def word_a(aw, z1, z2, e, m0, k0, ws, wpr, bm, bk):
    """Word e of the BM x BK slice of A at (m0, k0): row digit(e, ws, bm), k pair
    digit(e, 0, wpr) (wpr = 2**ws words per row)."""
    gm = min(m0 + digit(e, ws, bm), aw.shape[2] - 1)
    gw = (k0 >> 1) + digit(e, 0, wpr)
    w = aw[z1, z2, gm, min(gw, aw.shape[3] - 1)]
    return pk.select(gw < aw.shape[3], w, pk.u64(0))


@pk.func
def word_b(bw, z1, z2, e, n0, k0, ws, wpr, bn, bk):
    """Word e of the BK x BN slice of B at (k0, n0): k digit(e, ws, bk), column pair
    digit(e, 0, wpr)."""
    gk = k0 + digit(e, ws, bk)
    gw = (n0 >> 1) + digit(e, 0, wpr)
    w = bw[z1, z2, min(gk, bw.shape[2] - 1), min(gw, bw.shape[3] - 1)]
    return pk.select(gk < bw.shape[2], w, pk.u64(0))


@pk.func
def low_f32(w):
    """The f32 of a word that comes first in memory (the low half: little-endian)."""
    return pk.bitcast(pk.u32(w & 0xFFFFFFFF), pk.f32)


@pk.func
def high_f32(w):
    """The f32 of a word that comes second in memory."""
    return pk.bitcast(pk.u32(w >> 32), pk.f32)


@pk.func
def stash_word_a(s, w, e, ws, wpr, bm, bk):
    """Word e of A's slice into the k-major shared slice: two k rows of one column."""
    row = digit(e, ws, bm)
    s[2 * digit(e, 0, wpr), row] = low_f32(w)
    s[2 * digit(e, 0, wpr) + 1, row] = high_f32(w)


@pk.func
def stash_word_b(s, w, e, ws, wpr, bn, bk):
    """Word e of B's slice: two neighbouring columns of one k row."""
    kb = digit(e, ws, bk)
    s[kb, 2 * digit(e, 0, wpr)] = low_f32(w)
    s[kb, 2 * digit(e, 0, wpr) + 1] = high_f32(w)


def _fetches(read: Func) -> tuple[Func, Func, Func]:
    """(two, four, eight): the elements (or words) e + r nt, r < 2, 4 or 8, of one operand's
    slice, an invocation's share, each read with `read` (`load_a`, `word_b`, ...); s1 and s2
    say where e's indices lie, as `read` takes them (the kernel's DA1, DA2 or DB1, DB2)."""

    @pk.func
    def two(src, z1, z2, e, nt, o0, k0, s1, s2, bo, bk):
        """Elements e and e + nt of the slice at (o0, k0) (m0 or n0, k0)."""
        return (read(src, z1, z2, e, o0, k0, s1, s2, bo, bk),
                read(src, z1, z2, e + nt, o0, k0, s1, s2, bo, bk))

    @pk.func
    def four(src, z1, z2, e, nt, o0, k0, s1, s2, bo, bk):
        """Elements e + r nt (r < 4) of the slice."""
        first = two(src, z1, z2, e, nt, o0, k0, s1, s2, bo, bk)
        rest = two(src, z1, z2, e + 2 * nt, nt, o0, k0, s1, s2, bo, bk)
        return first + rest

    @pk.func
    def eight(src, z1, z2, e, nt, o0, k0, s1, s2, bo, bk):
        """Elements e + r nt (r < 8) of the slice."""
        first = four(src, z1, z2, e, nt, o0, k0, s1, s2, bo, bk)
        rest = four(src, z1, z2, e + 4 * nt, nt, o0, k0, s1, s2, bo, bk)
        return first + rest

    return two, four, eight


def _stashes(put: Func) -> tuple[Func, Func, Func]:
    """(two, four, eight): the values `_fetches` read (2, 4 or 8 of them, for the elements
    e + r nt) into the shared slice, each stored with `put` (`stash_element`, ...)."""

    @pk.func
    def two(s, vals, e, nt, s1, s2, bo, bk):
        """vals[0] and vals[1] for the elements e and e + nt."""
        put(s, vals[0], e, s1, s2, bo, bk)
        put(s, vals[1], e + nt, s1, s2, bo, bk)

    @pk.func
    def four(s, vals, e, nt, s1, s2, bo, bk):
        """vals[r] for the elements e + r nt (r < 4)."""
        two(s, vals[:2], e, nt, s1, s2, bo, bk)
        two(s, vals[2:], e + 2 * nt, nt, s1, s2, bo, bk)

    @pk.func
    def eight(s, vals, e, nt, s1, s2, bo, bk):
        """vals[r] for the elements e + r nt (r < 8)."""
        four(s, vals[:4], e, nt, s1, s2, bo, bk)
        four(s, vals[4:], e + 4 * nt, nt, s1, s2, bo, bk)

    return two, four, eight


def _steps(read_a: Func, read_b: Func, put_a: Func,
           put_b: Func) -> dict[int, tuple[Func, Func, Func, Func]]:
    """(fetch A, fetch B, stash A, stash B) by the number of elements (or words) an invocation
    stages per slice: 2, 4 or 8."""
    fa, fb, sa = _fetches(read_a), _fetches(read_b), _stashes(put_a)
    sb = sa if put_b is put_a else _stashes(put_b)
    return {n: (fa[i], fb[i], sa[i], sb[i]) for i, n in enumerate((2, 4, 8))}


SCALAR_STEPS = _steps(load_a, load_b, stash_element, stash_element)
WORD_STEPS = _steps(word_a, word_b, stash_word_a, stash_word_b)


@pk.func
def fetch8(s, k, p, step, half):
    """Row k of a shared slice at this invocation's 8 places: p + i step and p + half + i step
    for i < 4."""
    return (s[k, p], s[k, p + step], s[k, p + 2 * step], s[k, p + 3 * step],
            s[k, p + half], s[k, p + half + step], s[k, p + half + 2 * step],
            s[k, p + half + 3 * step])


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
    SOURCE = pk.u64 if t.words else pk.f32  # noqa: N806  (what a and b hold)
    PER = 2 if t.words else 1  # noqa: N806  (f32 per element of a and b)
    steps = WORD_STEPS if t.words else SCALAR_STEPS
    share_a, share_b = BM * BK // (NT * PER), BN * BK // (NT * PER)  # staged per invocation
    assert share_a * NT * PER == BM * BK and share_b * NT * PER == BN * BK
    FETCH_A, STASH_A = steps[share_a][0], steps[share_a][2]  # noqa: N806
    FETCH_B, STASH_B = steps[share_b][1], steps[share_b][3]  # noqa: N806
    # where element (or word) e of a slice goes: digit(e, shift, size) for each index
    if t.words:  # A: (row, k pair) = (digit(e, DA1, BM), digit(e, 0, DA2)); B: (k, pair)
        DA1, DA2, DB1, DB2 = log2(BK // 2), BK // 2, log2(BN // 2), BN // 2  # noqa: N806
    else:  # consecutive invocations read along each operand's fastest index
        DA1, DA2 = (log2(BK), 0) if a_kfast else (0, log2(BM))  # noqa: N806
        DB1, DB2 = (0, log2(BN)) if b_nfast else (log2(BK), 0)  # noqa: N806
    # an invocation's rows: p + i step and p + half + i step (i < 4); columns likewise
    RSTEP, CSTEP = (1, 1) if t.quad else (WGY, WGX)  # noqa: N806
    RMUL, CMUL = (4, 4) if t.quad else (1, 1)  # noqa: N806
    RHALF, CHALF = BM // 2, BN // 2  # noqa: N806

    @pk.kernel(workgroup=(WGX, WGY, 1), interpret=interpret)
    def matmul_f32(a: SOURCE[:, :, :, :], b: SOURCE[:, :, :, :], c: pk.f32[:, :, :, :],
                   accumulate: int):
        As = pk.shared(pk.f32, (BK, BM + PAD))  # A's slice transposed: k-major
        Bs = pk.shared(pk.f32, (BK, BN + PAD))
        tx, ty, m0, n0 = tile_position(BM, BN)
        tid = ty * WGX + tx
        z1, z2 = pk.unravel(pk.group_id(2), c.shape[:2])
        K = a.shape[3] * PER
        rp = ty * RMUL
        cp = tx * CMUL
        acc = (0.0,) * 64  # the 8 x 8 block, acc[8 i + j] at row place i, column place j
        # the first slice into registers; each iteration stores the slice it holds and
        # fetches the next while this one is multiplied
        xa = FETCH_A(a, z1, z2, tid, NT, m0, 0, DA1, DA2, BM, BK)
        xb = FETCH_B(b, z1, z2, tid, NT, n0, 0, DB1, DB2, BN, BK)
        for k0 in range(0, K, BK):
            STASH_A(As, xa, tid, NT, DA1, DA2, BM, BK)
            STASH_B(Bs, xb, tid, NT, DB1, DB2, BN, BK)
            pk.barrier()
            k1 = k0 + BK
            if k1 < K:
                xa = FETCH_A(a, z1, z2, tid, NT, m0, k1, DA1, DA2, BM, BK)
                xb = FETCH_B(b, z1, z2, tid, NT, n0, k1, DB1, DB2, BN, BK)
            for kk in range(BK):
                av = fetch8(As, kk, rp, RSTEP, RHALF)
                bv = fetch8(Bs, kk, cp, CSTEP, CHALF)
                for i in pk.static_range(8):
                    for j in pk.static_range(8):
                        acc[8 * i + j] = pk.fma(av[i], bv[j], acc[8 * i + j])
            pk.barrier()
        for i in pk.static_range(8):  # row places p + i step (i < 4) and p + half + ...
            store8(c, z1, z2, m0 + rp + (i % 4) * RSTEP + (i // 4) * RHALF, n0 + cp, CSTEP,
                   CHALF, acc[8 * i:8 * i + 8], accumulate)

    return matmul_f32
