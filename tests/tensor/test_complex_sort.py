"""sort and argsort of complex tensors against numpy's stable sort: by real part, then imaginary
part, NaNs in numpy's classes [R + Rj, R + nanj, nan + Rj, nan + nanj] (each class ordered by
its non-NaN part); descending is the reverse order with ties still in index order. Parts are
drawn from a few values (ties, -0.0 next to 0.0, infinities, NaN) over shapes with 0- and
1-sized dimensions, every axis and several layouts; rows longer than one block; the array-API
and numpy routes; unique_* in the same order; topk refusing complex tensors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from pykern.ops.choice import configured

from ops_inputs import as_layout, seeds

COMPLEX = [pk.c64, pk.c128]
PARTS = np.array([-np.inf, -1.5, -0.0, 0.0, 1.5, 2.0, np.inf, np.nan])
shapes = st.lists(st.integers(0, 6), min_size=1, max_size=3).map(tuple)


def values(rng: np.random.Generator, dtype: pk.DType, shape: tuple[int, ...],
           nan_rate: float = 0.2) -> np.ndarray:
    """Complex values whose parts repeat: finite ties, signed zeros, infinities, NaNs."""
    finite = PARTS[:-1]
    re = rng.choice(finite, shape)
    im = rng.choice(finite, shape)
    re[rng.random(shape) < nan_rate] = np.nan
    im[rng.random(shape) < nan_rate] = np.nan
    out = np.empty(shape, dtype.numpy)
    out.real, out.imag = re, im  # (re + 1j * im would turn an infinite part's partner NaN)
    return out


def ref_order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """numpy's stable order along `axis`; descending: the reverse order, ties in index order
    (a stable sort of the reversed axis, reversed back)."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    rev = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return n - 1 - np.flip(rev, axis)


def same(got: np.ndarray, want: np.ndarray) -> None:
    """Equal element by element, the sign of zero parts and NaN parts included."""
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    for part in (np.real, np.imag):
        g, w = part(got), part(want)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_array_equal(np.signbit(g[~np.isnan(g)]), np.signbit(w[~np.isnan(w)]))


def check(x: np.ndarray, t: pk.Tensor, axis: int, descending: bool) -> None:
    order = ref_order(x, axis, descending)
    got_i = pk.argsort(t, axis=axis, descending=descending)
    got_v = pk.sort(t, axis=axis, descending=descending)
    assert got_i.dtype == pk.i64 and got_v.dtype == t.dtype
    np.testing.assert_array_equal(got_i.numpy(), order)
    # the indices reproduce the sorted values, which are numpy's (and, ascending, np.sort's)
    same(np.take_along_axis(x, got_i.numpy(), axis=axis), got_v.numpy())
    same(got_v.numpy(), np.take_along_axis(x, order, axis=axis))
    if not descending:
        same(got_v.numpy(), np.sort(x, axis=axis, kind="stable"))


def test_numpys_order_of_nan_classes():
    nan = np.nan
    parts = [(2.0, 0.0), (1.0, nan), (nan, 1.0), (nan, nan), (1.0, 5.0), (nan, -1.0),
             (-3.0, nan), (1.0, -2.0), (-np.inf, np.inf), (nan, nan), (1.0, nan)]
    x = np.empty(len(parts), np.complex128)
    x.real, x.imag = np.array(parts).T
    got = pk.argsort(pk.asarray(x)).numpy().tolist()
    # R + Rj by real then imaginary part, R + nanj by real part, nan + Rj by imaginary part,
    # nan + nanj in index order
    assert got == [8, 7, 4, 0, 6, 1, 10, 5, 2, 3, 9]
    assert got == np.argsort(x, kind="stable").tolist()
    assert pk.argsort(pk.asarray(x), descending=True).numpy().tolist() == \
        [3, 9, 2, 5, 1, 10, 6, 0, 4, 7, 8]


@settings(max_examples=40, deadline=None)
@given(shape=shapes, data=st.data(), dtype=st.sampled_from(COMPLEX),
       layout=st.sampled_from(["contiguous", "transposed", "strided"]), seed=seeds,
       descending=st.booleans())
def test_sort_and_argsort_of_complex(shape, data, dtype, layout, seed, descending):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = values(rng, dtype, shape)
    check(x, as_layout(x, layout, rng), axis, descending)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("length,descending", [(1, False), (17, True), (300, False),
                                               (2049, False), (2049, True)])
def test_row_lengths_across_the_block_size(dtype, length, descending):
    rng = np.random.default_rng(length)
    x = values(rng, dtype, (2, length), 0.05)
    check(x, pk.asarray(x), 1, descending)
    check(x.T, pk.asarray(x.T), 0, descending)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_long_rows_several_merge_stages(dtype):
    rng = np.random.default_rng(3)
    x = values(rng, dtype, (3, 1000), 0.1)
    with configured("sort", block=64):  # 1024 = 16 blocks: four global stages
        check(x, pk.asarray(x), 1, False)
        check(x, pk.asarray(x), 1, True)


def test_every_route_to_the_sort():
    rng = np.random.default_rng(4)
    x = values(rng, pk.c64, (4, 9))
    t = pk.asarray(x)
    xp = pk.array_api
    for axis in (0, 1):
        for desc in (False, True):
            order = ref_order(x, axis, desc)
            got = xp.argsort(t, axis=axis, descending=desc, stable=True).numpy()
            np.testing.assert_array_equal(got, order)
            same(xp.sort(t, axis=axis, descending=desc, stable=True).numpy(),
                 np.take_along_axis(x, order, axis=axis))
    sorted_np = np.sort(t, axis=0)  # __array_function__: a tensor, numpy's values
    assert isinstance(sorted_np, pk.Tensor)
    same(sorted_np.numpy(), np.sort(x, axis=0, kind="stable"))
    np.testing.assert_array_equal(np.argsort(t, axis=None).numpy(),
                                  np.argsort(x, axis=None, kind="stable"))
    z = pk.asarray(np.complex128(complex(np.nan, 1.0)))
    assert pk.argsort(z).numpy() == 0 and np.isnan(pk.sort(z).numpy().real)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 40), dtype=st.sampled_from(COMPLEX), seed=seeds)
def test_unique_of_complex_in_the_same_order(n, dtype, seed):
    # numpy's unique merges every NaN value into one; the array API keeps each NaN distinct, so
    # the reference is numpy's stable sort with runs of equal values merged
    x = values(np.random.default_rng(seed), dtype, (n,), 0.3)
    s = np.sort(x, kind="stable")
    starts = np.concatenate([[True], s[1:] != s[:-1]])
    got = pk.array_api.unique_all(pk.asarray(x))
    same(got.values.numpy(), s[starts])
    first = np.argsort(x, kind="stable")[starts]
    np.testing.assert_array_equal(got.indices.numpy(), first)
    np.testing.assert_array_equal(got.counts.numpy(), np.diff(np.append(np.flatnonzero(starts),
                                                                        n)))
    back = got.values.numpy()[got.inverse_indices.numpy()]  # == x, where x is not NaN
    np.testing.assert_array_equal(back[~np.isnan(x)], x[~np.isnan(x)])


def test_topk_refuses_complex_tensors():
    z = pk.asarray(np.array([1 + 1j, 2 - 1j], np.complex64))
    with pytest.raises(TypeError, match=r"^topk is not defined for complex tensors \(c64\)"):
        pk.topk(z, 1)
