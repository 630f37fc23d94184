"""SGD and AdamW against the numpy references of PyTorch's rules (optim_reference.py): many
steps over parameters of several shapes (a scalar, sizes that do not fill a chunk, several
chunks, a non-contiguous parameter) and dtypes, with one parameter skipped (grad None) on
some steps.

Bounds: the references compute in the kernels' dtype with the same order of operations, so
f32/f64 results differ only by the device's contraction and its division and sqrt (a few
ULP per step, carried over the steps): relative 1e-5 (f32). f16/bf16 parameters are the
rounding of f32 master weights, which may round to the neighbouring value when the master
lies near a rounding boundary: one unit of the parameter's precision.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pykern as pk
from pykern.optim.grads import set_grad

import optim_reference as ref

SHAPES = [(3, 5), (), (64,), (130,), (2, 3, 4)]
STEPS = 8
# (atol, rtol) of a parameter after STEPS steps
BOUNDS = {pk.f32: (1e-6, 1e-5), pk.f64: (1e-12, 1e-11), pk.f16: (2e-3, 2**-10),
          pk.bf16: (1.6e-2, 2**-7)}


def make_params(dtype: pk.DType, seed: int) -> tuple[list[np.ndarray], list[pk.Tensor]]:
    """Host values and device parameters; the last one is a transposed (non-contiguous)
    view."""
    rng = np.random.default_rng(seed)
    host = [rng.standard_normal(s).astype(ref.NUMPY[dtype]) for s in SHAPES]
    params = [pk.asarray(h) for h in host]
    base = rng.standard_normal((4, 6)).astype(ref.NUMPY[dtype])
    params.append(pk.asarray(base).T)
    host.append(base.T.copy())
    return host, params


def gradient_steps(host: list[np.ndarray], dtype: pk.DType, seed: int) -> list[list]:
    """Per parameter, STEPS gradients; parameter 1 has None on steps 2 and 5."""
    rng = np.random.default_rng(seed + 100)
    steps = [[rng.standard_normal(h.shape).astype(ref.NUMPY[dtype]) for _ in range(STEPS)]
             for h in host]
    steps[1][2] = steps[1][5] = None
    return steps


def run(opt: pk.optim.Optimizer, params: list[pk.Tensor], grads: list[list]) -> None:
    for step in range(STEPS):
        opt.zero_grad()
        for p, g in zip(params, grads):
            if g[step] is not None:
                set_grad(p, pk.asarray(g[step]))
        opt.step()


def check(params: list[pk.Tensor], expected: list[np.ndarray], dtype: pk.DType) -> None:
    atol, rtol = BOUNDS[dtype]
    for p, e in zip(params, expected):
        got = p.numpy()
        assert got.shape == e.shape and got.dtype == e.dtype
        np.testing.assert_allclose(got.astype(np.float64), e.astype(np.float64), atol=atol,
                                   rtol=rtol)


@pytest.mark.parametrize("momentum,weight_decay", [(0.0, 0.0), (0.9, 0.0), (0.0, 0.05),
                                                   (0.8, 0.1)])
def test_sgd_matches_torch_rule_f32(momentum, weight_decay):
    host, params = make_params(pk.f32, 1)
    grads = gradient_steps(host, pk.f32, 1)
    opt = pk.optim.SGD(params, lr=0.05, momentum=momentum, weight_decay=weight_decay)
    run(opt, params, grads)
    check(params, [ref.sgd(h, g, pk.f32, 0.05, momentum, weight_decay)
                   for h, g in zip(host, grads)], pk.f32)


@pytest.mark.parametrize("dtype", [pk.f16, pk.bf16, pk.f64])
def test_sgd_other_dtypes(dtype):
    host, params = make_params(dtype, 2)
    grads = gradient_steps(host, dtype, 2)
    opt = pk.optim.SGD(params, lr=0.01, momentum=0.9, weight_decay=0.01)
    run(opt, params, grads)
    check(params, [ref.sgd(h, g, dtype, 0.01, 0.9, 0.01) for h, g in zip(host, grads)], dtype)


@pytest.mark.parametrize("betas,weight_decay", [((0.9, 0.999), 0.01), ((0.3, 0.9), 0.0),
                                                ((0.0, 0.5), 0.1)])
def test_adamw_matches_torch_rule_f32(betas, weight_decay):
    # beta1 < 0.5 takes lerp's other form
    host, params = make_params(pk.f32, 3)
    grads = gradient_steps(host, pk.f32, 3)
    opt = pk.optim.AdamW(params, lr=0.01, betas=betas, weight_decay=weight_decay)
    run(opt, params, grads)
    check(params, [ref.adamw(h, g, pk.f32, 0.01, betas, 1e-8, weight_decay)
                   for h, g in zip(host, grads)], pk.f32)


@pytest.mark.parametrize("dtype", [pk.f16, pk.bf16, pk.f64])
def test_adamw_other_dtypes(dtype):
    host, params = make_params(dtype, 4)
    grads = gradient_steps(host, dtype, 4)
    opt = pk.optim.AdamW(params, lr=0.003)
    run(opt, params, grads)
    check(params, [ref.adamw(h, g, dtype, 0.003) for h, g in zip(host, grads)], dtype)


def test_f16_master_weights_keep_small_updates():
    # an update below half an f16 unit is lost without master weights; with them it adds up
    p = pk.asarray(np.ones(10, np.float16))
    opt = pk.optim.SGD([p], lr=1e-4)
    for _ in range(20):
        set_grad(p, pk.asarray(np.ones(10, np.float16)))
        opt.step()
    np.testing.assert_allclose(p.numpy().astype(np.float64), 1 - 20e-4, atol=2**-11)


def test_parameter_written_from_outside_wins_over_its_master_weight():
    p = pk.asarray(np.ones(4, ml_dtypes.bfloat16))
    opt = pk.optim.SGD([p], lr=0.5)
    set_grad(p, pk.asarray(np.ones(4, ml_dtypes.bfloat16)))
    opt.step()
    p[...] = 3.0  # writes the flat storage itself: the master no longer matches
    opt.step()
    np.testing.assert_array_equal(p.numpy().astype(np.float32), np.full(4, 2.5, np.float32))


def test_mixed_groups_and_dtypes_in_one_optimizer():
    rng = np.random.default_rng(5)
    a32 = rng.standard_normal((5, 3)).astype(np.float32)
    b16 = rng.standard_normal(70).astype(np.float16)
    c32 = rng.standard_normal(9).astype(np.float32)
    a, b, c = pk.asarray(a32), pk.asarray(b16), pk.asarray(c32)
    opt = pk.optim.AdamW([{"params": [a, b]}, {"params": [c], "lr": 0.1, "weight_decay": 0}],
                         lr=0.01)
    grads = {id(t): [rng.standard_normal(t.shape).astype(h.dtype) for _ in range(5)]
             for t, h in ((a, a32), (b, b16), (c, c32))}
    for step in range(5):
        for t in (a, b, c):
            set_grad(t, pk.asarray(grads[id(t)][step]))
        opt.step()
    check([a, c], [ref.adamw(a32, grads[id(a)], pk.f32, 0.01),
                   ref.adamw(c32, grads[id(c)], pk.f32, 0.1, weight_decay=0.0)], pk.f32)
    check([b], [ref.adamw(b16, grads[id(b)], pk.f16, 0.01)], pk.f16)


def test_learning_rate_changed_between_steps():
    x = np.arange(6, dtype=np.float32)
    p = pk.asarray(x)
    opt = pk.optim.SGD([p], lr=1.0)
    set_grad(p, pk.asarray(np.ones(6, np.float32)))
    opt.step()
    opt.param_groups[0]["lr"] = 0.25
    opt.step()
    np.testing.assert_array_equal(p.numpy(), x - 1.25)
