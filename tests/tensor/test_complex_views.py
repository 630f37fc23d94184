"""Complex tensors: storage, `pk.view_as_real` / `pk.view_as_complex` (views sharing the
buffer), creation, host round-trips (numpy, DLPack, item, repr) and casts, against numpy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensor_support import small_shapes, views

import pykern as pk

SETTINGS = settings(max_examples=15, deadline=None)
COMPLEX = [pk.c64, pk.c128]


@SETTINGS
@given(st.data(), small_shapes, st.sampled_from(COMPLEX))
def test_view_as_real_of_any_layout_shares_the_buffer(data, shape, dtype):
    a, t = data.draw(views(shape, dtype))
    r = pk.view_as_real(t)
    assert r.dtype == dtype.real_dtype and r.shape == a.shape + (2,)
    assert r.buffer is t.buffer
    expected = np.stack([a.real, a.imag], axis=-1)
    np.testing.assert_array_equal(r.numpy(), expected)
    np.testing.assert_array_equal(pk.view_as_complex(r).numpy(), a)


def test_writes_through_either_view_reach_the_other():
    t = pk.asarray(np.array([1 + 2j, 3 - 4j], np.complex64))
    r = pk.view_as_real(t)
    r[1, 1] = 9.0
    assert t.numpy().tolist() == [1 + 2j, 3 + 9j]
    base = pk.zeros((3, 2), pk.f64)
    z = pk.view_as_complex(base)
    z[1] = 5 - 6j
    assert base.numpy().tolist() == [[0, 0], [5, -6], [0, 0]]
    # a transposed real view of whole pairs is a complex view too
    m = pk.asarray(np.arange(12, dtype=np.float32).reshape(3, 2, 2)).permute(1, 0, 2)
    expected = np.arange(12, dtype=np.float32).reshape(3, 2, 2).transpose(1, 0, 2)
    np.testing.assert_array_equal(pk.view_as_complex(m).numpy(),
                                  expected[..., 0] + 1j * expected[..., 1])


def test_view_errors_name_what_is_wrong():
    with pytest.raises(TypeError, match="view_as_real: t must be a complex tensor.*f32"):
        pk.view_as_real(pk.zeros(2))
    with pytest.raises(TypeError, match="view_as_complex: t must be an f32 or f64.*i32"):
        pk.view_as_complex(pk.zeros((2, 2), pk.i32))
    with pytest.raises(ValueError, match="last dimension must have size 2"):
        pk.view_as_complex(pk.zeros((2, 3)))
    with pytest.raises(ValueError, match="stride 1"):
        pk.view_as_complex(pk.zeros((2, 2)).T)
    with pytest.raises(ValueError, match="even"):
        pk.view_as_complex(pk.zeros((6,))[1:5].reshape(2, 2))
    with pytest.raises(TypeError, match="pk.Tensor"):
        pk.view_as_real(np.zeros(2, np.complex64))


def test_creation_with_complex_dtypes():
    assert pk.asarray(1j).dtype == pk.c64 and pk.asarray(1j).item() == 1j
    assert pk.asarray([1, 2.5, 3j]).numpy().tolist() == [1, 2.5, 3j]
    assert pk.asarray(np.complex128(1 - 1j)).dtype == pk.c128
    assert pk.asarray([1.0, 2.0], dtype=pk.c128).numpy().tolist() == [1, 2]
    for dtype in COMPLEX:
        np.testing.assert_array_equal(pk.zeros((2, 3), dtype).numpy(), np.zeros((2, 3)))
        np.testing.assert_array_equal(pk.ones(3, dtype).numpy(), np.ones(3, dtype.numpy))
        np.testing.assert_array_equal(pk.eye(3, k=1, dtype=dtype).numpy(),
                                      np.eye(3, k=1, dtype=dtype.numpy))
        assert pk.empty((2,), dtype).dtype == dtype
        f = pk.full((2, 2), 1.5 - 2j, dtype)
        assert f.dtype == dtype and f.numpy().tolist() == [[1.5 - 2j] * 2] * 2
        like = pk.zeros_like(f)
        assert like.dtype == dtype and not like.numpy().any()
        np.testing.assert_array_equal(pk.ones_like(f).numpy(), np.ones((2, 2)))
        np.testing.assert_array_equal(pk.full_like(f, 2j).numpy(), np.full((2, 2), 2j))
        np.testing.assert_allclose(pk.linspace(0, 1, 5, dtype).numpy(),
                                   np.linspace(0, 1, 5), rtol=1e-6)
    assert pk.full(2, 1j).dtype == pk.c64
    assert pk.zeros(2, "complex64").dtype == pk.c64


def test_host_round_trips():
    a = np.array([[1 + 2j, -3.5j], [np.inf - 1j, np.nan]], np.complex128)
    t = pk.asarray(a)
    np.testing.assert_array_equal(np.asarray(t), a)
    np.testing.assert_array_equal(np.from_dlpack(t), a)
    np.testing.assert_array_equal(pk.array_api.from_dlpack(a).numpy(), a)
    assert complex(t[0, 0]) == 1 + 2j and t[0, 1].item() == -3.5j
    assert t.tolist()[0] == [1 + 2j, -3.5j]
    assert repr(pk.asarray([1 + 2j])) == "pk.Tensor([1.+2.j], dtype=pk.c64)"
    with pytest.raises(TypeError, match="float"):
        float(pk.asarray(1j))


def test_casts_to_and_from_complex():
    a = np.array([1.5 - 2j, 0j, -3 + 0.5j], np.complex64)
    t = pk.asarray(a)
    np.testing.assert_array_equal(t.astype(pk.c128).numpy(), a.astype(np.complex128))
    np.testing.assert_array_equal(pk.asarray([1, -2]).astype(pk.c64).numpy(), [1, -2])
    np.testing.assert_array_equal(t.astype(pk.bool_).numpy(), a.astype(bool))
    with pytest.warns(np.exceptions.ComplexWarning, match="imaginary part"):
        r = t.astype(pk.f32)
    np.testing.assert_array_equal(r.numpy(), a.real)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(t[::-1].astype(pk.i32).numpy(), [-3, 0, 1])
    u = pk.zeros(3, pk.c64)
    u[1:] = pk.asarray([1.0, 2.0])
    u[0] = 7j
    assert u.numpy().tolist() == [7j, 1, 2]
    b = pk.zeros(2, pk.bool_)
    b[...] = pk.asarray([0j, 1j])
    assert b.numpy().tolist() == [False, True]


def test_namespace_dtypes_and_inspection():
    xp = pk.array_api
    assert xp.complex64 is pk.c64 and xp.complex128 is pk.c128
    assert xp.isdtype(pk.c64, "complex floating") and xp.isdtype(pk.c128, "numeric")
    assert not xp.isdtype(pk.c64, "real floating") and not xp.isdtype(pk.f32, "complex floating")
    f = xp.finfo(pk.c64)
    assert f.dtype == pk.f32 and f.bits == 32 and f.eps == np.finfo(np.float32).eps
    assert xp.finfo(xp.complex128).dtype == pk.f64
    info = xp.__array_namespace_info__()
    assert info.dtypes(kind="complex floating") == {"complex64": pk.c64, "complex128": pk.c128}
    assert info.default_dtypes()["complex floating"] == pk.c64
    assert xp.asarray(complex()).dtype == pk.c64
    assert xp.result_type(pk.c64, pk.f64) == pk.c128 and xp.can_cast(pk.c64, pk.c128)
    assert not xp.can_cast(pk.c128, pk.c64)
    with pytest.raises(ValueError, match="finfo takes a float or complex dtype"):
        xp.finfo(pk.i32)


def test_complex_values_into_real_tensors():
    with pytest.raises(TypeError, match="complex number cannot be used in a f32 tensor"):
        pk.full(2, 1j, pk.f32)
    t = pk.zeros(2)
    with pytest.warns(np.exceptions.ComplexWarning):
        t[0] = 3 + 4j
    assert t.numpy().tolist() == [3, 0]


def test_views_pass_gradients_between_a_complex_tensor_and_its_parts():
    """z.grad is the pair (dL/dx, dL/dy): the gradient of view_as_real(z), and back."""
    z = pk.zeros(2, pk.c64, requires_grad=True)
    (pk.view_as_real(z) * pk.asarray([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), [1 + 2j, 3 + 4j])
    p = pk.asarray(np.array([[1.0, 2.0], [3.0, -1.0]])).requires_grad_()
    pk.abs(pk.view_as_complex(p)).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), [[1, 2] / np.sqrt(5), [3, -1] / np.sqrt(10)])


def test_save_and_load_complex_tensors(tmp_path):
    z = pk.asarray(np.array([[1 + 2j, 3 - 4j], [5j, -6]], np.complex128))
    pk.save({"z": z.T, "w": np.array([1j, 2], np.complex64)}, tmp_path / "c.safetensors")
    back = pk.load(tmp_path / "c.safetensors")
    assert back["z"].dtype == pk.c128 and back["w"].dtype == pk.c64
    np.testing.assert_array_equal(back["z"].numpy(), z.numpy().T)
    np.testing.assert_array_equal(back["w"].numpy(), [1j, 2])
