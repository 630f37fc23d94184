"""The kernels added for pk.nn and pk.optim (the poolings and their backward, the fused step
of every optimizer rule) run in the interpreter (PYKERN_INTERPRET=1) with the device's
results, on small problems: the interpreter is the third way every kernel runs."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
import pykern.jit.kernel as jit_kernel
from pykern import config
from pykern.nn import functional as F
from pykern.optim import kernels as optim_kernels
from pykern.tensor.conv import pool_kernels

# the factories of the kernels under test: a kernel reads PYKERN_INTERPRET once, so the test
# makes new ones (and forgets them after, so that later tests get device kernels again)
FACTORIES = (pool_kernels.max_pool_forward, pool_kernels.max_pool_backward,
             pool_kernels.avg_pool_forward, pool_kernels.avg_pool_backward,
             pool_kernels.adaptive_avg_forward, pool_kernels.adaptive_avg_backward,
             optim_kernels.step_kernel)


def forget_kernels() -> None:
    config.config.cache_clear()
    for factory in FACTORIES:
        factory.cache_clear()


@pytest.fixture
def interpreted(monkeypatch):
    """A function that runs `fn()` in the interpreter and returns its numpy results and the
    names of the kernels the interpreter ran."""
    ran: list[str] = []
    real = jit_kernel.interpret_launch

    def spy(name, *args, **kwargs):
        ran.append(name)
        return real(name, *args, **kwargs)

    def run(fn):
        monkeypatch.setenv("PYKERN_INTERPRET", "1")
        monkeypatch.setattr(jit_kernel, "interpret_launch", spy)
        forget_kernels()
        try:
            return [r.numpy() for r in fn()], set(ran)
        finally:
            monkeypatch.delenv("PYKERN_INTERPRET")
            forget_kernels()

    return run


def pools(x: np.ndarray, g: np.ndarray) -> list[pk.Tensor]:
    results = []
    for fn in (lambda t: F.max_pool2d(t, 3, 2, 1, dilation=1, ceil_mode=True),
               lambda t: F.avg_pool2d(t, 3, 2, 1, ceil_mode=True, count_include_pad=False),
               lambda t: F.adaptive_avg_pool2d(t, (2, 3))):
        t = pk.asarray(x).requires_grad_()
        y = fn(t)
        y.backward(pk.asarray(g[..., :y.shape[2], :y.shape[3]].copy()))
        results += [y, t.grad]
    return results


def test_pooling_kernels_in_the_interpreter(interpreted):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 5, 6)).astype(np.float32)
    g = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
    on_device = [r.numpy() for r in pools(x, g)]
    results, ran = interpreted(lambda: pools(x, g))
    assert {"max_pool2d_forward", "max_pool2d_backward", "avg_pool2d_forward",
            "avg_pool2d_backward", "adaptive_avg_pool2d_forward",
            "adaptive_avg_pool2d_backward"} <= ran
    for got, expected in zip(results, on_device):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


def steps(make) -> list[pk.Tensor]:
    """Three steps of the optimizer `make` builds, over an f32 and an f16 parameter."""
    rng = np.random.default_rng(1)
    params = [pk.asarray(rng.standard_normal(5).astype(np.float32)),
              pk.asarray(rng.standard_normal(3).astype(np.float16))]
    opt = make(params)
    for _ in range(3):
        for p in params:
            p.grad = pk.asarray(rng.standard_normal(p.shape).astype(p.dtype.numpy))
        opt.step()
    return params


@pytest.mark.parametrize("make", [
    lambda ps: pk.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    lambda ps: pk.optim.Adam(ps, lr=0.1, amsgrad=True, weight_decay=0.1),
    lambda ps: pk.optim.RMSprop(ps, momentum=0.5, centered=True),
    lambda ps: pk.optim.Adagrad(ps, lr_decay=0.1),
    lambda ps: pk.optim.Adadelta(ps, maximize=True),
], ids=["SGD", "Adam", "RMSprop", "Adagrad", "Adadelta"])
def test_optimizer_step_kernel_in_the_interpreter(make, interpreted):
    on_device = [p.numpy() for p in steps(make)]
    results, ran = interpreted(lambda: steps(make))
    # the host device's variant (an invocation per chunk) or the per-element one
    assert ran & {"optimizer_step", "optimizer_step_host"}
    for got, expected in zip(results, on_device):
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                   rtol=1e-5, atol=1e-3 if got.dtype == np.float16 else 1e-6)
