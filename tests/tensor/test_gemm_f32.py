"""The f32 GEMM candidates of pykern/tensor/gemm/gemm_f32.py against numpy in float64: every
candidate on the device (shapes that fill their blocks and shapes that do not, transposed and
strided operands, batches with broadcast batch strides, accumulation into C; the u64 ones
with rows of f32 pairs and without) and in the interpreter (dividing and ragged shapes)."""

import numpy as np
import pytest

import pykern as pk
from pykern.tensor.gemm import gemm_f32
from pykern.tensor.core.strided import view

from ops_inputs import EPS, make

NAMES = [t.name for t in gemm_f32.TILINGS]
BY_NAME = dict(zip(NAMES, gemm_f32.TILINGS))


def as4d(t: pk.Tensor) -> pk.Tensor:
    """A 2-d or 3-d tensor as the (B1, B2, rows, cols) view the launches take."""
    lead = (1,) * (4 - t.ndim)
    return view(t, lead + t.shape, (0,) * len(lead) + t.element_strides)


def check(got: np.ndarray, a: np.ndarray, b: np.ndarray, c0: np.ndarray | None = None) -> None:
    """Each output sums K products with one fma rounding each (plus the old value of C)."""
    expected = np.matmul(a.astype(np.float64), b.astype(np.float64))
    mag = np.matmul(np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))
    if c0 is not None:
        expected = expected + c0
        mag = mag + np.abs(c0)
    tol = 2 * (a.shape[-1] + 2) * EPS[pk.f32] * mag + 1e-30
    err = np.abs(got.astype(np.float64) - expected)
    assert (err <= tol).all(), f"max error {err.max()} (tolerance {tol.max()})"


def run(tiling: gemm_f32.F32Tiling, a: pk.Tensor, b: pk.Tensor, interpret: bool = False,
        c: pk.Tensor | None = None) -> np.ndarray:
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
    accumulate = int(c is not None)
    if c is None:
        c = pk.full(shape, np.nan)  # every output must be written
    gemm_f32.launch(as4d(a), as4d(b), as4d(c), accumulate, tiling, interpret=interpret)
    return c.numpy()


def test_candidates_are_named_launches():
    found = gemm_f32.candidates()
    assert [name for name, _ in found] == NAMES and len(set(NAMES)) == len(NAMES) >= 3
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, s).astype(np.float32) for s in ((64, 24), (24, 72)))
    for _, launch in found:
        c = pk.zeros((64, 72))
        launch(as4d(pk.asarray(a)), as4d(pk.asarray(b)), as4d(c), 0)
        check(c.numpy(), a, b)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("m,k,n", [(128, 32, 128), (256, 48, 128), (130, 37, 200),
                                   (130, 38, 202), (5, 3, 7), (64, 1, 129), (3, 2, 2)])
def test_shapes_on_the_device(name, m, k, n):
    rng = np.random.default_rng(m * k + n)
    a, ta = make(rng, pk.f32, (m, k), "contiguous")
    b, tb = make(rng, pk.f32, (k, n), "contiguous")
    check(run(BY_NAME[name], ta, tb), a, b)


# the load mappings per layout are the same code in every candidate: three that differ in
# block, slice depth and staging (4 elements of A and of B per invocation; 4 and 8; u64 words
# falling back to 8 and 8) cover them
@pytest.mark.parametrize("name", ["f32_128x128_k8_strided", "f32_64x128_k8_quad",
                                  "f32_128x128_k16_quad_u64"])
@pytest.mark.parametrize("la,lb", [("transposed", "contiguous"), ("contiguous", "transposed"),
                                   ("transposed", "transposed"), ("strided", "strided")])
def test_operand_layouts(name, la, lb):
    rng = np.random.default_rng(7)
    a, ta = make(rng, pk.f32, (150, 40), la)
    b, tb = make(rng, pk.f32, (40, 140), lb)
    check(run(BY_NAME[name], ta, tb), a, b)


@pytest.mark.parametrize("name", NAMES)
def test_batches_with_a_broadcast_operand_and_accumulation(name):
    rng = np.random.default_rng(11)
    a = rng.uniform(-2, 2, (3, 70, 33)).astype(np.float32)
    b = rng.uniform(-2, 2, (33, 90)).astype(np.float32)
    tb = view(pk.asarray(b), (3, 33, 90), (0,) + pk.asarray(b).element_strides)
    check(run(BY_NAME[name], pk.asarray(a), tb), a, b)
    c0 = rng.uniform(-2, 2, (3, 70, 90)).astype(np.float32)
    got = run(BY_NAME[name], pk.asarray(a), tb, c=pk.asarray(c0))
    check(got, a, b, c0.astype(np.float64))


def test_operands_as_pairs_where_rows_allow():
    """The u64 candidates read f32 pairs where every row starts on an 8-byte boundary and has
    an even length; other operands take their 4-byte loads (the tests above cover both)."""
    base = pk.asarray(np.arange(2 * 6 * 10, dtype=np.float32).reshape(2, 6, 10))
    words = gemm_f32._pairs(as4d(base))
    assert words is not None and words.dtype == pk.u64 and words.shape == (1, 2, 6, 5)
    pairs = words.numpy().view(np.float32).reshape(1, 2, 6, 10)
    np.testing.assert_array_equal(pairs[0], base.numpy())
    shifted = view(base, (2, 6, 8), base.element_strides, 1)  # rows start at odd elements
    odd = view(base, (2, 6, 9), base.element_strides)
    for t in (shifted, odd, base.mT):
        assert gemm_f32._pairs(as4d(t)) is None


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("m,k,n", [(128, 8, 128), (40, 10, 136), (33, 9, 20)])
def test_in_the_interpreter(name, m, k, n):
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    got = run(BY_NAME[name], pk.asarray(a), pk.asarray(b), interpret=True)
    check(got, a, b)
