"""The composed attention path (matmul → softmax → matmul) makes its (..., Lq, Lk) scores for
as many matrices of the batch at a time as one storage buffer holds: here a small cap forces
pieces (whole trailing dimensions, a leading one cut with a remainder, one matrix a piece),
with broadcast batch dimensions and the causal mask, against float64."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pykern as pk
from pykern.tensor.nnops import nn_ops as nn


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
    s = q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)


@pytest.mark.parametrize("qb,kb,matrices,causal", [
    ((2, 5), (2, 5), 3, True),      # cuts the second dimension: 3 + 2, twice
    ((4, 3), (3,), 7, False),       # whole rows of 3, two of them a piece: 2 + 2
    ((3, 1, 2), (1, 2, 2), 1, True),  # one matrix a piece
    ((), (), 1, False),             # no batch at all
])
def test_scores_in_pieces_match_float64(qb, kb, matrices, causal, monkeypatch):
    rng = np.random.default_rng(len(qb) * 10 + matrices)
    lq, lk, d = 9, 11, 8
    q = rng.standard_normal(qb + (lq, d)).astype(np.float32)
    k = rng.standard_normal(kb + (lk, d)).astype(np.float32)
    v = rng.standard_normal(kb + (lk, 5)).astype(np.float32)
    monkeypatch.setattr(nn, "FUSED_ATTENTION", False)
    monkeypatch.setattr(nn, "SCORES_MAX_BYTES", matrices * lq * lk * 4 + 3)
    got = pk.attention(q, k, v, causal=causal).numpy()
    np.testing.assert_allclose(got, reference(q, k, v, causal), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("batch,cap,pieces", [
    ((2, 5), 3, [((0,), 0, 3), ((0,), 3, 5), ((1,), 0, 3), ((1,), 3, 5)]),
    ((4, 3), 7, [((), 0, 2), ((), 2, 4)]),
    ((4, 3), 12, [((), 0, 4)]),
    ((2, 2), 1, [((0,), 0, 1), ((0,), 1, 2), ((1,), 0, 1), ((1,), 1, 2)]),
    ((), 1, [((), 0, 1)]),
])
def test_batch_chunks_cover_the_batch_once(batch, cap, pieces):
    assert list(nn._batch_chunks(batch, cap)) == pieces
