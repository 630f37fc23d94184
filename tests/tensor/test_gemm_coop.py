"""matmul on cooperative-matrix tiles (pykern/tensor/gemm/gemm_coop.py): the tile kernel, a loop
over tiles, runs in the interpreter (in CI) for every operand dtype, B as it is and transposed,
batches, and the subgroup sizes of the devices it serves (4 subgroups of 8 to 64 lanes), against
numpy in float64; its SPIR-V passes spirv-val; the device's description decides where it runs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import pykern as pk
from pykern import ir
from pykern.passes.decompose import decompose
from pykern.runtime.feature import CoopShape
from pykern.spirv.encoding.validate import validate
from pykern.spirv.lower import lower
from pykern.spirv.target import Target
from pykern.tensor.gemm import gemm_coop as gc
from pykern.tensor.gemm.coop_tiling import CANDIDATES, DEFAULT, CoopTiling
from pykern.tensor.gemm.gemm_coop_kernel import build

RNG = np.random.default_rng(17)
BF16 = getattr(pk, "bf16", None)


def operands(dtype: pk.DType, b1: int, b2: int, m: int, k: int, n: int):
    if dtype.is_float:
        a = RNG.standard_normal((b1, b2, m, k)).astype(dtype.numpy)
        b = RNG.standard_normal((b1, b2, k, n)).astype(dtype.numpy)
    else:
        lo, hi = (-100, 100) if dtype.is_signed else (0, 200)
        a = RNG.integers(lo, hi, (b1, b2, m, k)).astype(dtype.numpy)
        b = RNG.integers(lo, hi, (b1, b2, k, n)).astype(dtype.numpy)
    return a, b


def run_interpreted(a: np.ndarray, b: np.ndarray, out: pk.DType, transposed: bool,
                    lanes: int, tiling: CoopTiling = DEFAULT) -> np.ndarray:
    """The tile kernel in the interpreter, launched by `gemm_coop.run` (B passed as the
    transposed view of a row-major copy where `transposed`)."""
    ta = pk.asarray(a)
    tb = pk.asarray(np.ascontiguousarray(np.swapaxes(b, 2, 3))).mT if transposed \
        else pk.asarray(b)
    c = pk.zeros(a.shape[:3] + (b.shape[3],), out)
    old = gc.INTERPRET
    gc.INTERPRET = True
    try:
        gc.run(ta, tb, c, lanes, tiling)
    finally:
        gc.INTERPRET = old
    return c.numpy()


def assert_f32_accumulated(got: np.ndarray, a: np.ndarray, b: np.ndarray,
                           rounded_to: np.dtype | None = None) -> None:
    """Within the bound of K products summed in f32 (f16 and bf16 products are exact in f32),
    plus one rounding to `rounded_to` where the result is stored narrower."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    exact = a64 @ b64
    bound = a.shape[-1] * 2.0 ** -23 * (np.abs(a64) @ np.abs(b64)) + 1e-6
    if rounded_to is not None:
        bound += np.abs(exact) * float(np.finfo(rounded_to).eps) if rounded_to != "bf16" \
            else np.abs(exact) * 2.0 ** -7
    assert got.shape == exact.shape
    assert np.all(np.abs(got.astype(np.float64) - exact) <= bound), \
        f"largest error {np.max(np.abs(got - exact) - bound)} past the bound"


@pytest.mark.parametrize("lanes", [8, 16, 32, 64])
@pytest.mark.parametrize("transposed", [False, True])
def test_f16_in_the_interpreter(lanes, transposed):
    a, b = operands(pk.f16, 1, 2, 128, 96, 256)
    got = run_interpreted(a, b, pk.f32, transposed, lanes)
    assert_f32_accumulated(got, a, b)


@pytest.mark.parametrize("tiling", CANDIDATES, ids=lambda t: t.name)
@pytest.mark.parametrize("transposed", [False, True])
def test_every_candidate_tiling_on_ragged_shapes(tiling, transposed):
    """M, N, K past whole blocks and slices: zero-filled loads, edge blocks stored through
    shared memory, the blocks inside C stored directly (N = 72 f32: aligned rows)."""
    a, b = operands(pk.f16, 1, 1, tiling.bm + 5, 45, 72)
    assert_f32_accumulated(run_interpreted(a, b, pk.f32, transposed, 32, tiling), a, b)


@pytest.mark.parametrize("tiling", CANDIDATES, ids=lambda t: t.name)
def test_every_candidate_tiling_on_whole_blocks(tiling):
    a, b = operands(pk.f16, 1, 1, tiling.bm, 2 * 4 * tiling.k_words, 2 * tiling.bn)
    assert_f32_accumulated(run_interpreted(a, b, pk.f32, False, 32, tiling), a, b)


@pytest.mark.parametrize("lanes", [8, 16, 64])
@pytest.mark.parametrize("tiling", [CoopTiling(2, 4, 4, 2, stages=2), CoopTiling(2, 2, 2, 4)],
                         ids=lambda t: t.name)
def test_subgroup_sizes_of_other_devices(lanes, tiling):
    a, b = operands(pk.f16, 1, 1, 37, 70, 45)
    assert_f32_accumulated(run_interpreted(a, b, pk.f32, False, lanes, tiling), a, b)


def test_a_result_whose_rows_are_not_aligned_goes_through_shared_memory():
    a, b = operands(pk.f16, 2, 1, 37, 45, 70)  # 70 f16 or f32 columns: rows not 16-byte units
    got = run_interpreted(a, b, pk.f16, True, 32)
    assert_f32_accumulated(got, a, b, np.float16)


@pytest.mark.parametrize("dtype,out", [("i8", "i32"), ("u8", "u32")])
def test_8_bit_integers_are_exact(dtype, out):
    a, b = operands(getattr(pk, dtype), 1, 1, 128, 64, 128)
    got = run_interpreted(a, b, getattr(pk, out), False, 32)
    np.testing.assert_array_equal(got, a.astype(np.int64) @ b.astype(np.int64))


def test_8_bit_integers_on_ragged_shapes_are_exact():
    a, b = operands(pk.i8, 1, 1, 37, 70, 45)
    got = run_interpreted(a, b, pk.i32, True, 32, CoopTiling(2, 2, 2, 4))
    np.testing.assert_array_equal(got, a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.skipif(BF16 is None, reason="pk.bf16 does not exist here")
def test_bf16_in_the_interpreter():
    a, b = operands(pk.f32, 1, 1, 37, 40, 70)
    a, b = (pk.asarray(x, dtype=BF16).numpy() for x in (a, b))
    got = run_interpreted(a, b, pk.f32, True, 32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got, exact, rtol=1e-5, atol=1e-4)


def lowered_and_validated(kern: pk.Kernel, args: tuple) -> None:
    target = Target()
    module = lower(decompose(kern._translate(kern._key(kern._by_name(args, {}), 3)), target),
                   target).words
    validate(module, "vulkan1.3")


@pytest.mark.parametrize("lanes", [8, 32, 64])
def test_modules_lower_for_a_device_with_tiles_and_pass_spirv_val(lanes):
    kern = build(pk.f16, pk.f32, False, lanes, DEFAULT, False, True)
    words = np.zeros((1, 1, 128, 8), np.uint64)
    lowered_and_validated(kern, (words, np.zeros((1, 1, 32, 32), np.uint64),
                                 np.zeros((1, 1, 128, 128), np.float32), 1))
    assert kern.workgroup == (lanes, 4, 1)


@pytest.mark.parametrize("tiling", CANDIDATES, ids=lambda t: t.name)
def test_every_candidate_lowers_ragged_or_not_and_passes_spirv_val(tiling):
    words = np.zeros((1, 1, 40, 12), np.uint64)
    for ragged, transposed in ((False, False), (True, True)):
        kern = build(pk.f16, pk.f16, transposed, 32, tiling, ragged, not ragged)
        lowered_and_validated(kern, (words, words, np.zeros((1, 1, 40, 40), np.float16), 1))


def test_the_device_description_decides():
    """Tiles of the dtype, 64-bit integers, the shared memory, and a subgroup size that splits
    a slice evenly: no device name and no fixed subgroup size."""
    info = pk.get_device().info
    shape = CoopShape(16, 16, 16, "f16", "f32")
    features = replace(info.features, cooperative_matrix=True, int64=True, subgroup_size=64)
    limits = replace(info.limits, max_shared_memory=64 * 1024)
    tiled = replace(info, features=features, limits=limits, coop_shapes=(shape,))
    assert gc.offers(tiled, pk.f16)
    assert not gc.offers(tiled, pk.i8)  # no 8-bit tiles listed
    assert not gc.offers(replace(tiled, features=replace(features, subgroup_size=12)), pk.f16)
    assert not gc.offers(replace(tiled, limits=replace(limits, max_shared_memory=32 * 1024)),
                         pk.f16)
    a = pk.zeros((1, 1, 128, 32), pk.f16)
    b = pk.zeros((1, 1, 32, 128), pk.f16)
    c = pk.zeros((1, 1, 128, 128), pk.f32)
    assert gc.applies(tiled, a, b, c)
    assert gc.applies(tiled, a[:, :, :37], b, c[:, :, :37])  # any M
    assert not gc.applies(tiled, a, b, pk.zeros((1, 1, 128, 128), pk.f64))


@pytest.fixture
def interpreted_matmul(monkeypatch):
    """pk.matmul takes the tile kernel, run in the interpreter, whatever the device."""
    monkeypatch.setattr(gc, "INTERPRET", True)


@pytest.mark.parametrize("shapes", [((37, 45), (45, 70)), ((2, 1, 37, 45), (3, 45, 70)),
                                    ((96, 48), (48, 65)), ((5, 36), (36, 8))])
def test_pk_matmul_takes_ragged_and_broadcast_shapes(interpreted_matmul, shapes):
    """The path of `pk.matmul` into the tile kernel: batch pieces and broadcast batches,
    operands copied where their rows are not aligned words (K = 45, N = 65), an f16 result."""
    a = RNG.standard_normal(shapes[0]).astype(np.float16)
    b = RNG.standard_normal(shapes[1]).astype(np.float16)
    got = pk.matmul(pk.asarray(a), pk.asarray(b))
    assert got.dtype == pk.f16
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    assert_f32_accumulated(got.numpy(), np.broadcast_to(a, batch + a.shape[-2:]),
                           np.broadcast_to(b, batch + b.shape[-2:]), np.float16)


def test_pk_matmul_takes_a_transposed_weight(interpreted_matmul):
    """x @ w.T, the linear layer's product (B a transposed view), and a bf16 one."""
    x = RNG.standard_normal((40, 48)).astype(np.float16)
    w = RNG.standard_normal((65, 48)).astype(np.float16)
    got = pk.matmul(pk.asarray(x), pk.asarray(w).mT)
    assert_f32_accumulated(got.numpy(), x, w.T, np.float16)


def test_grouped_block_order_covers_every_block_once():
    """group_m: workgroups walk C in groups of block rows; with 5 block rows in groups of 3
    (the last group short) and 3 block columns every block of C is computed."""
    a, b = operands(pk.f16, 1, 1, 5 * 64 - 3, 40, 2 * 64 + 5)
    tiling = CoopTiling(2, 2, 2, 2, group_m=3)
    assert_f32_accumulated(run_interpreted(a, b, pk.f32, False, 8, tiling), a, b)


def has_f16_tiles() -> bool:
    return gc.offers(pk.get_device().info, pk.f16)


@pytest.mark.skipif(not has_f16_tiles(), reason="the device has no 16x16x16 f16->f32 tiles")
@pytest.mark.parametrize("tiling", CANDIDATES, ids=lambda t: t.name)
def test_every_candidate_on_the_device(tiling, monkeypatch):
    """pk.matmul on the device's tiles with each tiling a table may choose: ragged, whole,
    batched and broadcast shapes, a transposed weight, f16 and f32 results."""
    monkeypatch.setattr(gc, "FORCE_TILING", tiling)
    for sa, sb in (((37, 45), (45, 70)), ((300, 264), (264, 520)), ((2, 1, 130, 64), (3, 64, 129)),
                   ((512, 256), (256, 256)), ((1000, 784), (784, 4096 // 8))):
        a = RNG.standard_normal(sa).astype(np.float16)
        b = RNG.standard_normal(sb).astype(np.float16)
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        ab = np.broadcast_to(a, batch + a.shape[-2:])
        bb = np.broadcast_to(b, batch + b.shape[-2:])
        assert_f32_accumulated(pk.matmul(pk.asarray(a), pk.asarray(b)).numpy(), ab, bb,
                               np.float16)
        assert_f32_accumulated(pk.matmul(pk.asarray(a), pk.asarray(b), dtype=pk.f32).numpy(),
                               ab, bb)
    x = RNG.standard_normal((257, 384)).astype(np.float16)
    w = RNG.standard_normal((65, 384)).astype(np.float16)
    assert_f32_accumulated(pk.matmul(pk.asarray(x), pk.asarray(w).mT).numpy(), x, w.T,
                           np.float16)


@pytest.mark.skipif(BF16 is None or not has_f16_tiles() or not gc.offers(pk.get_device().info,
                                                                         BF16),
                    reason="no bf16 tiles on the device")
def test_bf16_ragged_on_the_device():
    a = RNG.standard_normal((301, 77)).astype(np.float32)
    b = RNG.standard_normal((77, 203)).astype(np.float32)
    ta, tb = pk.asarray(a, dtype=BF16), pk.asarray(b, dtype=BF16)
    got = pk.matmul(ta, tb).astype(pk.f32).numpy()
    a16, b16 = ta.astype(pk.f32).numpy(), tb.astype(pk.f32).numpy()
    assert_f32_accumulated(got, a16, b16, "bf16")


@pytest.mark.parametrize("c_aligned", [False, True])
def test_a_result_with_unaligned_rows_is_never_a_tile_operand(c_aligned):
    """A launch checks the alignment of every array a kernel accesses as tiles: the kernel for
    an unaligned C (N = 65 f16) must leave C to plain stores, the aligned one store tiles."""
    kern = build(pk.f16, pk.f16, False, 32, DEFAULT, True, c_aligned)
    words = np.zeros((1, 1, 40, 12), np.uint64)
    args = (words, words, np.zeros((1, 1, 40, 65), np.float16), 1)
    module = kern._translate(kern._key(kern._by_name(args, {}), 3))
    access = {p.name: p.access for p in module.params if hasattr(p, "access")}
    assert bool(access["c"] & ir.Access.TILES) == c_aligned


def test_a_forced_tiling_is_not_replayed_from_another_tilings_plan(monkeypatch):
    """pk.matmul replays the launches of its first call per operand signature; the tiling a
    test or the tuning sweep forces is part of that signature, so each tiling launches its own
    kernel (the sweep measured one tiling under every name before)."""
    seen = []
    monkeypatch.setattr(gc, "offers", lambda info, dtype: True)
    monkeypatch.setattr(gc, "run", lambda a, b, c, lanes, tiling=DEFAULT: seen.append(tiling))
    a, b = pk.zeros((64, 32), pk.f16), pk.zeros((32, 64), pk.f16)
    for tiling in CANDIDATES[:3]:
        monkeypatch.setattr(gc, "FORCE_TILING", tiling)
        pk.matmul(a, b)
        pk.matmul(a, b)
    assert seen == list(CANDIDATES[:3])  # the second call of each replays its own plan


def test_copies_whose_threads_are_not_whole_rows():
    """4 subgroups of 8 (32 invocations) staging B's 256-column block (64 words a row): each
    invocation's elements fall in different words, worked out per element."""
    a, b = operands(pk.f16, 1, 1, 37, 45, 300)
    tiling = CoopTiling(1, 4, 2, 4)
    assert_f32_accumulated(run_interpreted(a, b, pk.f32, False, 8, tiling), a, b)
