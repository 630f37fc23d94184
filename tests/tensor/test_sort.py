"""sort, argsort and topk against numpy's stable sort (descending: a stable sort on the
reversed order with NaN first, as PyTorch): hypothesis over shapes with 0- and 1-sized
dimensions, every axis, every dtype and layout; rows sorted in shared memory (tiny rows several
per workgroup) and rows longer than one block (global merge passes); ties, NaN, -0.0."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from pykern.ops.choice import configured

from ops_inputs import ALL, layouts, make, seeds

shapes = st.lists(st.integers(0, 6), min_size=1, max_size=4).map(tuple)


def ref_order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable order along `axis`: ascending with NaN last (numpy), or descending with NaN
    first; ties in index order both ways."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    xm = np.moveaxis(x, axis, -1)
    if x.dtype.kind == "f":
        key = -xm.astype(np.float64)
        key = np.where(np.isnan(xm), -np.inf, key)
        nan_last = ~np.isnan(xm)  # lexsort: the last key is the primary one
        order = np.lexsort((key, nan_last), axis=-1)
    elif x.dtype.kind == "b":
        order = np.argsort(~xm, axis=-1, kind="stable")
    else:
        # descending by value, stable: ascending by the negated rank among distinct values
        order = np.argsort(-_dense_rank(xm), axis=-1, kind="stable")
    return np.moveaxis(order, -1, axis)


def _dense_rank(xm: np.ndarray) -> np.ndarray:
    """Rank of each value among the distinct values of its row (equal values, equal rank)."""
    out = np.empty(xm.shape, np.int64)
    for idx in np.ndindex(*xm.shape[:-1]):
        row = xm[idx]
        out[idx] = np.searchsorted(np.unique(row), row)
    return out


def check(x: np.ndarray, t: pk.Tensor, axis: int, descending: bool) -> None:
    order = ref_order(x, axis, descending)
    values = np.take_along_axis(x, order, axis=axis)
    got_i = pk.argsort(t, axis=axis, descending=descending)
    got_v = pk.sort(t, axis=axis, descending=descending)
    assert got_i.dtype == pk.i64 and got_v.dtype == t.dtype
    np.testing.assert_array_equal(got_i.numpy(), order)
    np.testing.assert_array_equal(got_v.numpy(), values)


@settings(max_examples=30, deadline=None)
@given(shape=shapes, data=st.data(), dtype=st.sampled_from(ALL), layout=layouts, seed=seeds,
       descending=st.booleans())
def test_sort_and_argsort(shape, data, dtype, layout, seed, descending):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x, t = make(rng, dtype, shape, layout, -3, 3)  # few distinct values: many ties
    check(x, t, axis, descending)


@pytest.mark.parametrize("length,descending", [(1, False), (3, True), (65, False), (129, True),
                                               (2048, False), (2049, False), (2049, True)])
def test_row_lengths_across_the_block_size(length, descending):
    rng = np.random.default_rng(length)
    x = rng.integers(-50, 50, (2, length)).astype(np.float32)
    x[0, ::7] = np.nan
    x[1, ::5] = -0.0
    check(x, pk.asarray(x), 1, descending)


def test_many_short_rows_and_64_bit_keys():
    rng = np.random.default_rng(13)
    x = rng.integers(-2**62, 2**62, (300, 5), dtype=np.int64)
    x[:, 2] = x[:, 0]  # ties
    check(x, pk.asarray(x), 1, False)
    check(x, pk.asarray(x), 0, True)
    u = rng.integers(0, 2**64 - 1, (7, 9), dtype=np.uint64)
    check(u, pk.asarray(u), 1, True)


def test_long_rows_several_merge_stages():
    rng = np.random.default_rng(14)
    x = rng.integers(0, 300, (3, 4000)).astype(np.int32)
    with configured("sort", block=128):  # 4096 = 32 blocks: five global stages
        check(x, pk.asarray(x), 1, False)
        check(x, pk.asarray(x), 1, True)


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3).map(tuple), data=st.data(),
       dtype=st.sampled_from(ALL), seed=seeds, largest=st.booleans(), layout=layouts)
def test_topk(shape, data, dtype, seed, largest, layout):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(0, shape[axis]))
    x, t = make(rng, dtype, shape, layout, -3, 3)
    order = np.take(ref_order(x, axis, largest), np.arange(k), axis=axis)
    values, indices = pk.topk(t, k, axis=axis, largest=largest)
    np.testing.assert_array_equal(indices.numpy(), order)
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(x, order, axis=axis))


def test_zero_dimensional_and_errors():
    x = pk.asarray(np.float32(3.5))
    assert pk.sort(x).numpy() == np.float32(3.5) and pk.argsort(x).numpy() == 0
    y = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="k = 4 is larger"):
        pk.topk(y, 4)
    with pytest.raises(ValueError, match="k must be >= 0"):
        pk.topk(y, -1)
    with pytest.raises(ValueError, match="out of range"):
        pk.sort(y, axis=2)
    with pytest.raises(TypeError, match="must be a pk.Tensor"):
        pk.sort("abc")


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_of_a_strided_view(side):
    # a transposed x2 takes the kernel's unravelled (4-d) path, not the flat one
    rng = np.random.default_rng(5)
    x1 = np.sort(rng.integers(0, 20, 16)).astype(np.float32)
    x2 = rng.integers(-2, 22, (5, 7)).astype(np.float32)
    got = pk.array_api.searchsorted(pk.asarray(x1), pk.asarray(x2).T, side=side)
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(x1, x2.T, side=side))
