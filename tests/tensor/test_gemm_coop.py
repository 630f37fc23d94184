"""matmul on cooperative-matrix tiles (pykern/tensor/gemm/gemm_coop.py): the tile kernel, a loop
over tiles, runs in the interpreter (in CI) for every operand dtype, B as it is and transposed,
batches, and the subgroup sizes of the devices it serves (4 subgroups of 8 to 64 lanes), against
numpy in float64; its SPIR-V passes spirv-val; the device's description decides where it runs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import pykern as pk
from pykern.passes.decompose import decompose
from pykern.runtime.feature import CoopShape
from pykern.spirv.encoding.validate import validate
from pykern.spirv.lower import lower
from pykern.spirv.target import Target
from pykern.tensor.gemm import gemm_coop as gc

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
                    lanes: int) -> np.ndarray:
    """The tile kernel in the interpreter, launched as `gemm_coop.run` launches it."""
    b1, b2, m, _ = a.shape
    n = b.shape[3]
    dtype = pk.asarray(a[:1, :1, :1, :1]).dtype
    src = np.ascontiguousarray(np.swapaxes(b, 2, 3)) if transposed else b
    c = np.zeros((b1, b2, m, n), out.numpy)
    kern = gc._kernel(dtype, out, transposed, lanes)
    twin = pk.kernel(kern.__wrapped__, interpret=True, workgroup=kern.workgroup)
    twin[(n // gc.BN) * lanes, (m // gc.BM) * 4, b1 * b2](a.view(np.uint64),
                                                          src.view(np.uint64), c, b2)
    return c


@pytest.mark.parametrize("lanes", [8, 16, 32, 64])
@pytest.mark.parametrize("transposed", [False, True])
def test_f16_in_the_interpreter(lanes, transposed):
    a, b = operands(pk.f16, 1, 2, 128, 96, 256)
    got = run_interpreted(a, b, pk.f32, transposed, lanes)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    # f16 products are exact in f32; K of them summed in f32 round within K 2^-24 of |a||b|
    bound = 96 * 2.0 ** -23 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    assert np.all(np.abs(got - exact) <= bound + 1e-6)


@pytest.mark.parametrize("dtype,out", [("i8", "i32"), ("u8", "u32")])
def test_8_bit_integers_are_exact(dtype, out):
    a, b = operands(getattr(pk, dtype), 1, 1, 128, 64, 128)
    got = run_interpreted(a, b, getattr(pk, out), False, 32)
    np.testing.assert_array_equal(got, a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.skipif(BF16 is None, reason="pk.bf16 does not exist here")
def test_bf16_in_the_interpreter():
    a, b = operands(pk.f32, 1, 1, 128, 32, 128)
    a, b = (pk.asarray(x, dtype=BF16).numpy() for x in (a, b))
    got = run_interpreted(a, b, pk.f32, True, 32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got, exact, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("lanes", [8, 32, 64])
def test_modules_lower_for_a_device_with_tiles_and_pass_spirv_val(lanes):
    kern = gc._kernel(pk.f16, pk.f32, False, lanes)
    words = np.zeros((1, 1, 128, 8), np.uint64)
    args = (words, np.zeros((1, 1, 32, 32), np.uint64), np.zeros((1, 1, 128, 128), np.float32),
            1)
    target = Target()
    module = lower(decompose(kern._translate(kern._key(kern._by_name(args, {}), 3)), target),
                   target).words
    validate(module, "vulkan1.3")
    assert kern.workgroup == (lanes, 4, 1)


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
    assert not gc.applies(tiled, a[:, :, :96], b, c[:, :, :96])  # M not a multiple of 128
