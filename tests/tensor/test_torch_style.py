"""PyTorch's Tensor methods and functions that numpy lacks (pykern.tensor.api.torch_style,
torch_functions, size): each compared with torch (CPU) on the same values; `t.size` is
numpy's int and PyTorch's method at once."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

import pykern as pk

torch = pytest.importorskip("torch")

rng = np.random.default_rng(11)


def pair(shape, dtype=np.float32):
    a = rng.standard_normal(shape).astype(dtype)
    return pk.asarray(a), torch.tensor(a)


def same(got, expected, rtol=1e-6, atol=1e-6):
    expected = expected.detach().numpy() if hasattr(expected, "detach") else expected
    assert got.shape == expected.shape
    np.testing.assert_allclose(got.numpy(), expected, rtol=rtol, atol=atol)


# ---------------------------------------------------------------- t.size


def test_size_is_numpy_int_and_torch_method():
    t, tt = pair((2, 3, 4))
    assert t.size == 24 and isinstance(t.size, int) and t.size + 1 == 25
    assert list(range(t.size))[-1] == 23 and np.zeros(t.size).shape == (24,)
    assert f"{t.size}/{t.size:03d}" == "24/024" and repr(t.size) == "24"
    assert json.dumps({"n": t.size}) == '{"n": 24}'
    loaded = pickle.loads(pickle.dumps(t.size))
    assert loaded == 24 and type(loaded) is int
    assert t.size() == tuple(tt.size()) == (2, 3, 4)
    B, T, C = t.size()
    assert (B, T, C) == (2, 3, 4)
    assert t.size(-1) == tt.size(-1) == 4 and t.size(dim=1) == 3
    with pytest.raises(IndexError, match="out of range"):
        t.size(3)
    zero_d = pk.asarray(1.5)
    assert zero_d.size == 1 and zero_d.size() == () and zero_d.dim() == 0
    assert pk.zeros((0, 5)).size == 0 and pk.zeros((0, 5)).size(1) == 5


@pk.kernel
def _add_one(x: pk.f32[:]):
    x[pk.global_id(0)] += 1.0


def test_size_as_a_launch_grid_and_kernel_argument():
    x = pk.zeros(37)
    for _ in range(2):
        _add_one[x.size](x)
    np.testing.assert_array_equal(x.numpy(), np.full(37, 2.0, np.float32))
    assert [type(g) for g in _add_one._launchers] == [int]  # kept for the next launch


def test_dim_and_t():
    t, tt = pair((3, 5))
    assert t.dim() == tt.dim() == 2
    same(t.t(), tt.t())
    same(pk.arange(4).t(), torch.arange(4).t())
    with pytest.raises(ValueError, match="swapaxes"):
        pk.zeros((2, 3, 4)).t()


def test_transpose_of_two_axes_names_swapaxes():
    with pytest.raises(ValueError, match=r"swapaxes\(1, 2\)"):
        pk.zeros((2, 3, 4)).transpose(1, 2)


# ---------------------------------------------------------------- views


@pytest.mark.parametrize("shape, new", [((2, 3, 4), (6, 4)), ((2, 3, 4), (-1,)),
                                        ((2, 12), (2, 3, 2, 2)), ((4, 6), (4, 2, -1))])
def test_view_as_torch(shape, new):
    t, tt = pair(shape)
    v = t.view(*new)
    same(v, tt.view(*new))
    same(t.view(new), tt.view(new))
    v[...] = 0.0  # a view: writes reach the base
    assert not t.numpy().any()


def test_view_of_strided_tensors_as_torch_allows_and_refuses():
    t, tt = pair((4, 6))
    same(t[:, :3].view(4, 3), tt[:, :3].view(4, 3))  # rows stay whole: a view
    same(t.swapaxes(0, 1).view(6, 4), tt.transpose(0, 1).view(6, 4))
    with pytest.raises(RuntimeError):
        tt.transpose(0, 1).view(-1)
    with pytest.raises(RuntimeError, match="reshape"):
        t.swapaxes(0, 1).view(-1)
    same(t.swapaxes(0, 1).reshape(-1), tt.transpose(0, 1).reshape(-1))


def test_view_with_a_dtype_is_numpys():
    a = rng.standard_normal((3, 4)).astype(np.float32)
    t = pk.asarray(a)
    np.testing.assert_array_equal(t.view(pk.i32).numpy(), a.view(np.int32))
    np.testing.assert_array_equal(t[:, ::2].view(np.uint32).numpy(), a[:, ::2].view(np.uint32))
    assert t.view().shape == (3, 4) and t.view().buffer is t.buffer
    with pytest.raises(ValueError, match="item size"):
        t.view(pk.f64)
    with pytest.raises(RuntimeError, match="detach"):
        pk.asarray(a).requires_grad_().view(pk.i32)


def test_view_as_reshape_as_expand_as_type_as():
    t, tt = pair((2, 6))
    o, to = pair((3, 4))
    same(t.view_as(o), tt.view_as(to))
    same(t.T.reshape_as(o), tt.T.reshape_as(to))
    c, tc = pair((3, 1))
    same(c.expand_as(o), tc.expand_as(to))
    i = pk.asarray([1, 2])
    assert t.type_as(i).dtype == pk.i32 and t.type_as(t) is t
    assert i.type_as(t).dtype == pk.f32


@pytest.mark.parametrize("how, dim", [(2, 0), (3, 1), (4, -1), ([1, 4, 2], -1), ([2, 0, 3], 0),
                                      (10, 2)])
def test_split_as_torch(how, dim):
    t, tt = pair((5, 7, 7))
    got, expected = t.split(how, dim=dim), tt.split(how, dim=dim)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        same(g, e)
        assert g.buffer is t.buffer  # views


def test_split_refuses_sections_that_do_not_add_up():
    with pytest.raises(ValueError, match="add up"):
        pk.zeros((4, 5)).split([2, 2], dim=1)
    with pytest.raises(ValueError, match="positive"):
        pk.zeros(4).split(0)


@pytest.mark.parametrize("chunks, dim", [(2, 0), (3, 1), (4, -1), (7, 1), (10, 0)])
def test_chunk_and_unbind_as_torch(chunks, dim):
    t, tt = pair((5, 7))
    got, expected = t.chunk(chunks, dim), tt.chunk(chunks, dim)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        same(g, e)
    for g, e in zip(t.unbind(dim), tt.unbind(dim)):
        same(g, e)


# ---------------------------------------------------------------- values


def test_masked_fill_as_torch_with_a_broadcast_causal_mask():
    t, tt = pair((2, 3, 4, 4))
    causal = np.tril(np.ones((4, 4), np.float32)).reshape(1, 1, 4, 4)
    pm, tm = pk.asarray(causal), torch.tensor(causal)
    got = t.masked_fill(pm == 0, float("-inf"))
    same(got, tt.masked_fill(tm == 0, float("-inf")))
    same(pk.nn.functional.softmax(got, dim=-1),
         torch.nn.functional.softmax(tt.masked_fill(tm == 0, float("-inf")), dim=-1))
    small, tsmall = pair((4,))
    same(small.masked_fill(pm[0, 0] == 0, 2.5), tsmall.masked_fill(tm[0, 0] == 0, 2.5))


def test_masked_fill_keeps_the_dtype_and_takes_0d_values():
    i = pk.asarray([[1, 2], [3, 4]], dtype=pk.i64)
    ti = torch.tensor([[1, 2], [3, 4]])
    m = np.array([[True, False], [False, True]])
    got = i.masked_fill(pk.asarray(m), 7.9)
    assert got.dtype == pk.i64
    np.testing.assert_array_equal(got.numpy(), ti.masked_fill(torch.tensor(m), 7.9).numpy())
    t, tt = pair((2, 2))
    same(t.masked_fill(pk.asarray(m), pk.asarray(-1.0)),
         tt.masked_fill(torch.tensor(m), torch.tensor(-1.0)))
    with pytest.raises(TypeError, match="bool"):
        t.masked_fill(pk.asarray(m.astype(np.int32)), 0.0)
    with pytest.raises(ValueError, match="0-d"):
        t.masked_fill(pk.asarray(m), pk.zeros(2))


def test_masked_fill_in_place_and_masked_select_as_torch():
    t, tt = pair((3, 4))
    m = rng.uniform(size=(1, 4)) > 0.5
    assert t.masked_fill_(pk.asarray(m), 0.0) is t
    tt.masked_fill_(torch.tensor(m), 0.0)
    same(t, tt)
    with pytest.raises(ValueError, match="broadcast"):
        pk.zeros((1, 4)).masked_fill_(pk.asarray(np.ones((3, 4), bool)), 1.0)
    m2 = rng.uniform(size=(3, 4)) > 0.3
    same(t.masked_select(pk.asarray(m2)), tt.masked_select(torch.tensor(m2)))


def test_softmax_log_softmax_and_topk_methods_as_torch():
    t, tt = pair((3, 5))
    same(t.softmax(-1), tt.softmax(-1))
    same(t.softmax(dim=0), tt.softmax(dim=0))
    same(t.log_softmax(1), tt.log_softmax(1))
    same(t.double().softmax(0, dtype=pk.f32), tt.double().softmax(0, dtype=torch.float32))
    got, expected = t.topk(2, dim=0), tt.topk(2, dim=0)
    same(got.values, expected.values)
    np.testing.assert_array_equal(got.indices.numpy(), expected.indices.numpy())
    assert got.indices.dtype == pk.i64
    small = pk.topk(t, 2, dim=1, largest=False)
    same(small[0], torch.topk(tt, 2, dim=1, largest=False)[0])
    with pytest.raises(TypeError, match="not both"):
        pk.topk(t, 2, axis=0, dim=1)


def test_clamp_and_clamp_in_place_as_torch():
    t, tt = pair((4, 4))
    same(t.clamp(-0.5, 0.5), tt.clamp(-0.5, 0.5))
    same(t.clamp(min=0.1), tt.clamp(min=0.1))
    same(t.clamp(max=-0.1), tt.clamp(max=-0.1))
    assert t.clamp_(-0.2, 0.3) is t
    same(t, tt.clamp_(-0.2, 0.3))
    with pytest.raises(ValueError, match="min, max"):
        t.clamp()


def test_conversions_as_torch():
    a = np.array([-2.7, -0.5, 0.0, 1.5, 3.9], np.float32)
    t, tt = pk.asarray(a), torch.tensor(a)
    for name, dtype in [("long", pk.i64), ("int", pk.i32), ("short", pk.i16),
                        ("char", pk.i8), ("half", pk.f16), ("float", pk.f32),
                        ("double", pk.f64), ("bool", pk.bool_), ("bfloat16", pk.bf16)]:
        got = getattr(t, name)()
        assert got.dtype == dtype, name
        expected = getattr(tt, name)()
        if name == "bfloat16":
            expected = expected.float()
            got = got.float()
        np.testing.assert_array_equal(got.numpy(), expected.numpy(), err_msg=name)
    assert t.float() is t
    u = pk.asarray([0, 200, 255], dtype=pk.i32)
    np.testing.assert_array_equal(u.byte().numpy(), torch.tensor([0, 200, 255]).byte().numpy())


def test_float_conversion_passes_the_gradient_back():
    x = pk.asarray(rng.standard_normal(4)).requires_grad_()
    (x.float() * pk.asarray([1.0, 2.0, 3.0, 4.0])).sum().backward()
    assert x.grad.dtype == pk.f64
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 2.0, 3.0, 4.0])


def test_comparison_and_math_methods_as_torch():
    t, tt = pair((3, 4))
    u, tu = pair((4,))
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        np.testing.assert_array_equal(getattr(t, name)(u).numpy(),
                                      getattr(tt, name)(tu).numpy(), err_msg=name)
    np.testing.assert_array_equal(t.eq(0.0).numpy(), tt.eq(0.0).numpy())
    for name in ("abs", "neg", "exp", "sin", "cos", "tanh", "sigmoid", "relu", "square"):
        same(getattr(t, name)(), getattr(tt, name)(), rtol=2e-6)
    p, tp = pk.abs(t) + 0.1, tt.abs() + 0.1
    for name in ("log", "sqrt", "rsqrt"):
        same(getattr(p, name)(), getattr(tp, name)(), rtol=4e-6)
    same(t.pow(2), tt.pow(2))
    same(p.pow(u), tp.pow(tu), rtol=4e-6)


# ---------------------------------------------------------------- new tensors


def test_new_tensors_take_this_ones_dtype_and_device():
    t = pk.zeros((2, 2), dtype=pk.f64)
    tt = torch.zeros((2, 2), dtype=torch.float64)
    for made, expected in [(t.new_zeros(3, 2), tt.new_zeros(3, 2)),
                           (t.new_ones((2, 5)), tt.new_ones((2, 5))),
                           (t.new_full((2,), 3.5), tt.new_full((2,), 3.5)),
                           (t.new_tensor([[1, 2], [3, 4]]), tt.new_tensor([[1, 2], [3, 4]]))]:
        assert made.dtype == pk.f64 and made.device is t.device
        same(made, expected)
    assert t.new_empty(4, 1).shape == (4, 1) and t.new_empty((4,)).dtype == pk.f64
    assert t.new_zeros(2, dtype=pk.i32).dtype == pk.i32
    assert t.new_ones(2, requires_grad=True).requires_grad
    src = pk.ones(3).requires_grad_()
    copied = t.new_tensor(src)
    assert not copied.requires_grad and copied.buffer is not src.buffer


# ---------------------------------------------------------------- in place


def test_in_place_methods_as_torch_return_the_tensor():
    t, tt = pair((3, 4))
    u, tu = pair((4,))
    for name, args, kwargs in [("add_", (u,), {}), ("add_", (u,), {"alpha": 2.5}),
                               ("sub_", (u,), {"alpha": -1}), ("mul_", (u,), {}),
                               ("div_", (2.0,), {}), ("fill_", (1.5,), {}),
                               ("copy_", (u,), {}), ("zero_", (), {})]:
        targs = tuple(tu if a is u else a for a in args)
        assert getattr(t, name)(*args, **kwargs) is t
        getattr(tt, name)(*targs, **kwargs)
        same(t, tt, rtol=2e-6)


def test_in_place_methods_on_an_intermediate_are_differentiated_as_in_torch():
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal(4)
    m = rng.uniform(size=(3, 4)) > 0.5
    x, z = pk.asarray(a).requires_grad_(), pk.asarray(b).requires_grad_()
    tx, tz = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    for lib, (p, q) in ((pk, (x, z)), (torch, (tx, tz))):
        y = p * 2.0
        y.add_(q, alpha=3.0).mul_(q).masked_fill_(lib.asarray(m) if lib is pk
                                                  else torch.tensor(m), 0.0)
        y.clamp_(-1.0, 2.0)
        (y * y).sum().backward()
    same(x.grad, tx.grad, rtol=1e-12, atol=1e-12)
    same(z.grad, tz.grad, rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError):
        x.zero_()  # a leaf that requires grad, as in torch


def test_cpu_is_the_host_device():
    t = pk.arange(5)
    host = t.cpu()
    assert host.device.info.kind == "host"
    np.testing.assert_array_equal(host.numpy(), np.arange(5))
    assert host.cpu() is host


# ---------------------------------------------------------------- functions


def test_cat_as_torch():
    a, ta = pair((2, 3))
    b, tb = pair((2, 1))
    same(pk.cat((a, b), dim=1), torch.cat((ta, tb), dim=1))
    same(pk.cat([a, a]), torch.cat([ta, ta]))
    same(pk.cat([a, b], axis=-1), torch.cat([ta, tb], axis=-1))
    with pytest.raises(TypeError, match="not both"):
        pk.cat([a, b], dim=1, axis=1)


@pytest.mark.parametrize("start, end", [(0, -1), (1, -1), (1, 2), (0, 1), (-2, -1), (2, 2)])
def test_flatten_as_torch(start, end):
    t, tt = pair((2, 3, 4, 5))
    same(pk.flatten(t, start, end), torch.flatten(tt, start, end))
    same(t.flatten(start, end), tt.flatten(start, end))
    same(t.swapaxes(1, 2).flatten(start, end), tt.transpose(1, 2).flatten(start, end))


def test_flatten_of_0d_and_numpys_flatten():
    assert pk.flatten(pk.asarray(3.0)).shape == (1,)
    t = pk.arange(6).reshape(2, 3)
    flat = t.flatten()  # numpy's: a copy
    assert flat.shape == (6,) and flat.buffer is not t.buffer
    assert t.flatten(1).shape == (2, 3)
    with pytest.raises(ValueError, match="after"):
        pk.flatten(t, 1, 0)


def test_tril_triu_take_pytorchs_diagonal():
    t, tt = pair((4, 5))
    same(pk.tril(t, 1), torch.tril(tt, 1))
    same(pk.tril(t, diagonal=-1), torch.tril(tt, diagonal=-1))
    same(pk.triu(t, k=2), torch.triu(tt, 2))
    same(pk.tril(pk.ones(4, 4)), torch.tril(torch.ones(4, 4)))
    with pytest.raises(TypeError, match="not both"):
        pk.tril(t, 1, diagonal=1)


def test_dtype_long_names():
    assert pk.long is pk.i64 and pk.int64 is pk.i64 and pk.float32 is pk.f32
    assert pk.half is pk.f16 and pk.double is pk.f64 and pk.short is pk.i16
    assert pk.bool is pk.bool_ and pk.bfloat16 is pk.bf16 and pk.complex64 is pk.c64
    assert pk.arange(0, 4, dtype=pk.long).dtype == pk.i64


def test_to_takes_a_dtype_a_device_or_a_tensor_as_torch():
    t, tt = pair((2, 3))
    for args, targs in [((pk.f64,), (torch.float64,)), ((pk.long,), (torch.long,)),
                        (("host", pk.f16), ("cpu", torch.float16))]:
        got, expected = t.to(*args), tt.to(*targs)
        assert got.dtype.name == {"float64": "f64", "int64": "i64",
                                  "float16": "f16"}[str(expected.dtype)[6:]]
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert t.to(pk.f32) is t and t.to(dtype=pk.f32, copy=True) is not t
    assert t.to(pk.zeros(1, dtype=pk.i32)).dtype == pk.i32
    assert t.to("host").device.info.kind == "host"
    x = pk.ones(3, dtype=pk.f64).requires_grad_()
    (x.to(pk.f32) * 2.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])
