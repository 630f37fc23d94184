"""The two GPU-side reshapings of a matmul, run here on whatever device the suite has:
splitting a long K into a batch of partial products (`_split_k_matmul`) and copying a
transposed operand row-major (`_row_major`) give numpy's product."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import pykern as pk
from pykern.tensor.gemm import matmul as linalg

# the description matmul sizes its work by: a GPU of 132 compute units (an H100's SMs)
H100 = SimpleNamespace(kind="discrete", limits=SimpleNamespace(compute_units=132))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("split", [2, 4])
def test_split_k_sums_the_partial_products(dtype, split):
    rng = np.random.default_rng(split)
    a = rng.standard_normal((24, 512)).astype(dtype)
    b = rng.standard_normal((512, 40)).astype(dtype)
    out = pk.empty((24, 40), dtype=pk.asarray(a).dtype)
    at, bt = pk.asarray(a.T.copy()).T, pk.asarray(b)  # a transposed view: strides are kept
    linalg._split_k_matmul(at, bt, out, split)
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-4 if dtype == np.float32 else 1e-11)


def test_split_k_chooses_pieces_only_for_few_blocks_and_long_k():
    assert linalg._split_k(384, 1152, 8192, 1, pk.f32, H100) == 8  # a weight gradient
    assert linalg._split_k(8192, 1152, 384, 1, pk.f32, H100) == 1  # many output blocks
    assert linalg._split_k(384, 384, 1024, 1, pk.f32, H100) == 1  # short K
    assert linalg._split_k(384, 384, 8192, 4, pk.f32, H100) == 1  # batched already
    assert linalg._split_k(384, 384, 8192, 1, pk.i32, H100) == 1  # integer products stay exact
    assert linalg._split_k(384, 384, 8191, 1, pk.f32, H100) == 1  # K not divisible


def test_row_major_copies_transposed_operands_only():
    t = pk.asarray(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    assert linalg._row_major(t, 128, True) is t
    tt = t.mT
    copied = linalg._row_major(tt, 128, True)
    assert copied is not tt and copied.element_strides[-1] == 1
    np.testing.assert_array_equal(copied.numpy(), tt.numpy())
    assert linalg._row_major(tt, 16, True) is tt  # too narrow a product to pay for the copy
    assert linalg._row_major(tt, 128, False) is tt
