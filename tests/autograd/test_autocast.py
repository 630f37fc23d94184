"""pk.autocast: matrix products of f32 tensors run in 16 bits with f32 results, gradients
reach the f32 tensors in f32, other ops and dtypes are untouched, and the mode is scoped."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import pykern as pk


def _operands(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((48, 32)).astype(np.float32),
            rng.standard_normal((32, 40)).astype(np.float32))


def _rounded(x: np.ndarray, dtype: object) -> np.ndarray:
    return pk.asarray(x).astype(dtype).astype(pk.f32).numpy().astype(np.float64)


@pytest.mark.parametrize("low", [pk.bf16, pk.f16])
def test_matmul_runs_on_rounded_operands_with_an_f32_result(low):
    a, b = _operands()
    with pk.autocast(dtype=low):
        c = pk.asarray(a) @ pk.asarray(b)
    assert c.dtype == pk.f32
    exact = _rounded(a, low) @ _rounded(b, low)  # the products of the 16-bit operands
    np.testing.assert_allclose(c.numpy(), exact, rtol=1e-5, atol=1e-4)
    assert not np.allclose(c.numpy(), a.astype(np.float64) @ b, rtol=1e-6, atol=0)


def test_gradients_reach_the_f32_tensors_in_f32():
    a, b = _operands(1)
    ta, tb = pk.asarray(a).requires_grad_(), pk.asarray(b).requires_grad_()
    with pk.autocast(dtype=pk.bf16):
        loss = ((ta @ tb) ** 2).sum()
    loss.backward()
    assert ta.grad.dtype == pk.f32 and tb.grad.dtype == pk.f32
    g = 2 * (a.astype(np.float64) @ b)
    for got, want in ((ta.grad, g @ b.T), (tb.grad, a.T @ g)):
        err = np.abs(got.numpy() - want).max() / np.abs(want).max()
        assert err < 2e-2  # bf16 operands: a few 2^-8 relative


def test_linear_layers_and_a_training_step_under_autocast():
    pk.random.seed(0)
    model = pk.nn.Sequential(pk.nn.Linear(16, 32), pk.nn.ReLU(), pk.nn.Linear(32, 4))
    opt = pk.optim.AdamW(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(2)
    x = pk.asarray(rng.standard_normal((64, 16)).astype(np.float32))
    y = pk.asarray(rng.integers(0, 4, 64).astype(np.int32))
    losses = []
    for _ in range(15):
        with pk.autocast(dtype=pk.bf16):
            loss = pk.nn.functional.cross_entropy(model(x), y)
        assert loss.dtype == pk.f32
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert all(p.dtype == pk.f32 for p in model.parameters())
    assert losses[-1] < 0.8 * losses[0]


def test_other_dtypes_and_ops_are_left_alone():
    a, b = _operands(3)
    with pk.autocast(dtype=pk.bf16):
        c64 = pk.asarray(a.astype(np.float64)) @ pk.asarray(b.astype(np.float64))
        s = pk.asarray(a) + 1.0
        explicit = pk.matmul(pk.asarray(a), pk.asarray(b), dtype=pk.f32)
    assert c64.dtype == pk.f64 and s.dtype == pk.f32
    np.testing.assert_allclose(c64.numpy(), a.astype(np.float64) @ b, rtol=1e-12)
    np.testing.assert_allclose(explicit.numpy(), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_the_mode_is_scoped_nested_and_per_thread():
    from pykern.tensor.core.autocast import autocast_dtype

    assert autocast_dtype() is None
    with pk.autocast("cuda", dtype=pk.f16):  # PyTorch's signature; the device type is ignored
        assert autocast_dtype() == pk.f16
        with pk.autocast(enabled=False):
            assert autocast_dtype() is None
        seen = []
        worker = threading.Thread(target=lambda: seen.append(autocast_dtype()))
        worker.start()
        worker.join()
        assert seen == [None]
        assert autocast_dtype() == pk.f16
    assert autocast_dtype() is None

    @pk.autocast(dtype=pk.bf16)
    def inside() -> object:
        return autocast_dtype()

    assert inside() == pk.bf16 and autocast_dtype() is None


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="pk.f16 or pk.bf16"):
        pk.autocast(dtype=pk.f32)
    with pytest.raises(TypeError, match="device_type"):
        pk.autocast(pk.bf16)


def test_convolutions_run_in_16_bits_and_their_gradients_come_back_in_f32():
    rng = np.random.default_rng(4)
    xs = rng.standard_normal((2, 4, 8, 8)).astype(np.float32)
    ws = rng.standard_normal((6, 4, 3, 3)).astype(np.float32)
    x, w = pk.asarray(xs).requires_grad_(), pk.asarray(ws).requires_grad_()
    bias = pk.asarray(rng.standard_normal(6).astype(np.float32)).requires_grad_()
    with pk.autocast(dtype=pk.bf16):
        y = pk.conv2d(x, w, bias, padding=1)
        up = pk.conv_transpose2d(y, w)
    assert y.dtype == pk.bf16 and up.dtype == pk.bf16
    exact = pk.conv2d(pk.asarray(_rounded(xs, pk.bf16)), pk.asarray(_rounded(ws, pk.bf16)),
                      pk.asarray(bias.numpy().astype(np.float64)), padding=1).numpy()
    np.testing.assert_allclose(y.astype(pk.f32).numpy(), exact, rtol=1e-2, atol=3e-2)
    y.astype(pk.f32).sum().backward()
    assert (x.grad.dtype, w.grad.dtype, bias.grad.dtype) == (pk.f32, pk.f32, pk.f32)
    np.testing.assert_allclose(bias.grad.numpy(), np.full(6, 2 * 8 * 8.0))  # N·H·W each


def test_attention_runs_in_16_bits_with_f32_gradients():
    rng = np.random.default_rng(6)
    q, k, v = (pk.asarray(rng.standard_normal((2, 3, 16, 8)).astype(np.float32))
               .requires_grad_() for _ in range(3))
    with pk.autocast(dtype=pk.bf16):
        out = pk.attention(q, k, v, causal=True)
    assert out.dtype == pk.bf16
    exact = pk.attention(*(pk.asarray(_rounded(t.numpy(), pk.bf16)) for t in (q, k, v)),
                         causal=True).numpy()
    np.testing.assert_allclose(out.astype(pk.f32).numpy(), exact, atol=3e-2, rtol=2e-2)
    out.astype(pk.f32).sum().backward()
    assert all(t.grad is not None and t.grad.dtype == pk.f32 for t in (q, k, v))
