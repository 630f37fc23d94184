"""concat, stack, take, take_along_axis and scatter_add against numpy (scatter_add against a
loop implementing PyTorch's scatter_add_): hypothesis over shapes with 0- and 1-sized
dimensions, every axis, dtypes, mixed dtypes and layouts; index dtypes; range errors for host
indices; argument errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk

from ops_inputs import ALL, INTS, layouts, make, sample, seeds

shapes = st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple)


# ---------------------------------------------------------------- concat and stack

@settings(max_examples=25, deadline=None)
@given(shape=shapes, data=st.data(), dtypes=st.lists(st.sampled_from(ALL), min_size=1,
                                                        max_size=3), seed=seeds)
def test_concat(shape, data, dtypes, seed):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    arrays, tensors = [], []
    for d in dtypes:
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))
        a, t = make(rng, d, tuple(s), data.draw(layouts))
        arrays.append(a)
        tensors.append(t)
    try:
        out_dtype = pk.result_type(*dtypes)
    except TypeError:  # u64 with a signed type: no common dtype
        with pytest.raises(TypeError):
            pk.concat(tensors, axis=axis)
        return
    got = pk.concat(tensors, axis=axis)
    expected = np.concatenate([a.astype(out_dtype.numpy) for a in arrays], axis=axis)
    assert got.dtype == out_dtype
    np.testing.assert_array_equal(got.numpy(), expected)
    flat = pk.concat(tensors, axis=None)
    np.testing.assert_array_equal(flat.numpy(), np.concatenate(
        [a.astype(out_dtype.numpy).ravel() for a in arrays]))


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(0, 4), max_size=3).map(tuple), data=st.data(),
       n=st.integers(1, 3), dtype=st.sampled_from(ALL), seed=seeds)
def test_stack(shape, data, n, dtype, seed):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    pairs = [make(rng, dtype, shape, data.draw(layouts)) for _ in range(n)]
    got = pk.stack([t for _, t in pairs], axis=axis)
    np.testing.assert_array_equal(got.numpy(), np.stack([a for a, _ in pairs], axis=axis))
    assert got.dtype == dtype


def test_concat_and_stack_errors():
    a = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="must match except along axis"):
        pk.concat([a, np.ones((3, 3), np.float32)], axis=1)
    with pytest.raises(ValueError, match="same number of dimensions"):
        pk.concat([a, np.ones(3, np.float32)])
    with pytest.raises(ValueError, match="at least one tensor"):
        pk.concat([])
    with pytest.raises(ValueError, match="0-d"):
        pk.concat([pk.asarray(np.float32(1))])
    with pytest.raises(TypeError, match="sequence of tensors"):
        pk.concat(pk.asarray(a))
    with pytest.raises(ValueError, match="same shape"):
        pk.stack([a, a.T.copy()])
    with pytest.raises(ValueError, match="out of range"):
        pk.stack([a, a], axis=3)


# ---------------------------------------------------------------- take

@settings(max_examples=30, deadline=None)
@given(shape=shapes, data=st.data(), dtype=st.sampled_from(ALL),
       idt=st.sampled_from([pk.i32, pk.i64, pk.u8, pk.i16]), layout=layouts, seed=seeds,
       flat=st.booleans())
def test_take(shape, data, dtype, idt, layout, seed, flat):
    rng = np.random.default_rng(seed)
    x, tx = make(rng, dtype, shape, layout)
    axis = None if flat else data.draw(st.integers(-len(shape), len(shape) - 1))
    n = x.size if flat else shape[axis]
    ishape = data.draw(st.lists(st.integers(0, 3), max_size=2).map(tuple))
    if n == 0:
        ishape = ishape if 0 in ishape else (0,)
    lo = 0 if idt.kind == "u" else -n
    ind = rng.integers(lo, max(n, 1), ishape).astype(idt.numpy)
    got = pk.take(tx, pk.asarray(ind) if data.draw(st.booleans()) else ind, axis=axis)
    expected = np.take(x, ind.astype(np.int64), axis=axis)
    assert got.shape == expected.shape and got.dtype == dtype
    np.testing.assert_array_equal(got.numpy(), expected)


def test_take_scalar_index_and_clipping_of_device_indices():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(pk.take(x, 2, axis=1).numpy(), np.take(x, 2, axis=1))
    ind = pk.asarray(np.array([-1, 5, 100, -100], np.int32))  # device indices: clipped
    np.testing.assert_array_equal(pk.take(x, ind, axis=1).numpy(), x[:, [3, 3, 3, 0]])


def test_take_errors():
    x = np.ones((3, 4), np.float32)
    with pytest.raises(IndexError, match="index 4 is out of bounds for an axis of size 4"):
        pk.take(x, [0, 4], axis=1)
    with pytest.raises(IndexError, match="out of bounds"):
        pk.take(x, [-13])
    with pytest.raises(TypeError, match="integers"):
        pk.take(x, [0.5], axis=0)
    with pytest.raises(TypeError, match="indices has dtype f32"):
        pk.take(x, pk.asarray(np.zeros(2, np.float32)), axis=0)
    with pytest.raises(ValueError, match="out of range"):
        pk.take(x, [0], axis=2)


# ---------------------------------------------------------------- take_along_axis

@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple), data=st.data(),
       dtype=st.sampled_from(ALL), layout=layouts, seed=seeds)
def test_take_along_axis(shape, data, dtype, layout, seed):
    rng = np.random.default_rng(seed)
    x, tx = make(rng, dtype, shape, layout)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    # indices broadcast against x in the other dimensions
    ishape = tuple(data.draw(st.integers(0, 4)) if d == axis % len(shape) else
                   data.draw(st.sampled_from([1, s])) for d, s in enumerate(shape))
    n = shape[axis]
    ind = rng.integers(-n, n, ishape)
    got = pk.take_along_axis(tx, ind, axis=axis)
    expected = np.take_along_axis(x, ind, axis=axis)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected)


def test_take_along_axis_flat_and_with_argsort():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    ind = np.array([23, 0, 5, -1])
    np.testing.assert_array_equal(pk.take_along_axis(x, ind, axis=None).numpy(),
                                  np.take_along_axis(x, ind, axis=None))
    order = pk.argsort(x, axis=1)
    np.testing.assert_array_equal(pk.take_along_axis(x, order, axis=1).numpy(),
                                  np.sort(x, axis=1))


def test_take_along_axis_errors():
    x = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match="as many dimensions"):
        pk.take_along_axis(x, np.zeros(3, np.int64), axis=1)
    with pytest.raises(IndexError, match="out of bounds"):
        pk.take_along_axis(x, np.full((3, 1), 4), axis=1)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        pk.take_along_axis(x, np.zeros((2, 1), np.int64), axis=1)


# ---------------------------------------------------------------- scatter_add

def ref_scatter_add(x, axis, index, src):
    out = x.copy()
    for p in np.ndindex(*index.shape):
        q = list(p)
        q[axis] = index[p]
        with np.errstate(over="ignore"):
            out[tuple(q)] = out[tuple(q)] + src[p].astype(x.dtype)
    return out


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple), data=st.data(),
       dtype=st.sampled_from(ALL), idt=st.sampled_from(INTS), layout=layouts, seed=seeds)
def test_scatter_add(shape, data, dtype, idt, layout, seed):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    ax = axis % len(shape)
    x, tx = make(rng, dtype, shape, layout)
    ishape = tuple(data.draw(st.integers(0, 5)) if d == ax else data.draw(st.integers(0, s))
                   for d, s in enumerate(shape))
    sshape = tuple(s + data.draw(st.integers(0, 1)) for s in ishape)
    src, tsrc = make(rng, dtype, sshape, data.draw(layouts))
    n = shape[ax]
    if n == 0:
        ishape = tuple(0 if d == ax else s for d, s in enumerate(ishape))
    ind = rng.integers(0, max(n, 1), ishape).astype(idt.numpy)
    got = pk.scatter_add(tx, axis, ind, tsrc)
    expected = ref_scatter_add(x, ax, ind, src)
    assert got.dtype == dtype
    if dtype.is_float:  # additions in an unspecified order (atomics) or in f32 (f16)
        np.testing.assert_allclose(got.numpy().astype(np.float64), expected, rtol=2e-3,
                                   atol=2e-2 if dtype == pk.f16 else 1e-5)
    else:
        np.testing.assert_array_equal(got.numpy(), expected)
    np.testing.assert_array_equal(tx.numpy(), x)  # x itself is unchanged


def test_scatter_add_histogram_and_mixed_dtypes():
    rng = np.random.default_rng(11)
    labels = rng.integers(0, 10, 5000)
    counts = pk.scatter_add(np.zeros(10, np.int32), 0, labels, np.ones(5000, np.int32))
    np.testing.assert_array_equal(counts.numpy(), np.bincount(labels, minlength=10))
    x = np.zeros((3, 4), np.float32)
    src = rng.integers(0, 5, (3, 4)).astype(np.int64)  # converted to x's dtype
    ind = rng.integers(0, 4, (3, 4))
    np.testing.assert_array_equal(pk.scatter_add(x, 1, ind, src).numpy(),
                                  ref_scatter_add(x, 1, ind, src))


def test_scatter_add_device_indices_out_of_range_are_skipped():
    x = np.zeros(4, np.float64)
    ind = pk.asarray(np.array([0, -1, 4, 3], np.int32))
    got = pk.scatter_add(x, 0, ind, np.ones(4, np.float64)).numpy()
    np.testing.assert_array_equal(got, [1, 0, 0, 1])


def test_scatter_add_long_index_axis_in_chunks(monkeypatch):
    from pykern.tensor.index import indexing
    monkeypatch.setattr(indexing, "loop_budget", lambda: 6)  # chunks of 3 along the index axis
    rng = np.random.default_rng(12)
    x = sample(rng, pk.f64, (5, 3))
    ind = rng.integers(0, 5, (17, 3))
    src = sample(rng, pk.f64, (17, 3))
    np.testing.assert_allclose(pk.scatter_add(x, 0, ind, src).numpy(),
                               ref_scatter_add(x, 0, ind, src), rtol=1e-12)


def test_scatter_add_errors():
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(ValueError, match="same number of dimensions"):
        pk.scatter_add(x, 0, np.zeros(3, np.int64), np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="must not exceed"):
        pk.scatter_add(x, 0, np.zeros((2, 5), np.int64), np.zeros((2, 5), np.float32))
    with pytest.raises(IndexError, match="out of bounds"):
        pk.scatter_add(x, 1, np.full((1, 1), 4), np.zeros((1, 1), np.float32))
    with pytest.raises(IndexError, match="out of bounds"):
        pk.scatter_add(x, 1, np.full((1, 1), -1), np.zeros((1, 1), np.float32))


def test_repeated_takes_of_device_indices_read_each_call_own_indices():
    # a take of device indices replays an op plan after its first call: every later call must
    # gather from its own x at its own indices (clipped to the axis where out of range)
    rng = np.random.default_rng(7)
    for axis in (0, 1, None):
        for _ in range(4):
            x = rng.standard_normal((6, 5)).astype(np.float32)
            idx = rng.integers(-3, 9, (2, 3)).astype(np.int32)
            n = x.size if axis is None else x.shape[axis]
            got = pk.take(pk.asarray(x), pk.asarray(idx), axis=axis).numpy()
            want = np.take(x, np.clip(np.where(idx < 0, idx + n, idx), 0, n - 1), axis=axis)
            np.testing.assert_array_equal(got, want)
