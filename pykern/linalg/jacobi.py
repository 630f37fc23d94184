"""The one-sided Jacobi driver: orthogonalises the rows of a batch of matrices in place and
returns them sorted by norm, with the accumulated rotations. `svd` and `eigh` are built on it.

Small matrices sweep in shared memory, many per launch (the sweep count per launch kept under
the device's loop-iteration cap); larger ones sweep over global memory: on GPUs one launch per
step of a round-robin over blocks of BLOCK rows, a workgroup rotating all the pairs of its two
blocks' rows held in registers (the sweep's launches recorded once and replayed); on CPU
devices one launch per step of the rows' round-robin, an invocation per pair. After each
launch of sweeps (each sweep, for the larger ones) the host reads one flag per matrix, and
stops once no pair rotated in a whole sweep. Real and complex (c64, c128) matrices run the
same kernels; norms, values and tolerances are in the real dtype.
"""

from __future__ import annotations

import functools
import math

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.linalg import jacobi_kernels as jk
from pykern.tensor.create.creation import eye, fill, zeros
from pykern.runtime import get_device
from pykern.tensor.core.device_limits import is_cpu_device, loop_budget
from pykern.linalg.blocks import in_chunks
from pykern.tensor.core.stand_in import stand_in
from pykern.tensor.core.strided import cdiv
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.complex.complex_elementwise import conj
from pykern.tensor.gemm.matmul import matmul

MAX_SWEEPS = 30  # Jacobi converges quadratically: 5 to 10 sweeps in practice
BLOCK = 8  # rows of a block of the GPUs' sweeps (a workgroup rotates two blocks' rows)
STEPS_PER_CHUNK = 32  # steps of a sweep recorded (and submitted to the device) at a time


def tolerance(dtype: DType, length: int) -> float:
    """The relative orthogonality below which a pair is left alone: a few roundings of a dot
    product of `length` terms (of the real dtype's ε for complex `dtype`)."""
    eps = 2.0 ** -23 if dtype.real_dtype == dt.f32 else 2.0 ** -52
    return 2.0 * math.sqrt(max(length, 1)) * eps


def padded_rows(rows: int) -> int:
    """The even row count the round-robin ordering needs (at least 2); the padding row is
    zero, and no rotation touches it."""
    return max(2, rows + rows % 2)


def orthogonalise(w: Tensor, with_v: bool) -> Tensor | None:
    """Rotates the rows of the contiguous (B, R, L) tensor `w` (R even) until they are
    pairwise orthogonal; returns the rotations as Vt (B, R, R) with Vt·W₀ = W, or None without
    `with_v`."""
    batch, r, length = w.shape
    flags = empty((batch,), dt.i32)
    tol = tolerance(w.dtype, length)
    plan = _shared_plan(w.dtype, r, length, with_v)
    if plan is None:
        vt = _identity(batch, r, w.dtype) if with_v else stand_in(w.dtype, (1, 1, 1))
        _global_sweeps(w, vt, flags, tol, with_v)
    else:
        vt = empty((batch, r, r), w.dtype) if with_v else stand_in(w.dtype, (1, 1, 1))
        _shared_sweeps(w, vt, flags, tol, with_v, plan)
    return vt if with_v else None


def _identity(batch: int, r: int, dtype: DType) -> Tensor:
    return eye(r, dtype=dtype).broadcast_to((batch, r, r)).copy()


def _shared_plan(dtype: DType, r: int, length: int, with_v: bool) -> tuple[int, int] | None:
    """(matrices per workgroup, sweeps per launch) of the shared-memory sweeps, or None where a
    matrix does not fit in shared memory or one sweep exceeds the loop-iteration cap."""
    per_matrix = r * (length + (r if with_v else 0))
    capacity = jk.SHARED_BYTES // dtype.itemsize
    if per_matrix > capacity or r // 2 > jk.SHARED_THREADS:
        return None
    groups = min(capacity // per_matrix, jk.SHARED_THREADS // (r // 2))
    budget = loop_budget()
    per_sweep = (r - 1) * (2 * length + r + 2) + 2
    sweeps = MAX_SWEEPS
    if budget is not None:
        moves = 4 * cdiv(r * (length + r), r // 2)  # loading and storing W and Vt
        sweeps = (budget - moves) // per_sweep
        if sweeps < 1:
            return None
    return groups, min(sweeps, MAX_SWEEPS)


def _shared_sweeps(w: Tensor, vt: Tensor, flags: Tensor, tol: float, with_v: bool,
                   plan: tuple[int, int]) -> None:
    groups, sweeps = plan
    batch, r, length = w.shape
    kern = jk.shared_sweeps(w.dtype, with_v)
    done = 0
    while done < MAX_SWEEPS:
        kern[cdiv(batch, groups) * jk.SHARED_THREADS](w, vt, flags, r, length, batch, groups,
                                                      sweeps, tol, int(done == 0))
        done += sweeps
        if not flags.numpy().any():
            return


def _global_sweeps(w: Tensor, vt: Tensor, flags: Tensor, tol: float, with_v: bool) -> None:
    if not is_cpu_device():
        _block_sweeps(w, vt, tol, with_v)
        return
    batch, r, _ = w.shape
    step = jk.step_by_invocations(w.dtype, with_v)
    for _ in range(MAX_SWEEPS):
        fill(flags, 0)
        for s in range(r - 1):
            step[(r // 2, batch)](w, vt, flags, r, s, tol)
        if not flags.numpy().any():
            return


def _block_sweeps(w: Tensor, vt: Tensor, tol: float, with_v: bool) -> None:
    """The GPUs' sweeps by pairs of blocks of BLOCK rows (`jk.step_by_blocks`): rows padded with
    zeros to a multiple of 2·BLOCK (a zero row never rotates), each sweep's launches recorded
    once and replayed, STEPS_PER_CHUNK at a time, each submitted as soon as recorded
    (`blocks.in_chunks`), one flag per matrix read after each sweep."""
    batch, r, length = w.shape
    rows = -(-r // (2 * BLOCK)) * 2 * BLOCK
    if rows != r:
        padded = zeros((batch, rows, length), w.dtype)
        padded[:, :r, :] = w
        vt_padded = _identity(batch, rows, w.dtype) if with_v else vt
        _block_sweeps(padded, vt_padded, tol, with_v)
        w[...] = padded[:, :r, :]
        if with_v:
            vt[...] = vt_padded[:, :r, :r]
        return
    per = max(1, 16 // BLOCK)  # columns an invocation keeps of each row: 2·BLOCK·per registers
    threads = min(1024, max(32, 1 << (cdiv(max(length, r), per) - 1).bit_length()))
    groups = cdiv(threads, get_device().info.features.subgroup_size)
    kernel = jk.step_by_blocks(w.dtype, with_v, threads, cdiv(length, threads),
                               cdiv(r, threads) if with_v else 1, BLOCK, groups)
    blocks = r // BLOCK
    key = ("linalg.jacobi_sweep", with_v, threads, BLOCK, tol)
    for _ in range(MAX_SWEEPS):
        flags = zeros((batch,), dt.i32)
        steps = functools.partial(_block_steps, kernel, w, vt, flags, blocks, threads, tol)
        in_chunks(key, (w, vt, flags), blocks - 1, steps, STEPS_PER_CHUNK)
        if not flags.numpy().any():
            return


def _block_steps(kernel: object, w: Tensor, vt: Tensor, flags: Tensor, blocks: int,
                 threads: int, tol: float, lo: int, hi: int) -> None:
    """Steps lo..hi of a sweep (every pair of blocks once a sweep)."""
    for step in range(lo, hi):
        kernel[(blocks // 2) * threads, w.shape[0]](w, vt, flags, blocks, step, tol)


def sorted_rows(w: Tensor, vt: Tensor | None, count: int, shift: Tensor | None,
                descending: bool, long: Tensor | None, short: Tensor | None) -> Tensor:
    """The norms of the first `count` rows of the orthogonalised `w` (B, R, L), minus
    `shift` (B,), sorted (ties by index); the normalised rows of `w` written to `long`
    (B, ≤count, L) and the conjugated rows of `vt` (their first short.shape[2] entries: rows
    of Vᴴ) to `short`, both in the sorted order, where given."""
    batch, r, _ = w.shape
    real = w.dtype.real_dtype
    norms = empty((batch, r), real)
    jk.row_norms(w.dtype)[r, batch](w, norms)
    values = empty((batch, count), real)
    dummy = stand_in(w.dtype, (1, 1, 1))
    shift_t = stand_in(real, (batch,)) if shift is None else shift
    jk.sorted_outputs(w.dtype)[count, batch](
        norms, w, dummy if vt is None else vt, shift_t, values, dummy if long is None else long,
        dummy if short is None else short, int(descending), int(long is not None),
        int(short is not None))
    return values


def complete_rows(values: Tensor, long: Tensor, rows: int) -> None:
    """Completes `long` (B, rows, L), whose first k_b rows (k_b: the positive `values` of
    matrix b) are orthonormal and the rest zero or unset, to `rows` orthonormal rows: the
    others come from the one-sided Jacobi of the projector I - QᵀQ onto what Q (the first k
    rows) leaves out, whose nonzero rows span exactly that (I - QᴴQ for complex rows: its rows
    are the projections of the unit vectors, orthogonal to Q's rows under x·conj(y))."""

    batch, _, length = long.shape
    k = values.shape[1]
    q = long[:, :k, :]
    qh = conj(q).mT if long.dtype.is_complex else q.mT
    projector = _identity(batch, length, long.dtype) - matmul(qh, q)
    r = padded_rows(length)
    w = zeros((batch, r, length), long.dtype)
    w[:, :length, :] = projector
    orthogonalise(w, with_v=False)
    basis = empty((batch, length, length), long.dtype)
    sorted_rows(w, None, length, None, True, basis, None)
    jk.completed_rows(long.dtype)[rows, batch](values, basis, long)
