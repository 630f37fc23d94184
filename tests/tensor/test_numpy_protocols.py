"""numpy's protocols on tensors: ufuncs (`__array_ufunc__`: calls, `reduce`, `accumulate`,
`np.matmul`, `np.cbrt`, `np.conjugate`), functions (`__array_function__`: the table of numpy
functions pykern runs, a TypeError naming every other one), dtype equality with numpy's dtypes,
pickle and copy, DLPack with and without copies. Every result is computed on the device and
compared with numpy's on the same values."""

import copy
import pickle

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as pk
from pykern.tensor.api.numpy_functions import FUNCTIONS

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
    # what pykern's ufunc does not take runs numpy's on host copies: numpy's result
    host_out = np.zeros((2, 3), np.float32)
    assert np.add(t, t, out=host_out) is host_out
    np.testing.assert_array_equal(host_out, X * 2)
    mask = np.array([True, False, True])
    expected = np.add(X, X, where=mask, out=np.ones((2, 3), np.float32))
    got = np.add(t, t, where=mask, out=np.ones((2, 3), np.float32))
    assert type(got) is np.ndarray
    np.testing.assert_array_equal(got, expected)


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
    # options, methods and ufuncs pykern lacks: numpy's, on host copies
    for got, expected in ((np.add.reduce(t, initial=5), np.add.reduce(X, initial=5)),
                          (np.add.reduce(t, axis=0, where=X > 0),
                           np.add.reduce(X, axis=0, where=X > 0)),
                          (np.add.outer(t, t), np.add.outer(X, X)),
                          (np.fmod(t, 2.0), np.fmod(X, 2.0))):
        assert type(got) in (np.ndarray, np.float32)
        np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(np.add.reduce(t, where=True).numpy(), np.add.reduce(X))
    out = pk.zeros((2, 3))
    assert np.fmod(t, 2.0, out=out) is out  # a tensor out= receives numpy's result
    np.testing.assert_array_equal(out.numpy(), np.fmod(X, 2.0))


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
    host = np.zeros((), np.float32)
    assert np.sum(t, out=host) is host and host == X.sum()  # numpy's, into host memory
    assert np.max(t, initial=3) == np.max(X, initial=3)
    np.testing.assert_array_equal(t.numpy(), X)  # untouched


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


COMMON = {
    "median": lambda m, a: m.median(a), "unique": lambda m, a: m.unique(a),
    "allclose": lambda m, a: m.allclose(a, a * 1.0),
    "array_equal": lambda m, a: m.array_equal(a, a),
    "linalg.norm": lambda m, a: m.linalg.norm(a), "einsum": lambda m, a: m.einsum("ij->j", a),
    "atleast_1d": lambda m, a: m.atleast_1d(a), "hstack": lambda m, a: m.hstack([a, a]),
    "percentile": lambda m, a: m.percentile(a, 30), "diff": lambda m, a: m.diff(a, axis=0),
    "histogram": lambda m, a: m.histogram(a, bins=3)[0], "outer": lambda m, a: m.outer(a, a),
    "isclose": lambda m, a: m.isclose(a, 0.5), "nan_to_num": lambda m, a: m.nan_to_num(a),
    "fmod": lambda m, a: m.fmod(a, 0.3), "fft.fft2": lambda m, a: m.fft.fft2(a),
}


@pytest.mark.parametrize("name", sorted(COMMON))
def test_numpy_functions_pykern_lacks_run_numpys_on_host_copies(name):
    """As for a torch CPU tensor or a JAX array: numpy's own result."""
    t = _tensor()
    got, expected = COMMON[name](np, t), COMMON[name](np, X)
    assert not isinstance(got, pk.Tensor)
    np.testing.assert_array_equal(got, expected)


def test_may_share_memory_and_shares_memory_of_tensors():
    t = pk.asarray(np.arange(12.0).reshape(3, 4))
    for a, b, may, shares in ((t, t[1:], True, True), (t[:1], t[2:], False, False),
                              (t[:, ::2], t[:, 1::2], True, False), (t, t.T, True, True),
                              (t, pk.asarray(X), False, False), (t, t.numpy(), False, False)):
        assert np.may_share_memory(a, b) is may and np.shares_memory(a, b) is shares


def test_transfer_guard_catches_implicit_copies_only(caplog):
    t = _tensor()
    with pk.transfer_guard("disallow"):
        assert isinstance(np.exp(t), pk.Tensor)  # runs on the device
        assert isinstance(np.sum(t, axis=0), pk.Tensor)
        for implicit in (lambda: np.median(t), lambda: np.asarray(t), lambda: np.fmod(t, 2.0)):
            with pytest.raises(pk.TransferGuardError, match="implicit copy .* shape \\(2, 3\\)"):
                implicit()
        np.testing.assert_array_equal(t.numpy(), X)  # explicit copies stay allowed
        assert t.tolist() == X.tolist() and float(t[0, 0]) == X[0, 0]
        with pk.transfer_guard("allow"):
            assert np.median(t) == np.median(X)
    with pk.transfer_guard("log"), caplog.at_level("WARNING", logger="pykern.transfer"):
        assert np.median(t) == np.median(X)
    assert "numpy.median: an implicit copy" in caplog.text
    assert np.median(t) == np.median(X)  # the block ended: allowed again
    with pytest.raises(ValueError, match="allow, log, disallow"):
        with pk.transfer_guard("never"):
            pass


def test_transfer_guard_from_the_environment():
    code = ("import numpy as np, pykern as pk\n"
            "t = pk.ones(3)\n"
            "try:\n    np.median(t)\nexcept pk.TransferGuardError:\n    print('refused')\n"
            "with pk.transfer_guard('allow'):\n    print(np.median(t))\n")
    env = dict(os.environ, PYKERN_TRANSFER_GUARD="disallow")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.stdout.split() == ["refused", "1.0"], run.stderr


def test_other_numpy_functions_convert_only_what_they_are_given():
    t = _tensor()
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
