"""Linear algebra: `pk.matmul`, batched and broadcasting as numpy's.

Kernels: a shared-memory tiled GEMM (each workgroup computes a BM×BN tile of the output, staging
BK-deep slices of A and B in `pk.shared` arrays between barriers; each invocation accumulates a
TM×TN block in registers), a register-blocked variant without shared memory that runs faster
on CPU Vulkan implementations (lavapipe), strips of rows register-blocked for LLVM's
vectorisers on the host device (`gemm_host`), and a one-output-per-invocation kernel for small
outputs. Every kernel reads its operands through their own strides, so transposed, sliced and
broadcast operands are used in place.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass

import pykern as pk

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.autograd.mode import no_grad
from pykern.tensor.gemm.matmul_backward import record_matmul
from pykern.ops.public import declare, torch_names
from pykern.tensor.gemm import gemm_f32, gemm_host
from pykern.tensor.core.autocast import low_precision
from pykern.tensor.gemm import coop_tiling, gemm_coop
from pykern.tensor.core.dispatch import dispatch
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.create.creation import fill
from pykern.ops.choice import (compute_units, config, on_cpu, on_gpu, on_host, subgroup_lanes,
                               tune)
from pykern.ops.registry import Impl, always
from pykern.runtime import get_device
from pykern.tensor.core.device_limits import loop_budget
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.complex import complex_layout
from pykern.tensor.gemm.gemm_tile import (accumulate_outer, multiply_tiles, step_for, store_tile,
                                     tile_position)
from pykern.tensor.core.promotion import accumulator, promote
from pykern.tensor.core.strided import (
    batch_pieces, broadcast_shapes, broadcast_strides, cdiv, prod, view)
from pykern.tensor.elementwise.functions import assign
from pykern.tensor.reduce.reduction import sum as reduce_sum

MATMUL_DTYPES = (dt.bool_, dt.i8, dt.i16, dt.i32, dt.i64, dt.u8, dt.u16, dt.u32, dt.u64, dt.f16,
                 dt.f32, dt.f64, dt.bf16)


@dataclass(frozen=True)
class TileConfig:
    """A GEMM tiling: a WGX×WGY workgroup, each invocation computes TM×TN outputs; the workgroup
    covers BM = WGY·TM rows and BN = WGX·TN columns and steps through K by BK."""

    wgx: int
    wgy: int
    tm: int
    tn: int
    bk: int
    shared: bool = True

    @property
    def bm(self) -> int:
        return self.wgy * self.tm

    @property
    def bn(self) -> int:
        return self.wgx * self.tn

    @property
    def threads(self) -> int:
        """Invocations per workgroup."""
        return self.wgx * self.wgy

    @property
    def loads_a(self) -> int:
        """Elements of the BM×BK slice of A each invocation stages in shared memory."""
        return cdiv(self.bm * self.bk, self.threads)

    @property
    def loads_b(self) -> int:
        """Elements of the BK×BN slice of B each invocation stages."""
        return cdiv(self.bn * self.bk, self.threads)


# GPUs: 64×128 tiles of 4×8 per invocation (256 invocations), K by 8; 64×64 (4×4) when the
# output has too few tiles to fill the GPU. Measured on an H200 (f32, 2048² and 4096²):
# 14.6 / 12.9 TFLOP/s; 8×8 per invocation spills (2.2 TFLOP/s), BK = 32 halves the rate.
GPU_TILE = TileConfig(16, 16, 4, 8, 8)
GPU_SMALL = TileConfig(16, 16, 4, 4, 8)
F32_GPU = gemm_f32.F32Tiling(16, 8, 8, quad=True)  # the fastest of gemm_f32's candidates
# lavapipe: barriers and shared memory cost more than they save; 8×8 blocks from registers
CPU_TILE = TileConfig(8, 8, 8, 8, 1, shared=False)
# the host device: strips of 96 rows per invocation, register-blocked for LLVM (gemm_host)
HOST_TILE = TileConfig(1, 1, gemm_host.TM * gemm_host.ROW_BLOCKS, 16, 1, shared=False)
SMALL_OUTPUT = 256  # outputs per matrix below which one invocation computes one output
# tests set this to run one kernel on every shape (None: chosen per problem and device)
FORCE_CONFIG: TileConfig | None = None


def matmul(a: object, b: object, dtype: object = None) -> Tensor:
    """The matrix product of `a` and `b`, as numpy's `matmul` (and Python's `@`).

    Operands of 2 or more dimensions are stacks of matrices in the last two; the leading
    (batch) dimensions broadcast. A 1-d `a` is a row vector and a 1-d `b` a column vector, whose
    dimension is dropped from the result. The result dtype follows type promotion (ints with
    floats give the float); integer products wrap as in numpy; bool gives bool (any of ands).
    f16 accumulates in f32, narrow integers in 32 bits. `dtype=` (as numpy's) gives the result
    that dtype instead, the products computed in it: `pk.matmul(a_i8, b_i8, dtype=pk.i32)` is
    exact where the promoted i8 would wrap, and runs on the tensor cores where they take i8.

        c = pk.matmul(a, b)          # (..., M, K) @ (..., K, N) -> (..., M, N)
    """
    a, b = as_tensor(a, "matmul: a"), as_tensor(b, "matmul: b")
    special = _other_path(a, b, dtype, matmul)
    if special is not None:
        return special
    # the plan's key holds what picks the kernels besides the operands: a forced tiling (tests,
    # `benchmarks tune`) must not replay the launches another tiling recorded
    return dispatch(("matmul", dtype, gemm_coop.FORCE_TILING), (a, b),
                    lambda: _matmul(a, b, dtype))


def _other_path(a: Tensor, b: Tensor, dtype: object,
                again: Callable[[Tensor, Tensor, object], Tensor]) -> Tensor | None:
    """The product where it leaves the real path: complex operands (or dtype) take the
    complex layout's; under pk.autocast, `again` of the 16-bit operands with an f32 result.
    None for the real path."""
    if a.dtype.is_complex or b.dtype.is_complex or \
            (dtype is not None and dt.as_dtype(dtype).is_complex):
        return complex_layout.matmul(a, b, dtype)
    low = low_precision(a, b) if dtype is None else None
    if low is not None:  # pk.autocast: 16-bit operands, an f32 result
        return again(low[0], low[1], dt.f32)
    return None


def _matmul_backward(forward: Callable[..., Tensor], a: object, b: object,
                     dtype: object = None) -> Tensor:
    """matmul recorded (`record_matmul`); complex operands take the complex path, which
    records its real products, and `pk.autocast` converts f32 operands first (recorded)."""
    a, b = as_tensor(a, "matmul: a"), as_tensor(b, "matmul: b")
    special = _other_path(a, b, dtype, lambda a16, b16, d: _matmul_backward(forward, a16, b16, d))
    if special is not None:
        return special
    with no_grad():
        out = forward(a, b, dtype)
    return record_matmul(out, a, b)


def _small_output(info: object, a: Tensor, b: Tensor, c: Tensor) -> bool:
    return a.shape[-2] * b.shape[-1] <= SMALL_OUTPUT


# The kernels matmul runs, in the order they are tried, each with its predicate of
# (device info, a, b, c): the tile kernel on the matrix engine first, for each batch piece
# (`_matmul_into`), then the first portable one that applies (`_choose`).
IMPLEMENTATIONS = (
    Impl("matrix engine", gemm_coop.applies,
         "cooperative-matrix tiles (gemm_coop) where the device has tiles of the operands' "
         "dtype, any shapes (edge blocks masked), the tiling from the device's table; tried "
         "for each batch piece"),
    Impl("one output per invocation", _small_output, f"outputs of at most {SMALL_OUTPUT}"),
    Impl("host strips", on_host, "register-blocked strips of rows for LLVM (gemm_host)"),
    Impl("register blocks", on_cpu, "blocks from registers, no shared memory (lavapipe)"),
    Impl("gpu tiles", always, "shared-memory tiles (f32: the register-blocked gemm_f32)"),
)
_CONFIGS = {"one output per invocation": None, "host strips": HOST_TILE,
            "register blocks": CPU_TILE}

# how matmul sizes its work by the device: split K below `split_k_waves` output blocks per
# compute unit (from K = `split_k_from`, in pieces of `split_k_piece`), and the 128-wide tile
# from `large_tile_waves` tiles per unit (measured on an H200, 132 SMs); the matrix engine's
# tiling (gemm_coop.tiling_for: a name of coop_tiling.CANDIDATES), and the one for products
# with fewer than `coop_small_below` blocks of it per compute unit. Devices measured by
# `python -m benchmarks tune` override these in pykern/ops/tuning/.
tune("matmul", lambda info: {"split_k_from": 2048, "split_k_waves": 2, "split_k_piece": 256,
                             "large_tile_waves": 2, "coop_tiling": coop_tiling.DEFAULT.name,
                             "coop_tiling_small": coop_tiling.DEFAULT.name,
                             "coop_small_below": 1})

matmul = declare(matmul, "gemm", grad="rule", backward=_matmul_backward, complex_grad=True,
                 implementations=IMPLEMENTATIONS,
                 autocast="lower_f32_result", exports=("pk", "array_api"),
                 aliases=torch_names("matmul", "aten::matmul", "aten::mm", "aten::bmm",
                                     numpy="matmul", array_api="matmul"))


def _matmul(a: Tensor, b: Tensor, dtype: object) -> Tensor:
    for name, t in (("a", a), ("b", b)):
        if t.ndim == 0:
            raise ValueError(f"matmul: {name} is 0-d; matmul needs at least 1 dimension "
                             "(use * for scalars)")
        if t.dtype not in MATMUL_DTYPES:
            raise TypeError(f"matmul: {name} has unsupported dtype {t.dtype.name}")
    out_dtype = promote(a.dtype, b.dtype) if dtype is None else dt.as_dtype(dtype)
    if out_dtype not in MATMUL_DTYPES:
        raise TypeError(f"matmul: unsupported result dtype {out_dtype.name}")
    a2 = a if a.ndim >= 2 else view(a, (1,) + a.shape, (0,) + a.element_strides)
    b2 = b if b.ndim >= 2 else view(b, b.shape + (1,), b.element_strides + (0,))
    m, k = a2.shape[-2:]
    k2, n = b2.shape[-2:]
    if k != k2:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not match: a has "
                         f"{k} columns, b has {k2} rows")
    batch = broadcast_shapes(a2.shape[:-2], b2.shape[:-2], op="matmul (batch dimensions)")
    shape = batch + ((m,) if a.ndim >= 2 else ()) + ((n,) if b.ndim >= 2 else ())
    out = empty(shape, out_dtype)
    if out.size == 0:
        return out
    if k == 0:
        fill(out, 0)
        return out
    nb = len(batch)
    c2 = view(out, batch + (m, n), out.element_strides[:nb]
              + (out.element_strides[nb] if a.ndim >= 2 else 0,
                 out.element_strides[-1] if b.ndim >= 2 else 0))
    _matmul_into(a2, b2, c2, batch)
    return out


def _matmul_into(a: Tensor, b: Tensor, c: Tensor, batch: tuple[int, ...]) -> None:
    """c[..., :, :] = a @ b with a, b, c views of (batch..., M, K), (..., K, N), (..., M, N)."""
    m, k = a.shape[-2:]
    n = b.shape[-1]
    info = get_device().info
    if on_gpu(info):
        a, b = _row_major(a, n, True), _row_major(b, m, a.dtype == dt.f32)
        split = _split_k(m, n, k, prod(batch), a.dtype, info)
        if split > 1:
            _split_k_matmul(a, b, c, split)
            return
    strides = [broadcast_strides(batch, a.shape[:-2], a.element_strides[:-2]),
               broadcast_strides(batch, b.shape[:-2], b.element_strides[:-2]),
               c.element_strides[:-2]]
    cfg = _choose(info, a, b, c, prod(batch))
    per_iteration = 1 if cfg is None else cfg.bk  # k values one loop iteration consumes
    k_step = k
    budget = loop_budget()
    if budget is not None and cdiv(k, per_iteration) > budget:
        k_step = budget * per_iteration  # split K so that each invocation's loop fits
    for deltas, bshape, (sa, sb, sc) in batch_pieces(batch, strides, 2):
        av = view(a, bshape + (m, k), sa + a.element_strides[-2:], a.offset + deltas[0])
        bv = view(b, bshape + (k, n), sb + b.element_strides[-2:], b.offset + deltas[1])
        cv = view(c, bshape + (m, n), sc + c.element_strides[-2:], c.offset + deltas[2])
        if IMPLEMENTATIONS[0].applies(info, av, bv, cv):  # the matrix engine, per batch piece
            tiling = gemm_coop.tiling_for(info, m, n, prod(bshape), a.dtype)
            gemm_coop.run(av, bv, cv, subgroup_lanes(info), tiling)
            continue
        k0 = 0
        while True:
            kk = min(k_step, k - k0)
            ak = view(av, av.shape[:3] + (kk,), av.element_strides, av.offset
                      + k0 * av.element_strides[3])
            bk = view(bv, bv.shape[:2] + (kk, n), bv.element_strides, bv.offset
                      + k0 * bv.element_strides[2])
            _launch(ak, bk, cv, cfg, accumulate=int(k0 > 0))
            k0 += kk
            if k0 >= k:
                break


def _row_major(t: Tensor, other: int, wanted: bool) -> Tensor:
    """`t` copied with its last dimension contiguous, when it is a transposed view (a linear
    layer's `w.mT`, the activations of a weight gradient `x.mT @ g`) that the GPU kernels would
    read across rows, and the product is wide enough (`other` columns of the other operand) for
    the copy to cost little beside it. Broadcast operands are left alone."""
    strides = t.element_strides
    if not wanted or strides[-1] == 1 or other < 64 or t.shape[-1] == 1 \
            or any(s == 0 and n > 1 for s, n in zip(strides[:-2], t.shape[:-2])):
        return t
    return t.copy()


def _split_k(m: int, n: int, k: int, nbatch: int, dtype: DType, info: object) -> int:
    """Into how many pieces to cut K so that a product with few output blocks (a weight
    gradient: M and N a layer's widths, K the batch's tokens) keeps every compute unit busy:
    the pieces run as a batch, their partial products summed after. 1: no split."""
    cfg = config("matmul", info)
    blocks = cdiv(m, 128) * cdiv(n, 128) * nbatch
    units = compute_units(info)
    if nbatch != 1 or not dtype.is_float or blocks >= units or k < cfg["split_k_from"]:
        return 1
    split = 1
    while split * 2 * blocks <= cfg["split_k_waves"] * units and k % (split * 2) == 0 \
            and (k // (split * 2)) % cfg["split_k_piece"] == 0:
        split *= 2
    return split


def _split_k_matmul(a: Tensor, b: Tensor, c: Tensor, split: int) -> None:
    """c = a @ b for views of one matrix each as `split` products over slices of K, summed in
    f32 (f64). The views may carry leading dimensions of size 1 (a batch of one, such as the
    (1, m, n) stacks of `pk.linalg`, or one operand broadcast against the other's)."""
    a, b, c = _single_matrix(a), _single_matrix(b), _single_matrix(c)
    m, k = a.shape
    n = b.shape[1]
    piece = k // split
    (sam, sak), (sbk, sbn) = a.element_strides, b.element_strides
    av = view(a, (split, m, piece), (piece * sak, sam, sak), a.offset)
    bv = view(b, (split, piece, n), (piece * sbk, sbk, sbn), b.offset)
    acc = dt.f64 if dt.f64 in (a.dtype, b.dtype, c.dtype) else dt.f32
    partial = empty((split, m, n), acc)
    _matmul_into(av, bv, partial, (split,))

    assign(c, reduce_sum(partial, axis=0))


def _single_matrix(t: Tensor) -> Tensor:
    """The 2-d view of a tensor that holds one matrix (every leading dimension of size 1)."""
    if t.ndim == 2:
        return t
    return view(t, tuple(t.shape[-2:]), tuple(t.element_strides[-2:]), t.offset)


def _choose(info: object, a: Tensor, b: Tensor, c: Tensor, nbatch: int
            ) -> TileConfig | None:
    """The portable kernel for c = a @ b: the first of matmul's implementations after the
    matrix engine (tried per batch piece) that applies. None: one output per invocation."""
    if FORCE_CONFIG is not None:
        return FORCE_CONFIG
    impl = next(i for i in IMPLEMENTATIONS[1:] if i.applies(info, a, b, c))
    if impl.name == "gpu tiles":  # the larger tile where the output fills the device
        m, n = a.shape[-2], b.shape[-1]
        waves = config("matmul", info)["large_tile_waves"]
        big = cdiv(m, GPU_TILE.bm) * cdiv(n, GPU_TILE.bn) * nbatch >= waves * compute_units(info)
        return GPU_TILE if big else GPU_SMALL
    return _CONFIGS[impl.name]


def _launch(a: Tensor, b: Tensor, c: Tensor, cfg: TileConfig | None, accumulate: int) -> None:
    b1, b2, m, _ = a.shape
    n = b.shape[3]
    if cfg is None:
        kern = _small_kernel(a.dtype, b.dtype, c.dtype)
        kern[n, m, b1 * b2](a, b, c, accumulate)
        return
    if cfg is HOST_TILE:
        gemm_host.launch(a, b, c, accumulate)
        return
    if cfg in (GPU_TILE, GPU_SMALL) and a.dtype == b.dtype == c.dtype == pk.f32:
        # f32 on GPUs: 8 x 8 blocks in scalar registers, slices fetched a step ahead (1.5x the
        # tilings below on an H200: 30 against 20 TFLOP/s)
        gemm_f32.launch(a, b, c, accumulate, F32_GPU)
        return
    a_kfast = abs(a.element_strides[3]) <= abs(a.element_strides[2])
    b_nfast = abs(b.element_strides[3]) <= abs(b.element_strides[2])
    if cfg.shared:
        kern = _tiled_kernel(a.dtype, b.dtype, c.dtype, cfg, a_kfast, b_nfast)
    else:
        kern = _register_kernel(a.dtype, b.dtype, c.dtype, cfg)
    grid = (cdiv(n, cfg.bn) * cfg.wgx, cdiv(m, cfg.bm) * cfg.wgy, b1 * b2)
    kern[grid](a, b, c, accumulate)


@functools.lru_cache(maxsize=None)
def _small_kernel(a_dt: DType, b_dt: DType, c_dt: DType) -> pk.Kernel:
    ACC = accumulator(c_dt)  # noqa: N806

    @pk.kernel(workgroup=(8, 8, 1))
    def matmul_small(a: a_dt[:, :, :, :], b: b_dt[:, :, :, :], c: c_dt[:, :, :, :],
                     accumulate: int):
        j = pk.global_id(0)
        i = pk.global_id(1)
        z = pk.global_id(2)
        z1, z2 = pk.unravel(z, c.shape[:2])
        acc: ACC = 0
        for kk in range(a.shape[3]):
            acc += ACC(a[z1, z2, i, kk]) * ACC(b[z1, z2, kk, j])
        if accumulate != 0:
            acc += ACC(c[z1, z2, i, j])
        c[z1, z2, i, j] = acc

    return matmul_small


@functools.lru_cache(maxsize=None)
def _tiled_kernel(a_dt: DType, b_dt: DType, c_dt: DType, cfg: TileConfig, a_kfast: bool,
                  b_nfast: bool) -> pk.Kernel:
    ACC = accumulator(c_dt)  # noqa: N806
    STEP = step_for(ACC)  # noqa: N806
    WGX, WGY, TM, TN, BK = cfg.wgx, cfg.wgy, cfg.tm, cfg.tn, cfg.bk  # noqa: N806
    BM, BN = cfg.bm, cfg.bn  # noqa: N806
    NT, LOADS_A, LOADS_B = cfg.threads, cfg.loads_a, cfg.loads_b  # noqa: N806
    A_K, B_N = a_kfast, b_nfast  # noqa: N806  (which index of A, of B, runs fastest in memory)

    @pk.kernel(workgroup=(WGX, WGY, 1))
    def matmul_tiled(a: a_dt[:, :, :, :], b: b_dt[:, :, :, :], c: c_dt[:, :, :, :],
                     accumulate: int):
        # A's slice transposed (k-major, padded against bank conflicts), B's as it is
        As = pk.shared(ACC, (BK, BM + 1))
        Bs = pk.shared(ACC, (BK, BN + 1))
        acc = pk.local(ACC, (TM, TN))
        av = pk.local(ACC, TM)
        bv = pk.local(ACC, TN)
        tx, ty, m0, n0 = tile_position(BM, BN)
        tid = ty * WGX + tx
        z = pk.global_id(2)
        z1, z2 = pk.unravel(z, c.shape[:2])
        M, K = a.shape[2:]
        N = b.shape[3]
        for k0 in range(0, K, BK):
            for r in range(LOADS_A):
                e = tid + r * NT
                if e < BM * BK:
                    if A_K:  # consecutive invocations read consecutive k
                        row = e // BK
                        kk = e % BK
                    else:
                        row = e % BM
                        kk = e // BM
                    gm = min(m0 + row, M - 1)
                    va: ACC = 0
                    if k0 + kk < K:
                        va = ACC(a[z1, z2, gm, k0 + kk])
                    As[kk, row] = va
            for r in range(LOADS_B):
                e = tid + r * NT
                if e < BN * BK:
                    if B_N:
                        col = e % BN
                        kb = e // BN
                    else:
                        col = e // BK
                        kb = e % BK
                    gn = min(n0 + col, N - 1)
                    vb: ACC = 0
                    if k0 + kb < K:
                        vb = ACC(b[z1, z2, k0 + kb, gn])
                    Bs[kb, col] = vb
            pk.barrier()
            multiply_tiles(As, Bs, acc, av, bv, tx, ty, WGX, WGY, STEP)
            pk.barrier()
        store_tile(c, z1, z2, acc, m0 + ty, n0 + tx, WGX, WGY, accumulate)

    return matmul_tiled


@functools.lru_cache(maxsize=None)
def _register_kernel(a_dt: DType, b_dt: DType, c_dt: DType, cfg: TileConfig) -> pk.Kernel:
    ACC = accumulator(c_dt)  # noqa: N806
    STEP = step_for(ACC)  # noqa: N806
    WGX, WGY, TM, TN = cfg.wgx, cfg.wgy, cfg.tm, cfg.tn  # noqa: N806
    BM, BN = cfg.bm, cfg.bn  # noqa: N806

    @pk.kernel(workgroup=(WGX, WGY, 1))
    def matmul_registers(a: a_dt[:, :, :, :], b: b_dt[:, :, :, :], c: c_dt[:, :, :, :],
                         accumulate: int):
        acc = pk.local(ACC, (TM, TN))
        av = pk.local(ACC, TM)
        bv = pk.local(ACC, TN)
        rows = pk.local(pk.i32, TM)
        cols = pk.local(pk.i32, TN)
        tx, ty, m0, n0 = tile_position(BM, BN)
        z = pk.global_id(2)
        z1, z2 = pk.unravel(z, c.shape[:2])
        M = a.shape[2]
        N = b.shape[3]
        for i in range(TM):
            rows[i] = min(m0 + ty + i * WGY, M - 1)  # rows past the end: computed, not stored
        for j in range(TN):
            cols[j] = min(n0 + tx + j * WGX, N - 1)
        for kk in range(a.shape[3]):
            for i in range(TM):
                av[i] = ACC(a[z1, z2, rows[i], kk])
            for j in range(TN):
                bv[j] = ACC(b[z1, z2, kk, cols[j]])
            accumulate_outer(acc, av, bv, STEP)
        store_tile(c, z1, z2, acc, m0 + ty, n0 + tx, WGX, WGY, accumulate)

    return matmul_registers
