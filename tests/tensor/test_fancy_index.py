"""Advanced indexing (`t[idx]`, `t[mask]`, mixed with ints, slices, None and ...) against
numpy: hypothesis over shapes, index kinds (lists, numpy arrays, tensors, tensor views) and
their positions, for reading and assignment, on views of every layout; every dtype; the
last-wins rule for repeated indices; the errors, with the tensor left intact."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from pykern.tensor.index import advanced_index
from pykern.tensor.index.advanced_key import is_advanced

from ops_inputs import ALL, as_layout, make, seeds

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)
index_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)
FORMS = ["list", "numpy", "tensor", "view"]


def _as_form(arr: np.ndarray, form: str, rng: np.random.Generator) -> object:
    """An index array as a list, a numpy array, a tensor, or a strided/transposed tensor."""
    if form == "list":
        return arr.tolist()
    if form == "numpy":
        return arr
    if form == "tensor":
        return pk.asarray(arr)
    return as_layout(arr, str(rng.choice(["transposed", "strided"])), rng)


@st.composite
def keys(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[tuple, tuple]:
    """(the numpy key, the same key for pykern) with at least one advanced part: integer
    arrays of one broadcastable shape, or one boolean mask over some dimensions."""
    rng = np.random.default_rng(draw(seeds))
    bshape = draw(index_shapes)
    np_key: list = []
    pk_key: list = []
    d = 0
    use_mask = draw(st.booleans())
    advanced = False
    while d < len(shape):
        kind = draw(st.sampled_from(["int", "slice", "advanced", "none", "advanced"]))
        if kind == "advanced" and use_mask and advanced:
            kind = "slice"
        if kind == "none":
            np_key.append(None)
            pk_key.append(None)
            continue
        if kind == "int":
            i = int(rng.integers(-shape[d], shape[d]))
            np_key.append(i)
            pk_key.append(i)
            d += 1
        elif kind == "slice":
            s = draw(st.sampled_from([slice(None), slice(1, None), slice(None, None, -1),
                                      slice(None, None, 2)]))
            np_key.append(s)
            pk_key.append(s)
            d += 1
        elif use_mask:
            k = draw(st.integers(1, len(shape) - d))
            m = rng.random(shape[d:d + k]) < 0.6
            np_key.append(m)
            pk_key.append(_as_form(m, draw(st.sampled_from(FORMS)), rng))
            advanced = True
            d += k
        else:
            sub = tuple(1 if draw(st.booleans()) else s for s in bshape)
            idx = rng.integers(-shape[d], shape[d], sub)
            np_key.append(idx)
            pk_key.append(_as_form(idx, draw(st.sampled_from(FORMS)), rng))
            advanced = True
            d += 1
    if not advanced:
        idx = rng.integers(0, shape[0], bshape)
        np_key.insert(0, idx)
        pk_key.insert(0, idx)
        if len([k for k in np_key if k is not None]) > len(shape):
            np_key.pop()
            pk_key.pop()
    if draw(st.booleans()) and len(np_key) < 4:
        at = draw(st.integers(0, len(np_key)))
        np_key.insert(at, Ellipsis)
        pk_key.insert(at, Ellipsis)
    return tuple(np_key), tuple(pk_key)


def _fits(shape: tuple[int, ...], np_key: tuple) -> bool:
    try:
        np.empty(shape)[np_key]
    except IndexError:
        return False
    return True


@settings(max_examples=20, deadline=None)
@given(shape=shapes, data=st.data(), seed=seeds)
def test_read_matches_numpy(shape, data, seed):
    rng = np.random.default_rng(seed)
    a, t = make(rng, pk.f32, shape, data.draw(st.sampled_from(["contiguous", "transposed",
                                                                "strided", "broadcast"])))
    np_key, pk_key = data.draw(keys(shape))
    if not _fits(shape, np_key):
        return
    got = t[pk_key]
    expected = a[np_key]
    assert got.shape == expected.shape
    assert got.dtype == pk.f32
    if is_advanced(pk_key):  # (a 0-d index array given as a list is a plain int)
        assert got.buffer is not t.buffer  # a copy, as numpy's
    np.testing.assert_array_equal(got.numpy(), expected)


@settings(max_examples=15, deadline=None)
@given(shape=shapes, data=st.data(), seed=seeds, scalar=st.booleans())
def test_assignment_matches_numpy(shape, data, seed, scalar):
    rng = np.random.default_rng(seed)
    a, t = make(rng, pk.i32, shape, data.draw(st.sampled_from(["contiguous", "transposed",
                                                                "strided"])))
    np_key, pk_key = data.draw(keys(shape))
    if not _fits(shape, np_key):
        return
    res_shape = a[np_key].shape
    if scalar:
        value: object = int(rng.integers(-99, 99))
    else:  # the indexed shape, or its trailing dimensions (broadcast)
        value = rng.integers(-99, 99, res_shape[data.draw(st.integers(0, len(res_shape))):],
                             dtype=np.int32)
    expected = a.copy()
    expected[np_key] = value
    t[pk_key] = value if scalar else pk.asarray(value)
    np.testing.assert_array_equal(t.numpy(), expected)


@pytest.mark.parametrize("dtype", ALL + [pk.bf16], ids=str)
def test_every_dtype(dtype):
    rng = np.random.default_rng(1)
    a, t = make(rng, dtype, (4, 3), "transposed" if dtype.is_int else "contiguous")
    got = t[[2, -1, 0]]
    assert got.dtype == dtype
    np.testing.assert_array_equal(np.asarray(got.numpy(), np.float64),
                                  np.asarray(a[[2, -1, 0]], np.float64))
    mask = a[:, 0] != a[:, 1]
    expected = a.copy()
    expected[mask] = a[0]
    t[pk.asarray(mask)] = pk.asarray(a[0])
    np.testing.assert_array_equal(np.asarray(t.numpy(), np.float64),
                                  np.asarray(expected, np.float64))


def test_zero_d_bool_and_empty():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = pk.asarray(a)
    for key in [True, False, (True, [0, 1]), ([1], True), pk.asarray(True), []]:
        np_key = key.numpy() if isinstance(key, pk.Tensor) else key
        assert t[key].shape == a[np_key].shape
        np.testing.assert_array_equal(t[key].numpy(), a[np_key])
    assert t[t > 10].shape == (0,)
    # a mask axis of size 0 selects nothing, whatever the indexed axis's size (numpy)
    for mask_shape in [(2, 0), (0, 3), (0, 0), (0,)]:
        mask = np.zeros(mask_shape, bool)
        assert t[pk.asarray(mask)].shape == a[mask].shape
    # an Ellipsis that stands for no dimension still separates the index arrays around it
    one = np.zeros((1, 1), np.float32)
    for key in [(None, -1, Ellipsis, np.array([False])), (0, Ellipsis, [0]), (None, 0, [0])]:
        assert pk.asarray(one)[key].shape == one[key].shape
    t[t > 10] = 1.0  # selects nothing: writes nothing
    t[False] = 5.0
    np.testing.assert_array_equal(t.numpy(), a)


def test_repeated_indices_last_wins():
    t = pk.zeros((5,), pk.f32)
    t[[1, 3, 1, 1, 3]] = pk.asarray([1.0, 2.0, 3.0, 4.0, 5.0])
    np.testing.assert_array_equal(t.numpy(), [0, 4, 0, 5, 0])
    m = pk.zeros((3, 4), pk.i32)
    m[[0, 2, 0], 1:3] = pk.asarray([[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(m.numpy(), [[0, 5, 6, 0], [0, 0, 0, 0], [0, 3, 4, 0]])


def test_repeated_indices_last_wins_by_sort(monkeypatch):
    monkeypatch.setattr(advanced_index, "CLAIM_TABLE_LIMIT", 0)  # the sort path, as for a
    t = pk.zeros((40,), pk.i32)                                   # huge indexed tensor
    idx = pk.asarray(np.array([7, 3, 7, 39, 3, 7], np.int64))
    t[idx] = pk.asarray(np.arange(1, 7, dtype=np.int32))
    expected = np.zeros(40, np.int32)
    expected[[7, 3, 39]] = [6, 5, 4]
    np.testing.assert_array_equal(t.numpy(), expected)


def test_value_sharing_memory_and_under_no_grad():
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    t = pk.asarray(a)
    with pk.no_grad():
        t[[3, 2, 1, 0]] = t  # the value is read before anything is written
    np.testing.assert_array_equal(t.numpy(), a[::-1])
    np.testing.assert_array_equal(t[pk.asarray([[0], [3]]), pk.asarray([2, 0])].numpy(),
                                  a[::-1][[[0], [3]], [2, 0]])


def _intact(t: pk.Tensor, a: np.ndarray, key: object, value: object, error: type,
            match: str) -> None:
    with pytest.raises(error, match=match):
        t[key] = value
    np.testing.assert_array_equal(t.numpy(), a)


def test_errors_name_what_is_wrong_and_change_nothing():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = pk.asarray(a)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        t[[0, 3]]
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 1 with size 4"):
        t[:, pk.asarray([0, -5])]  # a device tensor: checked after one read-back
    with pytest.raises(IndexError, match="integer \\(or boolean\\) type, got dtype float64"):
        t[[0.0, 1.0]]
    with pytest.raises(IndexError, match="integer \\(or boolean\\) type.*f32"):
        t[pk.asarray([0.0])]
    with pytest.raises(IndexError, match="boolean index did not match indexed tensor along "
                                         "axis 1; size of axis is 4 but size of corresponding "
                                         "boolean axis is 3"):
        t[:, [True, False, True]]
    with pytest.raises(IndexError, match="too many indices for tensor: tensor is "
                                         "2-dimensional, but 3 were indexed"):
        t[[0], 1, 2]
    with pytest.raises(IndexError, match="shape mismatch: indexing arrays could not be "
                                         "broadcast together with shapes \\(2,\\) \\(3,\\)"):
        t[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="only integers, slices"):
        t[[0], "a"]
    _intact(t, a, [0, 3], 1.0, IndexError, "out of bounds")
    _intact(t, a, pk.asarray([[1], [7]]), 1.0, IndexError, "index 7 is out of bounds")
    _intact(t, a, t > 4, pk.ones(3), ValueError, "could not broadcast")
    _intact(t, a, np.ones((3, 4, 1), bool), 1.0, IndexError, "too many indices")
    with pytest.raises(ValueError, match="broadcast view"):
        t[0].broadcast_to((2, 4))[[0, 1]] = 1.0
