"""pk.nn.utils.clip_grad_norm_: the joint norm of the gradients and their scaling, against
numpy in float64, for every norm order, dtype and number of gradients (several launches of
eight), with the launches counted and the errors named."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import pykern as pk

SHAPES = [(3, 4), (5,), (70, 3), (), (130,), (2, 0), (7, 9), (100,), (33,), (4, 4, 4), (1,)]


def with_grads(grads: list[np.ndarray]) -> list[pk.Tensor]:
    """Parameters (zeros) whose `.grad` holds `grads`."""
    params = []
    for g in grads:
        p = pk.zeros(g.shape, pk.asarray(g).dtype)
        p.grad = pk.asarray(g)
        params.append(p)
    return params


def numpy_norm(grads: list[np.ndarray], norm_type: float) -> float:
    flat = np.concatenate([g.astype(np.float64).ravel() for g in grads])
    if math.isinf(norm_type):
        return float(np.abs(flat).max())
    return float((np.abs(flat) ** norm_type).sum() ** (1 / norm_type))


def random_grads(seed: int, scale: float = 1.0, dtype=np.float32) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [(scale * rng.standard_normal(s)).astype(dtype) for s in SHAPES]


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, 0.5, float("inf")])
def test_norm_and_scaled_gradients_match_numpy(norm_type):
    grads = random_grads(1)
    params = with_grads(grads)
    params.append(pk.zeros((4,)))  # no gradient: skipped
    total = pk.nn.utils.clip_grad_norm_(params, max_norm=1.5, norm_type=norm_type)
    expected = numpy_norm(grads, norm_type)
    assert total.shape == () and total.dtype == pk.f32
    assert abs(float(total) - expected) <= 1e-5 * expected
    factor = 1.5 / (expected + 1e-6)
    assert factor < 1
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.numpy(), g * factor, rtol=3e-6, atol=1e-7)
    assert params[-1].grad is None


def test_gradients_under_the_bound_are_left_as_they_are():
    grads = random_grads(2, scale=0.01)
    params = with_grads(grads)
    before = [p.grad for p in params]
    total = pk.nn.utils.clip_grad_norm_(params, max_norm=10.0)
    assert abs(float(total) - numpy_norm(grads, 2.0)) <= 1e-5 * float(total)
    for p, b, g in zip(params, before, grads):
        assert p.grad is b  # the same tensors, scaled in place where scaled at all
        np.testing.assert_array_equal(p.grad.numpy(), g)


def test_few_launches_for_many_gradients(launches):
    grads = [np.full(s, 1.0, np.float32) for s in [(10,)] * 20]  # 20 gradients: 3 batches
    params = with_grads(grads)
    pk.sync()
    del launches[:]
    total = pk.nn.utils.clip_grad_norm_(params, max_norm=1.0)
    pk.sync()
    # 3 partial launches, 3 scaling launches, and the sum and root of the norm (8 now)
    assert len(launches) <= 3 + 3 + 3
    np.testing.assert_allclose(float(total), math.sqrt(200), rtol=1e-6)
    for p in params:
        np.testing.assert_allclose(p.grad.numpy(), np.full(10, 1 / math.sqrt(200)), rtol=1e-5)


def test_mixed_dtypes_give_an_f64_norm_over_all_of_them():
    grads = [np.full(5, 2.0, np.float64), np.full(5, 2.0, np.float16),
             np.full((3, 3), -1.0, np.float32), np.full(4, 0.5, ml_dtypes.bfloat16)]
    params = with_grads(grads)
    total = pk.nn.utils.clip_grad_norm_(params, max_norm=1.0)
    expected = math.sqrt(20 + 20 + 9 + 1)
    assert total.dtype == pk.f64 and abs(float(total) - expected) < 1e-6
    factor = 1 / (expected + 1e-6)
    np.testing.assert_allclose(params[0].grad.numpy(), grads[0] * factor, rtol=1e-12)
    np.testing.assert_allclose(params[1].grad.numpy(), grads[1] * factor, rtol=1e-3)
    np.testing.assert_allclose(params[2].grad.numpy(), grads[2] * factor, rtol=1e-6)
    np.testing.assert_allclose(params[3].grad.numpy().astype(np.float64),
                               0.5 * factor, rtol=2**-8)
    assert params[1].grad.dtype == pk.f16 and params[3].grad.dtype == pk.bf16


def test_one_tensor_a_generator_and_nothing_to_clip():
    p = pk.zeros((3,))
    p.grad = pk.asarray(np.array([3.0, 4.0, 0.0], np.float32))
    assert abs(float(pk.nn.utils.clip_grad_norm_(p, 1.0)) - 5.0) < 1e-6
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8, 0.0], rtol=1e-5)
    p.grad = pk.asarray(np.array([3.0, 4.0, 0.0], np.float32))
    assert abs(float(pk.nn.utils.clip_grad_norm_((q for q in [p]), 1.0)) - 5.0) < 1e-6
    empty = pk.nn.utils.clip_grad_norm_([pk.zeros((2,))], 1.0)
    assert empty.shape == () and float(empty) == 0.0


def test_a_gradient_given_twice_is_scaled_once_and_counted_twice():
    g = pk.asarray(np.array([3.0, 4.0], np.float32))
    a, b = pk.zeros((2,)), pk.zeros((2,))
    a.grad = b.grad = g
    total = pk.nn.utils.clip_grad_norm_([a, b], 1.0)
    assert abs(float(total) - math.sqrt(50)) < 1e-5
    np.testing.assert_allclose(g.numpy(), np.array([3.0, 4.0]) / math.sqrt(50), rtol=1e-5)


def test_non_contiguous_gradient_is_replaced_by_a_scaled_copy():
    p = pk.zeros((3, 2))
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    p.grad = pk.asarray(base).T  # a transposed view
    pk.nn.utils.clip_grad_norm_([p], 1.0)
    assert p.grad.is_contiguous
    np.testing.assert_allclose(p.grad.numpy(), base.T / (np.sqrt((base ** 2).sum()) + 1e-6),
                               rtol=1e-5)


def test_non_finite_norm_raises_only_when_asked():
    grads = [np.array([1.0, np.inf], np.float32), np.ones(3, np.float32)]
    params = with_grads(grads)
    with pytest.raises(RuntimeError, match="total norm of order 2.0 of the gradients is inf"):
        pk.nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    np.testing.assert_array_equal(params[1].grad.numpy(), np.ones(3))  # untouched
    assert math.isinf(float(pk.nn.utils.clip_grad_norm_(params, 1.0)))
    np.testing.assert_array_equal(params[1].grad.numpy(), np.zeros(3))  # 1 / inf, as torch


@pytest.mark.parametrize("call,error,match", [
    (lambda p: pk.nn.utils.clip_grad_norm_([p], 1.0, norm_type=0), ValueError, "norm_type"),
    (lambda p: pk.nn.utils.clip_grad_norm_([p], 1.0, norm_type=-2.0), ValueError,
     "positive or inf"),
    (lambda p: pk.nn.utils.clip_grad_norm_([p], "one"), TypeError, "max_norm must be a number"),
    (lambda p: pk.nn.utils.clip_grad_norm_([p, np.ones(3)], 1.0), TypeError,
     r"parameters\[1\] is a ndarray"),
])
def test_bad_arguments_are_named(call, error, match):
    with pytest.raises(error, match=match):
        call(pk.zeros((3,)))


def test_clipping_gradients_that_live_in_the_optimizers_flat_buffer():
    # after zero_grad(set_to_none=False) the gradients are views of one flat buffer; clipping
    # them in place and stepping gives SGD's update with the clipped gradients
    host = [np.full((4,), 1.0, np.float32), np.full((3, 3), 2.0, np.float32)]
    params = [pk.asarray(h) for h in host]
    opt = pk.optim.SGD(params, lr=0.5)
    for p in params:
        p.grad = pk.zeros(p.shape)
    opt.zero_grad(set_to_none=False)
    grads = [np.full((4,), 3.0, np.float32), np.full((3, 3), -4.0, np.float32)]
    for p, g in zip(params, grads):
        p.grad[...] = pk.asarray(g)
    total = pk.nn.utils.clip_grad_norm_(params, max_norm=2.0)
    expected = math.sqrt(4 * 9 + 9 * 16)
    assert abs(float(total) - expected) < 1e-4
    opt.step()
    for p, h, g in zip(params, host, grads):
        np.testing.assert_allclose(p.numpy(), h - 0.5 * g * (2.0 / (expected + 1e-6)),
                                   rtol=1e-6)
