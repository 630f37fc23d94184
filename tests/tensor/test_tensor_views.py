"""pk.Tensor: attributes, views without copies (indexing, reshape, transpose, broadcast,
squeeze/unsqueeze, flip), copies (contiguous, astype, copy), __setitem__, host interop
(numpy, __array__, DLPack, repr, scalars) and errors — each compared with numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tensor_support import ALL, sample, shapes, views

import pykern as pk

rng = np.random.default_rng(5)
SETTINGS = settings(max_examples=40, deadline=None)


def arange_t(shape, dtype=np.int32):
    a = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    return a, pk.asarray(a)


# ---------------------------------------------------------------- attributes


def test_attributes_match_numpy():
    a, t = arange_t((2, 3, 4), np.float32)
    assert t.shape == a.shape and t.ndim == 3 and t.size == 24 and t.dtype == pk.f32
    assert t.strides == a.strides and t.itemsize == 4 and t.nbytes == a.nbytes
    assert t.device is pk.get_device()
    v = t[:, ::2, ::-1]
    assert v.strides == a[:, ::2, ::-1].strides and v.buffer is t.buffer
    assert len(t) == 2 and t.T.shape == (4, 3, 2)


def test_zero_d_tensor_scalars_and_conversions():
    t = pk.asarray(np.float32(2.5))
    assert t.shape == () and t.ndim == 0 and t.size == 1
    assert float(t) == 2.5 and t.item() == 2.5 and bool(t) and int(t) == 2
    i = pk.asarray(np.int64(7))
    assert int(i) == 7 and [10, 20, 30, 40, 50, 60, 70, 80][i] == 80  # __index__
    with pytest.raises(TypeError, match="integer tensors"):
        [1, 2][pk.asarray(1.0)]
    with pytest.raises(ValueError, match="ambiguous"):
        bool(pk.asarray([1, 2]))
    with pytest.raises(TypeError, match="len"):
        len(t)
    assert f"{t:.2f}" == "2.50"
    assert 5 in pk.arange(10) and 11 not in pk.arange(10)


# ---------------------------------------------------------------- basic indexing


@st.composite
def index_keys(draw, shape):
    """Basic-indexing keys: ints (negative too), slices with any step, None and one `...`."""
    ndim = len(shape)

    def keys_for(dims):
        key = []
        for size in dims:
            while draw(st.integers(0, 4)) == 0:
                key.append(None)
            if draw(st.integers(0, 2)) == 0 and size > 0:
                key.append(draw(st.integers(-size, size - 1)))
            else:
                start = draw(st.none() | st.integers(-size - 2, size + 2))
                stop = draw(st.none() | st.integers(-size - 2, size + 2))
                step = draw(st.none() | st.sampled_from([1, 2, 3, -1, -2]))
                key.append(slice(start, stop, step))
        return key

    if draw(st.booleans()):
        before = draw(st.integers(0, ndim))
        after = draw(st.integers(0, ndim - before))
        return tuple(keys_for(shape[:before]) + [Ellipsis]
                     + keys_for(shape[ndim - after:] if after else ()))
    return tuple(keys_for(shape[:draw(st.integers(0, ndim))]))


@SETTINGS
@given(data=st.data(), shape=shapes)
def test_basic_indexing_gives_numpys_view(data, shape):
    a, t = arange_t(shape)
    key = data.draw(index_keys(shape))
    v = t[key]
    assert v.buffer is t.buffer  # a view, not a copy
    expected = a[key]
    assert v.shape == expected.shape
    assert v.strides == expected.strides or expected.size <= 1
    np.testing.assert_array_equal(v.numpy(), expected)


def test_index_errors():
    _, t = arange_t((3, 4))
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 4"):
        t[0, 4]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        t[..., ...]
    with pytest.raises(IndexError, match="only ints, slices"):
        t["a"]
    assert t[pk.asarray(2), pk.asarray(np.int64(-1))].item() == 11  # 0-d integer tensors


# ---------------------------------------------------------------- reshape and friends


@st.composite
def reshapes(draw):
    """A shape and a reshape target of the same size (with -1 sometimes)."""
    factors = draw(st.lists(st.integers(1, 4), min_size=0, max_size=5))
    n = int(np.prod(factors)) if factors else 1
    shape = tuple(draw(st.permutations(factors)))
    split = draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))
    target: list[int] = []
    rest = n
    for s in split:
        if rest % s == 0:
            target.append(s)
            rest //= s
    target.append(rest)
    target = list(draw(st.permutations(target)))
    if draw(st.booleans()):
        target[draw(st.integers(0, len(target) - 1))] = -1
    return shape, tuple(target)


@SETTINGS
@given(data=st.data(), case=reshapes())
def test_reshape_is_a_view_when_strides_allow(data, case):
    shape, target = case
    a, t = data.draw(views(shape, pk.i32))
    r = t.reshape(target)
    expected = a.reshape(target)
    assert r.shape == expected.shape
    np.testing.assert_array_equal(r.numpy(), expected)
    if t.is_contiguous:
        assert r.buffer is t.buffer


def test_reshape_of_a_transpose_needs_a_copy_and_of_a_slice_does_not():
    a, t = arange_t((4, 6))
    r = t.T.reshape(-1)
    assert r.buffer is not t.buffer
    np.testing.assert_array_equal(r.numpy(), a.T.reshape(-1))
    s = t[:, ::2].reshape(2, 2, 3)  # rows stay strided: a view
    assert s.buffer is t.buffer
    np.testing.assert_array_equal(s.numpy(), a[:, ::2].reshape(2, 2, 3))
    with pytest.raises(ValueError, match=r"cannot reshape a tensor of shape \(4, 6\)"):
        t.reshape(5, 5)
    with pytest.raises(ValueError, match="at most one -1"):
        t.reshape(-1, -1)


@SETTINGS
@given(data=st.data(), shape=shapes)
def test_transpose_permute_swapaxes_flip(data, shape):
    a, t = arange_t(shape)
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    np.testing.assert_array_equal(t.permute(*perm).numpy(), a.transpose(perm))
    np.testing.assert_array_equal(t.transpose(perm).numpy(), a.transpose(perm))
    np.testing.assert_array_equal(t.T.numpy(), a.T)
    if len(shape) >= 2:
        np.testing.assert_array_equal(t.mT.numpy(), np.swapaxes(a, -1, -2))
    np.testing.assert_array_equal(t.flip().numpy(), np.flip(a))
    if shape:
        ax = data.draw(st.integers(-len(shape), len(shape) - 1))
        np.testing.assert_array_equal(t.flip(ax).numpy(), np.flip(a, ax))
    assert t.T.buffer is t.buffer


@SETTINGS
@given(shape=shapes, data=st.data())
def test_broadcast_squeeze_unsqueeze(shape, data):
    a, t = arange_t(shape)
    lead = data.draw(st.lists(st.integers(0, 3), max_size=2))
    target = tuple(lead) + tuple(s if data.draw(st.booleans()) or s != 1 else 3 for s in shape)
    b = t.broadcast_to(target)
    assert b.buffer is t.buffer
    np.testing.assert_array_equal(b.numpy(), np.broadcast_to(a, target))
    assert all(st_ == 0 for st_, s, o in zip(b.strides[len(lead):], target[len(lead):], shape)
               if o == 1 and s != 1)
    np.testing.assert_array_equal(t.squeeze().numpy(), a.squeeze())
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    np.testing.assert_array_equal(t.unsqueeze(dim).numpy(), np.expand_dims(a, dim))
    ones = [i for i, s in enumerate(shape) if s == 1]
    if ones:
        np.testing.assert_array_equal(t.squeeze(ones[0]).numpy(), a.squeeze(ones[0]))


def test_expand_and_shape_errors():
    a, t = arange_t((3, 1))
    np.testing.assert_array_equal(t.expand(2, -1, 4).numpy(), np.broadcast_to(a, (2, 3, 4)))
    with pytest.raises(ValueError, match=r"cannot broadcast a tensor of shape \(3, 1\) to"):
        t.broadcast_to((4, 4))
    with pytest.raises(ValueError, match="cannot squeeze axis 0 of size 3"):
        t.squeeze(0)
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        t.squeeze(2)
    with pytest.raises(ValueError, match="not a permutation"):
        t.permute(0, 0)


# ---------------------------------------------------------------- copies


@SETTINGS
@given(data=st.data(), shape=shapes, dtype=st.sampled_from([pk.f32, pk.i8, pk.f16, pk.u64]))
def test_contiguous_and_copy_of_any_view(data, shape, dtype):
    a, t = data.draw(views(shape, dtype))
    c = t.contiguous()
    assert c.is_contiguous and c.dtype == dtype
    np.testing.assert_array_equal(c.numpy(), a)
    d = t.copy()
    assert d.buffer is not t.buffer
    np.testing.assert_array_equal(d.numpy(), a)


@pytest.mark.parametrize("src,dst", [(pk.f32, pk.i32), (pk.f32, pk.bool_), (pk.i32, pk.f16),
                                     (pk.u8, pk.i64), (pk.bool_, pk.f32), (pk.f64, pk.f32),
                                     (pk.i64, pk.u8), (pk.f16, pk.f64)])
def test_astype_matches_numpy(src, dst):
    a = sample(rng, src, (5, 7), -300, 300)
    t = pk.asarray(a)[:, ::-2]
    out = t.astype(dst)
    assert out.dtype == dst
    with np.errstate(invalid="ignore", over="ignore"):
        np.testing.assert_array_equal(out.numpy(), a[:, ::-2].astype(dst.numpy))
    same = t.astype(src, copy=False)
    assert same is t


# ---------------------------------------------------------------- setitem


@SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
def test_setitem_scalars_and_broadcast_tensors(data, shape):
    a, t = arange_t(shape)
    a = a.copy()
    key = data.draw(index_keys(shape))
    target_shape = a[key].shape
    if data.draw(st.booleans()):
        value = data.draw(st.integers(-100, 100))
        a[key] = value
        t[key] = value
    else:
        vshape = tuple(s if data.draw(st.booleans()) else 1 for s in target_shape)
        vshape = vshape[data.draw(st.integers(0, len(vshape))):]
        v = sample(rng, pk.f32, vshape, -50, 50)
        a[key] = v  # numpy converts float to the int dtype
        t[key] = pk.asarray(v)
    np.testing.assert_array_equal(t.numpy(), a)


def test_setitem_overlapping_source_is_read_before_written():
    a, t = arange_t((10,))
    a = a.copy()
    a[1:] = a[:-1].copy()
    t[1:] = t[:-1]
    np.testing.assert_array_equal(t.numpy(), a)
    b, u = arange_t((4, 4))
    u[...] = u.T
    np.testing.assert_array_equal(u.numpy(), b.T)


def test_setitem_errors_leave_the_tensor_intact():
    a, t = arange_t((3, 4))
    with pytest.raises(ValueError, match=r"could not broadcast a value of shape \(3,\)"):
        t[0] = pk.asarray([1, 2, 3])
    with pytest.raises(OverflowError, match="out of bounds for i8"):
        pk.zeros(3, pk.i8)[0] = 1000
    with pytest.raises(ValueError, match="broadcast view"):
        t[0].broadcast_to((2, 4))[...] = 1
    np.testing.assert_array_equal(t.numpy(), a)


# ---------------------------------------------------------------- host interop


def test_numpy_of_sparse_strided_view_and_array_protocol():
    a, t = arange_t((300, 300))
    v = t[::100, ::-150]
    np.testing.assert_array_equal(v.numpy(), a[::100, ::-150])
    np.testing.assert_array_equal(np.asarray(v, dtype=np.float64), a[::100, ::-150])
    with pytest.raises(ValueError, match="copy=False"):
        v.__array__(copy=False)


def test_dlpack_exports_host_memory():
    a, t = arange_t((3, 4), np.float32)
    assert t.__dlpack_device__() == (1, 0)
    b = np.from_dlpack(t[1:])
    np.testing.assert_array_equal(b, a[1:])
    if t.device.info.kind == "host":  # the tensor's own memory (tests/tensor/test_numpy_protocols)
        assert np.from_dlpack(t, copy=False).ctypes.data == t.buffer.address
    else:
        with pytest.raises(BufferError, match="host copy"):
            t.__dlpack__(copy=False)
    u = pk.asarray(np.from_dlpack(np.arange(4.0)))
    assert u.dtype == pk.f64


def test_repr_str_tolist_and_numpy_ufuncs():
    t = pk.asarray(np.array([[1, 2], [3, 4]], np.int16))
    assert repr(t) == "pk.Tensor([[1, 2],\n           [3, 4]], dtype=pk.i16)"
    assert str(t) == "[[1 2]\n [3 4]]"
    assert t.tolist() == [[1, 2], [3, 4]]
    r = np.add(np.ones(2, np.int16), t)  # numpy ufuncs on tensors run pykern's kernels
    assert isinstance(r, pk.Tensor)
    np.testing.assert_array_equal(r.numpy(), [[2, 3], [4, 5]])
    assert isinstance(np.arange(2, dtype=np.int16) * t, pk.Tensor)
    assert isinstance(pk.exp(pk.asarray([1.0])), pk.Tensor)
    assert pk.exp(0.0) == 1.0  # the builtin still works on host numbers


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
def test_round_trip_every_dtype(dtype):
    a = sample(rng, dtype, (2, 3))
    t = pk.asarray(a)
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(t.T.contiguous().numpy(), a.T)


def test_asarray_defaults_and_errors():
    assert pk.asarray(1.5).dtype == pk.f32 and pk.asarray(True).dtype == pk.bool_
    assert pk.asarray([[1, 2]]).dtype == pk.i32
    with pytest.raises(OverflowError, match="i32"):
        pk.asarray([2**40])
    assert pk.asarray([2**40], dtype=pk.i64).item() == 2**40
    with pytest.raises(TypeError, match="numpy dtype <U1 has no pykern equivalent"):
        pk.asarray(np.array(["a"]))
    t = pk.asarray([1.0, 2.0])
    assert pk.asarray(t) is t and pk.asarray(t, copy=True) is not t
    assert pk.asarray([pk.asarray(1.0), 2.0]).tolist() == [1.0, 2.0]
