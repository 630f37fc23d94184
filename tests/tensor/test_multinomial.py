"""pk.multinomial (PyTorch's torch.multinomial) against the distributions it must draw from:
frequencies within a few standard deviations of the probabilities, with and without
replacement, never a category of weight 0, repeatable with pk.random.seed, and clear errors
for bad weights."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk

WEIGHTS = np.array([1.0, 0.0, 3.0, 6.0], np.float32)  # not normalised: p = w / 10
P = WEIGHTS / WEIGHTS.sum()


def assert_frequencies(draws: np.ndarray, p: np.ndarray, sigmas: float = 5.0) -> None:
    """Each category's count within `sigmas` binomial standard deviations of n * p."""
    n = draws.size
    counts = np.bincount(draws.ravel(), minlength=len(p))
    spread = sigmas * np.sqrt(n * p * (1 - p)) + 1
    assert np.all(np.abs(counts - n * p) <= spread), (counts, n * p)


@pytest.mark.parametrize("dtype", [pk.f32, pk.f64, pk.f16])
def test_with_replacement_draws_by_weight(dtype):
    pk.random.seed(1)
    draws = pk.multinomial(pk.asarray(WEIGHTS, dtype=dtype), 20000, replacement=True)
    assert draws.shape == (20000,) and draws.dtype == pk.i64
    d = draws.numpy()
    assert not (d == 1).any()  # weight 0: never
    assert_frequencies(d, P)


def test_rows_draw_from_their_own_weights():
    w = np.array([[0.0, 0.0, 5.0], [1.0, 1.0, 0.0], [2.0, 1.0, 1.0]], np.float32)
    pk.random.seed(2)
    with_r = pk.multinomial(pk.asarray(w), 6000, replacement=True).numpy()
    assert with_r.shape == (3, 6000)
    assert (with_r[0] == 2).all() and not (with_r[1] == 2).any()
    assert_frequencies(with_r[2], w[2] / w[2].sum())
    without = pk.multinomial(pk.asarray(w[1:]), 2).numpy()
    assert sorted(without[0]) == [0, 1] and len(set(without[1])) == 2


def test_without_replacement_draws_in_order_as_one_at_a_time():
    """Rows of the same weights: the first draw has probability p_j, the second
    sum_i p_i p_j / (1 - p_i) over i != j; no row repeats a category."""
    rows = 8000
    w = np.tile(np.array([1.0, 2.0, 3.0, 4.0], np.float32), (rows, 1))
    p = w[0] / w[0].sum()
    pk.random.seed(3)
    d = pk.multinomial(pk.asarray(w), 4).numpy()
    assert d.shape == (rows, 4)
    assert (np.sort(d, axis=1) == np.arange(4)).all()  # a permutation per row
    assert_frequencies(d[:, 0], p)
    second = np.array([sum(p[i] * p[j] / (1 - p[i]) for i in range(4) if i != j)
                       for j in range(4)])
    assert_frequencies(d[:, 1], second)


def test_without_replacement_skips_zero_weights_and_counts_them():
    pk.random.seed(4)
    d = pk.multinomial(pk.asarray(WEIGHTS), 3).numpy()
    assert sorted(d) == [0, 2, 3]
    with pytest.raises(ValueError, match="positive weights"):
        pk.multinomial(pk.asarray(WEIGHTS), 4)
    with pytest.raises(ValueError, match="without replacement from 4"):
        pk.multinomial(pk.asarray(WEIGHTS), 5)


def test_the_seed_repeats_the_draws():
    w = pk.asarray(np.abs(np.random.default_rng(0).standard_normal((3, 50))))
    for replacement in (False, True):
        pk.random.seed(9)
        first = pk.multinomial(w, 5, replacement).numpy()
        pk.random.seed(9)
        np.testing.assert_array_equal(pk.multinomial(w, 5, replacement).numpy(), first)


def test_weights_that_require_grad_give_indices_without_grad():
    w = pk.asarray([0.2, 0.8]).requires_grad_()
    d = pk.multinomial(pk.nn.functional.softmax(w, dim=0), 1)
    assert not d.requires_grad and d.dtype == pk.i64


@pytest.mark.parametrize("weights, n, kwargs, error, match", [
    ([1.0, -0.5], 1, {}, ValueError, "non-negative"),
    ([1.0, float("nan")], 1, {"replacement": True}, ValueError, "finite"),
    ([0.0, 0.0], 1, {"replacement": True}, ValueError, "positive weights"),
    ([1, 2], 1, {}, TypeError, "float weights"),
    ([[[1.0]]], 1, {}, ValueError, "1-D or 2-D"),
    ([1.0, 2.0], 0, {}, ValueError, "num_samples"),
    ([1.0, 2.0], 1, {"generator": object()}, TypeError, "pk.random.seed"),
])
def test_bad_input_is_refused_by_name(weights, n, kwargs, error, match):
    with pytest.raises(error, match=match):
        pk.multinomial(pk.asarray(weights), n, **kwargs)
