"""Ops run on their operands' device (API.md §5): with tensors made on one device and the
current device changed to another, ops, methods, numpy's protocols and kernel launches follow
the tensors; operands on two devices are a pk.LaunchError naming both devices and the user's
operands; `t.to(device)` and `Module.to(device)` move tensors. Needs two devices: the host
device and a Vulkan one (lavapipe in CI)."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk

pytestmark = pytest.mark.skipif(
    len({d.kind == "host" for d in pk.devices()}) < 2,
    reason="needs the host device and a Vulkan device")

A = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.fixture
def two_devices():
    """(the default device, where the tensors are made; another device, made current by the
    tests); the default is current again afterwards."""
    home = pk.get_device()
    other = pk.set_device("vulkan" if home.info.kind == "host" else "host")
    pk.set_device(home.info.index)
    yield home, other
    pk.set_device(home.info.index)


def test_ops_run_on_their_operands_device(two_devices):
    home, other = two_devices
    a, b = pk.asarray(A), pk.ones((3, 4))
    pk.set_device(other.info.index)
    results = {"a + b": a + b, "pk.exp": pk.exp(a), "pk.sum": pk.sum(a, axis=1),
               "matmul": a @ b.T, "xp.diff": pk.array_api.diff(a), "method": a.mean(0),
               "np.exp": np.exp(a), "np.concatenate": np.concatenate([a, b]),
               "linalg": pk.linalg.matrix_norm(a), "fft": pk.fft.rfft(a),
               "scalar": 2.0 * a, "where": pk.where(a > 3, a, 0.0), "getitem": a[1:, ::2]}
    for name, r in results.items():
        assert r.device is home, name
    np.testing.assert_array_equal((a + b).numpy(), A + 1)
    np.testing.assert_allclose(pk.sum(a, axis=1).numpy(), A.sum(1))
    assert pk.ones(2).device is other  # creation: the current device
    assert pk.zeros_like(a).device is home  # ..._like: the tensor's


def test_operands_on_two_devices_name_both_devices_and_the_users_operands(two_devices):
    home, other = two_devices
    a = pk.asarray(A)
    pk.set_device(other.info.index)
    b = pk.ones((3, 4))
    for call, names in ((lambda: a + b, ("a (the left operand)", "b (the right operand)")),
                        (lambda: pk.add(a, b), ("x1", "x2")),
                        (lambda: pk.concat([a, b]), ("tensors[0]", "tensors[1]")),
                        (lambda: a.dot(b.T), ("the tensor", "b"))):
        with pytest.raises(pk.LaunchError) as info:
            call()
        message = str(info.value)
        assert home.info.name in message and other.info.name in message, message
        assert all(n in message for n in names), message
        assert "parameter" not in message and "kernel" not in message, message
    np.testing.assert_array_equal((a + 1).numpy(), A + 1)  # intact, and the next op works


def test_to_copies_to_a_device_and_returns_self_when_there(two_devices):
    home, other = two_devices
    a = pk.asarray(A)
    assert a.to(home) is a and a.to(home.info.index) is a
    for spec in (other, other.info.index, pk.devices()[other.info.index],
                 "host" if other.info.kind == "host" else "vulkan"):
        moved = a.to(spec)
        assert moved.device is other and moved is not a
        np.testing.assert_array_equal(moved.numpy(), A)
    w = pk.asarray(A).requires_grad_()
    assert w.to(other).requires_grad and w.to(other).is_leaf
    assert pk.array_api.asarray(a, device=other).device is other
    assert pk.array_api.zeros(2, device=other).device is other


def test_module_to_moves_parameters_grads_and_buffers(two_devices):
    home, other = two_devices
    layer = pk.nn.Linear(4, 2)
    weight = layer.weight
    (layer(pk.asarray(A)) ** 2).sum().backward()
    layer.__dict__.setdefault("_buffers", {})["running"] = pk.zeros(2)  # as register_buffer
    assert layer.to(other.info.index) is layer
    assert layer.weight is weight and weight.device is other and weight.grad.device is other
    assert layer._buffers["running"].device is other
    out = layer(pk.asarray(A).to(other))
    assert out.device is other
    layer.to(pk.f64)
    assert weight.dtype == pk.f64 and weight.device is other


def test_kernel_launch_runs_on_its_tensors_device(two_devices):
    home, other = two_devices

    @pk.kernel
    def double(x: pk.f32[:], y: pk.f32[:]):
        i = pk.global_id(0)
        y[i] = x[i] * 2.0

    x = pk.asarray(A.ravel())
    y = pk.empty_like(x)
    pk.set_device(other.info.index)
    double[x.size](x, y)
    np.testing.assert_array_equal(y.numpy(), A.ravel() * 2)
    with pytest.raises(pk.LaunchError, match="parameter '[xy]'.*t.to\\(device\\)"):
        double[x.size](x, pk.empty(12))


def test_dim_keyword_names_axis(two_devices):
    a = pk.asarray(A)
    for call in (lambda: a.sum(dim=0), lambda: pk.sum(a, dim=0), lambda: pk.softmax(a, dim=1),
                 lambda: pk.array_api.cumulative_sum(a, dim=1), lambda: pk.max(a, dim=0)):
        with pytest.raises(TypeError, match="axis="):
            call()
