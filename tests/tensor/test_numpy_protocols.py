"""numpy's protocols on tensors: ufuncs (`__array_ufunc__`: calls, `reduce`, `accumulate`,
`np.matmul`, `np.cbrt`, `np.conjugate`), functions (`__array_function__`: the table of numpy
functions pykern runs, a TypeError naming every other one), dtype equality with numpy's dtypes,
pickle and copy, DLPack with and without copies. Every result is computed on the device and
compared with numpy's on the same values."""

import copy
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from pykern.tensor.numpy_functions import FUNCTIONS

X = np.array([[1.5, -8.0, 27.0], [0.25, -0.0, 64.0]], np.float32)


def _tensor() -> pk.Tensor:
    return pk.asarray(X)


# ---------------------------------------------------------------- ufuncs


def test_cbrt_matches_numpy_within_two_ulp_and_keeps_special_values():
    x = np.array([27.0, -8.0, 1e-30, -3.4e38, 0.0, -0.0, np.inf, -np.inf, np.nan, 2.0, 1e6],
                 np.float32)
    out = np.cbrt(pk.asarray(x))
    assert isinstance(out, pk.Tensor) and out.dtype == pk.f32
    got, want = out.numpy(), np.cbrt(x.astype(np.float64)).astype(np.float32)
    finite = np.isfinite(want)
    ulp = np.abs(got[finite].view(np.int32).astype(np.int64) - want[finite].view(np.int32))
    assert ulp.max() <= 2, ulp
    np.testing.assert_array_equal(got[~finite], want[~finite])
    assert np.signbit(got[5]) and not np.signbit(got[4])


@pytest.mark.parametrize("call", [
    lambda m, t: m.add(t, 1.0), lambda m, t: m.exp(t), lambda m, t: m.maximum(t, t.T.T),
    lambda m, t: m.power(m.absolute(t), 0.5), lambda m, t: m.arctan2(t, 2.0),
], ids=["add", "exp", "maximum", "power_absolute", "arctan2"])
def test_ufunc_calls_return_tensors_equal_to_numpys(call):
    out = call(np, _tensor())
    assert isinstance(out, pk.Tensor)
    # the Vulkan precision bounds: exp within (3 + 2|x|) ulp, atan2 within 4096 ulp
    np.testing.assert_allclose(out.numpy(), call(np, X), rtol=4e-4, atol=1e-6)


def test_ufunc_out_and_dtype_keywords():
    t = _tensor()
    out = pk.zeros((2, 3))
    assert np.multiply(t, 2.0, out=out) is out
    np.testing.assert_array_equal(out.numpy(), X * 2)
    wide = np.add(t, t, dtype=np.float64)
    assert wide.dtype == pk.f64
    np.testing.assert_array_equal(wide.numpy(), X.astype(np.float64) * 2)
    with pytest.raises(TypeError, match="numpy.add: out must be a pk.Tensor"):
        np.add(t, t, out=np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match=r"numpy.add with where=.* call .numpy\(\) first"):
        np.add(t, t, where=np.array([True, False, True]))


def test_ufunc_reduce_and_accumulate():
    t = _tensor()
    for ufunc, axis in ((np.add, 0), (np.multiply, 1), (np.maximum, None), (np.minimum, 0)):
        out = ufunc.reduce(t, axis=axis)
        assert isinstance(out, pk.Tensor)
        np.testing.assert_allclose(out.numpy(), ufunc.reduce(X, axis=axis), rtol=1e-6)
    np.testing.assert_array_equal(np.add.reduce(t).numpy(), np.add.reduce(X))  # axis 0
    b = pk.asarray(X > 0)
    np.testing.assert_array_equal(np.logical_and.reduce(b, axis=1).numpy(), (X > 0).all(1))
    np.testing.assert_allclose(np.add.accumulate(t, axis=1).numpy(), np.add.accumulate(X, 1))
    with pytest.raises(TypeError, match="numpy.add.reduce with initial=5"):
        np.add.reduce(t, initial=5)
    # where= named the refusal too (it collided with a parameter: "got multiple values")
    with pytest.raises(TypeError, match="numpy.add.reduce with where="):
        np.add.reduce(t, axis=0, where=X > 0)
    np.testing.assert_array_equal(np.add.reduce(t, where=True).numpy(), np.add.reduce(X))
    with pytest.raises(TypeError, match="numpy.add.outer is not supported"):
        np.add.outer(t, t)
    with pytest.raises(TypeError, match="numpy.fmod is not supported"):
        np.fmod(t, 2.0)


def test_matmul_ufunc():
    t = _tensor()
    out = np.matmul(t, t.T)
    assert isinstance(out, pk.Tensor)
    np.testing.assert_allclose(out.numpy(), X @ X.T, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_conjugate_ufunc_of_complex_and_real_tensors(dtype):
    z = np.array([[1 + 2j, -3j, complex(0.0, -0.0)], [np.inf - 1j, complex(np.nan, 2.0), 4]],
                 dtype)
    t = pk.asarray(z)
    assert np.conj is np.conjugate  # one ufunc, both names
    for ufunc in (np.conjugate, np.conj):
        out = ufunc(t)
        assert isinstance(out, pk.Tensor) and out.dtype == t.dtype and out.buffer is not t.buffer
        want = pk.conj(t).numpy()
        np.testing.assert_array_equal(out.numpy(), want)
        np.testing.assert_array_equal(out.numpy(), np.conjugate(z))
        assert np.array_equal(np.signbit(out.numpy().imag), np.signbit(np.conjugate(z).imag))
    target = pk.zeros((2, 3), pk.c128)
    view = target.T
    assert np.conjugate(t.T, out=view) is view  # into a transposed view (c64 widened)
    np.testing.assert_array_equal(target.numpy(), np.conjugate(z))
    np.testing.assert_array_equal(t.numpy(), z)  # the input is untouched
    real = np.conj(_tensor())  # a real tensor: its values, as a new tensor
    assert isinstance(real, pk.Tensor) and real.dtype == pk.f32
    np.testing.assert_array_equal(real.numpy(), np.conj(X))
    assert np.signbit(real.numpy()[1, 1])


# ---------------------------------------------------------------- functions


def test_every_table_entry_is_a_numpy_function():
    for name in FUNCTIONS:
        assert callable(getattr(np, name, None)), name


@pytest.mark.parametrize("name", ["sum", "max", "min", "mean", "prod", "std", "var", "argmax",
                                  "argmin", "cumsum", "any", "all"])
def test_numpy_reductions_with_numpys_signatures(name):
    t, fn = _tensor(), getattr(np, name)
    for args, kwargs in (((), {}), ((0,), {} if name == "cumsum" else {"keepdims": True})):
        out = fn(t, *args, **kwargs)
        assert isinstance(out, pk.Tensor), (name, args, kwargs)
        np.testing.assert_allclose(out.numpy(), fn(X, *args, **kwargs), rtol=2e-6, atol=1e-6)


def test_numpy_reductions_out_dtype_and_refusals():
    t = _tensor()
    np.testing.assert_array_equal(np.sum(t, dtype=np.float64).numpy(), X.sum(dtype=np.float64))
    assert np.sum(t, dtype=np.float64).dtype == pk.f64
    np.testing.assert_allclose(np.std(t, ddof=1).numpy(), np.std(X, ddof=1), rtol=1e-6)
    out = pk.zeros((3,))
    assert np.max(t, axis=0, out=out) is out
    np.testing.assert_array_equal(out.numpy(), X.max(0))
    with pytest.raises(TypeError, match="numpy.sum: out must be a pk.Tensor .* not ndarray"):
        np.sum(t, out=np.zeros(()))
    with pytest.raises(TypeError, match="numpy.max with initial=3"):
        np.max(t, initial=3)
    np.testing.assert_array_equal(t.numpy(), X)  # untouched by the refusals


def test_numpy_functions_on_tensors():
    t, u = _tensor(), pk.asarray(X * 2)
    cases = [
        (lambda m, a, b: m.concatenate([a, b], axis=1), "concatenate"),
        (lambda m, a, b: m.stack([a, b]), "stack"),
        (lambda m, a, b: m.where(a > 0, a, b), "where"),
        (lambda m, a, b: m.reshape(a, (3, 2)), "reshape"),
        (lambda m, a, b: m.transpose(a), "transpose"),
        (lambda m, a, b: m.clip(a, 0.0, 10.0), "clip"),
        (lambda m, a, b: m.sort(a, axis=1), "sort"),
        (lambda m, a, b: m.dot(a, b.T), "dot"),
        (lambda m, a, b: m.expand_dims(a, 0), "expand_dims"),
        (lambda m, a, b: m.flip(a, 1), "flip"),
    ]
    for call, name in cases:
        out = call(np, t, u)
        assert isinstance(out, pk.Tensor), name
        np.testing.assert_allclose(out.numpy(), call(np, X, X * 2), rtol=1e-6, err_msg=name)
    assert np.shape(t) == (2, 3) and np.ndim(t) == 2 and np.size(t) == 6


def test_numpy_ravel_orders():
    a = np.arange(24).reshape(2, 3, 4)
    views = {"row-major": (pk.asarray(a), a),
             "transposed": (pk.asarray(a).transpose(2, 0, 1), a.transpose(2, 0, 1)),
             "column-major": (pk.asarray(np.ascontiguousarray(a.T)).T, np.asfortranarray(a)),
             "strided": (pk.asarray(a).permute(1, 2, 0)[:, ::-2], a.transpose(1, 2, 0)[:, ::-2]),
             "broadcast": (pk.asarray(a[0, :, :1]).broadcast_to((3, 4)),
                           np.broadcast_to(a[0, :, :1], (3, 4)))}
    for name, (t, e) in views.items():
        for order in "CFAK":
            np.testing.assert_array_equal(np.ravel(t, order=order).numpy(),
                                          np.ravel(e, order=order), err_msg=f"{name} {order}")


def test_other_numpy_functions_name_themselves_and_convert_nothing():
    t = _tensor()
    for call, name in ((lambda: np.median(t), "median"), (lambda: np.unique(t), "unique"),
                       (lambda: np.allclose(t, t), "allclose"),
                       (lambda: np.linalg.norm(t), "norm")):
        with pytest.raises(TypeError, match=rf"numpy.{name} is not supported for pk.Tensor: "
                                            r"call .numpy\(\) first"):
            call()
    # conversions stay conversions
    assert type(np.asarray(t)) is np.ndarray and np.array(t).dtype == np.float32
    np.testing.assert_array_equal(np.median(t.numpy()), np.median(X))


# ---------------------------------------------------------------- dtypes


@pytest.mark.parametrize(("d", "np_type", "name"), [
    (pk.f32, np.float32, "float32"), (pk.i64, np.int64, "int64"), (pk.bool_, np.bool_, "bool"),
    (pk.u8, np.uint8, "uint8"), (pk.f16, np.float16, "float16")])
def test_dtype_equals_numpys_dtypes_types_and_names(d, np_type, name):
    assert d == np_type and np_type == d and d == np.dtype(name) and np.dtype(name) == d
    assert d == name and name == d and not d != np_type
    assert d != np.complex64 and d != "junk" and d != "i32x"
    assert np.dtype(d) == np.dtype(name)
    assert np.zeros(2, dtype=d).dtype == np.dtype(name)
    assert pk.asarray(np.zeros(2, name)).dtype == np_type
    assert hash(d) == hash(pk.lang.dtypes.BY_NAME[d.name])  # one hash per pykern dtype


def test_dtype_equality_keeps_pykern_and_python_meanings_apart():
    assert pk.f32 == "f32" and hash(pk.f32) == hash("f32")
    assert pk.f32 != pk.f64 and pk.f32 != np.float64 and pk.f64 != float  # noqa: E721
    assert {pk.f32: 1}[pk.lang.dtypes.as_dtype("float32")] == 1


def test_bf16_as_a_numpy_dtype_through_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    assert pk.bf16 == ml_dtypes.bfloat16 and pk.bf16 == np.dtype(ml_dtypes.bfloat16)
    assert np.dtype(pk.bf16) == np.dtype(ml_dtypes.bfloat16) and pk.bf16 != np.float16


# ---------------------------------------------------------------- pickle, copy


@settings(max_examples=6, deadline=None)
@given(st.sampled_from([pk.f32, pk.i8, pk.u64, pk.bool_, pk.bf16]),
       st.lists(st.integers(0, 3), min_size=0, max_size=3), st.booleans())
def test_pickle_round_trip(dtype, shape, requires_grad):
    values = (np.arange(int(np.prod(shape))).reshape(shape) - 2).astype(dtype.numpy)
    t = pk.asarray(values)
    if requires_grad and dtype.is_float:
        t.requires_grad_()
    back = pickle.loads(pickle.dumps(t))
    assert back.dtype == dtype and back.shape == t.shape
    assert back.requires_grad == t.requires_grad
    np.testing.assert_array_equal(back.detach().numpy(), values)


def test_pickle_of_a_strided_view():
    t = _tensor()[:, ::2].T
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(t)).numpy(), X[:, ::2].T)


@pytest.mark.parametrize("copier", [copy.copy, copy.deepcopy], ids=["copy", "deepcopy"])
def test_copies_are_new_device_buffers(copier):
    t = _tensor().requires_grad_()
    c = copier(t)
    assert c.buffer is not t.buffer and c.requires_grad and c.is_leaf
    with pk.no_grad():
        t[0, 0] = 100.0
    np.testing.assert_array_equal(c.detach().numpy(), X)
    nested = copy.deepcopy({"w": t, "same": t})
    assert nested["w"] is nested["same"]  # the memo: one copy per tensor


# ---------------------------------------------------------------- DLPack


def test_dlpack_copy_true_copies_and_none_or_false_share_on_the_host():
    t = _tensor()
    copied = np.from_dlpack(t, copy=True)
    copied[0, 0] = 5.0
    assert t[0, 0].item() == X[0, 0]
    if t.device.info.kind != "host":
        with pytest.raises(BufferError, match=r"__dlpack__\(copy=False\): this tensor lives"):
            t.__dlpack__(copy=False)
        np.testing.assert_array_equal(np.from_dlpack(t), X)
        return
    for copy_kw in (False, None):
        shared = np.from_dlpack(t, copy=copy_kw)
        shared[1, 2] = -1.0
        assert t[1, 2].item() == -1.0
        t[1, 2] = 64.0
        assert shared[1, 2] == 64.0
    view = np.from_dlpack(t[:, 1:], copy=False)
    np.testing.assert_array_equal(view, X[:, 1:])


def test_from_dlpack_copy_false():
    t = _tensor()
    assert pk.from_dlpack(t, copy=False) is t and pk.from_dlpack(t) is t
    c = pk.from_dlpack(t, copy=True)
    assert c.buffer is not t.buffer
    a = np.arange(4, dtype=np.float32)
    if pk.get_device().info.kind != "host":
        with pytest.raises(BufferError, match="cannot be shared with the current device"):
            pk.from_dlpack(a, copy=False)
        return
    shared = pk.from_dlpack(a, copy=False)
    shared += 1.0
    np.testing.assert_array_equal(a, [1, 2, 3, 4])
    with pytest.raises(BufferError, match="cannot be shared"):
        pk.from_dlpack(np.arange(8, dtype=np.float32)[::2], copy=False)
    copied = pk.from_dlpack(a)
    copied += 1.0
    np.testing.assert_array_equal(a, [1, 2, 3, 4])
