"""The binary operators' fast path (pykern.tensor.core.fast_operators): a repeated operator
replays its op plan directly; its results, autograd records and errors are those of the first
call, which goes the long way."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import pykern as pk

RNG = np.random.default_rng(7)
OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
             operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.__name__)
def test_repeated_operator_matches_numpy(op):
    x = RNG.uniform(0.5, 2.0, (3, 5)).astype(np.float32)
    y = RNG.uniform(0.5, 2.0, (5,)).astype(np.float32)  # broadcast
    a, b = pk.asarray(x), pk.asarray(y)
    for _ in range(3):  # the first call makes the plan, the next ones replay it
        np.testing.assert_allclose(op(a, b).numpy(), op(x, y), rtol=1e-6)
        np.testing.assert_allclose(op(a, a).numpy(), op(x, x), rtol=1e-6)  # one buffer


def test_repeated_operator_on_new_values_and_dtypes():
    for dtype in (np.float32, np.int32):
        for _ in range(3):
            x = RNG.integers(1, 9, 8).astype(dtype)
            y = RNG.integers(1, 9, 8).astype(dtype)
            got = pk.asarray(x) * pk.asarray(y) + pk.asarray(x)
            np.testing.assert_array_equal(got.numpy(), x * y + x)
            assert got.dtype.itemsize == 4 and got.dtype.is_float == (dtype is np.float32)


def test_repeated_operator_promotes_mixed_dtypes():
    x, y = np.arange(6, dtype=np.int32), np.linspace(0, 1, 6, dtype=np.float32)
    for _ in range(3):
        got = pk.asarray(x) + pk.asarray(y)
        assert got.dtype == pk.float32
        np.testing.assert_allclose(got.numpy(), x + y, rtol=1e-6)


def test_repeated_operator_records_autograd():
    x = RNG.uniform(-1, 1, 16).astype(np.float32)
    y = RNG.uniform(-1, 1, 16).astype(np.float32)
    for _ in range(3):
        w = pk.asarray(x, requires_grad=True)
        v = pk.asarray(y)
        (w * v + w).sum().backward()
        np.testing.assert_allclose(w.grad.numpy(), y + 1, rtol=1e-6)
        with pk.no_grad():
            assert (w * v).grad_fn is None


@pytest.mark.parametrize("op", [o for o in OPERATORS if o is not operator.pow],
                         ids=lambda op: op.__name__)
def test_repeated_operator_with_a_python_scalar_matches_numpy(op):
    x = RNG.uniform(0.5, 2.0, (3, 5)).astype(np.float32)
    a = pk.asarray(x)
    # Vulkan allows f32 division 2.5 ulp (NVIDIA's is not correctly rounded); the rest is exact
    rtol = 2.5 * 2.0 ** -23 if op is operator.truediv else 0.0
    for s in (0.5, -0.0, 3, 0.5, 2.25, -0.0, 3):  # each scalar repeated: plans replay
        with np.errstate(divide="ignore"):  # x / -0.0: -inf, as pykern gives
            want = op(x, np.float32(s))
        np.testing.assert_allclose(op(a, s).numpy(), want, rtol=rtol, atol=0)
        np.testing.assert_allclose(op(s, a).numpy(), op(np.float32(s), x), rtol=rtol, atol=0)
    f16 = pk.asarray(x.astype(np.float16))
    for _ in range(3):
        got = f16 * 1.5
        assert got.dtype == pk.float16
        np.testing.assert_array_equal(got.numpy(), x.astype(np.float16) * np.float16(1.5))


def test_repeated_operator_with_a_python_scalar_records_autograd():
    x = RNG.uniform(0.5, 2.0, 8).astype(np.float32)
    for _ in range(3):
        w = pk.asarray(x, requires_grad=True)
        (w * 0.5 + 3.0 / w - 1).sum().backward()
        np.testing.assert_allclose(w.grad.numpy(), 0.5 - 3.0 / x ** 2, rtol=1e-6)
        with pk.no_grad():
            assert (w * 0.5).grad_fn is None
        assert (w * 0.5).grad_fn is not None


def test_repeated_operator_shape_error_is_the_same():
    a, b = pk.ones(4), pk.ones(3)
    for _ in range(2):
        with pytest.raises(ValueError):
            a + b


@pytest.mark.skipif(len({d.kind == "host" for d in pk.devices()}) < 2,
                    reason="needs the host device and a Vulkan device")
def test_repeated_operator_on_two_devices_names_both():
    home = pk.get_device()
    other = pk.set_device("vulkan" if home.info.kind == "host" else "host")
    try:
        pk.set_device(home.info.index)
        a = pk.ones(4)
        pk.set_device(other.info.index)
        b = pk.ones(4)
        for _ in range(2):
            a + a  # runs on a's device, whose plan exists from the first pass
            with pytest.raises(pk.LaunchError, match="two devices"):
                a + b
    finally:
        pk.set_device(home.info.index)


@pytest.mark.parametrize("name", ["__iadd__", "__isub__", "__imul__", "__itruediv__",
                                  "__ipow__"])
def test_repeated_inplace_operator_matches_numpy(name):
    for _ in range(3):  # the first call makes the plan, the next ones replay it
        x = RNG.uniform(0.5, 2.0, (3, 5)).astype(np.float32)
        y = RNG.uniform(0.5, 2.0, (5,)).astype(np.float32)  # broadcast
        a = pk.asarray(x)
        version = a._version
        alias = a
        a = getattr(a, name)(pk.asarray(y))
        assert a is alias and a._version == version + 1
        np.testing.assert_allclose(a.numpy(), getattr(x.copy(), name)(y), rtol=1e-5)
        b = pk.asarray(x)
        getattr(b, name)(b)  # one buffer, read and written
        np.testing.assert_allclose(b.numpy(), getattr(x.copy(), name)(x), rtol=1e-5)


def test_repeated_inplace_operator_refuses_and_records_as_before():
    for _ in range(3):
        a = pk.ones((2, 3))
        with pytest.raises(ValueError):
            a += pk.ones(4)  # shapes that do not broadcast into a
        w = pk.ones(3, requires_grad=True)
        h = w * 2.0
        h += pk.ones(3)  # recorded: the fast path is not taken
        h.sum().backward()
        np.testing.assert_allclose(w.grad.numpy(), np.full(3, 2.0))
        y = w * 1.0
        z = y * y  # saves y
        y += pk.ones(3)
        with pytest.raises(RuntimeError, match="modified by an in-place operation"):
            z.sum().backward()
