"""numpy references of PyTorch's update rules (torch.optim.SGD with dampening 0 and no
Nesterov, torch.optim.AdamW without amsgrad), in the order of operations torch uses, with
every hyperparameter rounded to float32 as a kernel receives it.

Parameters of a low-precision dtype keep float32 master weights; the parameter is the
master's rounding after each step. Steps whose gradient is None are skipped.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

import pykern as pk

NUMPY = {pk.f32: np.float32, pk.f64: np.float64, pk.f16: np.float16,
         pk.bf16: ml_dtypes.bfloat16}


def compute(dtype: pk.DType) -> type:
    return np.float64 if dtype == pk.f64 else np.float32


def sgd(p0: np.ndarray, grads: list, dtype: pk.DType, lr: float, momentum: float = 0.0,
        weight_decay: float = 0.0) -> np.ndarray:
    """The parameter after SGD steps with `grads` (arrays of `dtype`, or None)."""
    c = compute(dtype)
    p = p0.astype(c)
    lr, momentum, weight_decay = c(lr), c(momentum), c(weight_decay)
    buf = None
    for g in grads:
        if g is None:
            continue
        d = g.astype(c)
        if weight_decay != 0:
            d = d + weight_decay * p
        if momentum != 0:
            buf = d.copy() if buf is None else momentum * buf + d
            d = buf
        p = p - lr * d
    return p.astype(NUMPY[dtype])


def adamw(p0: np.ndarray, grads: list, dtype: pk.DType, lr: float = 1e-3,
          betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
          weight_decay: float = 0.01) -> np.ndarray:
    """The parameter after AdamW steps with `grads` (arrays of `dtype`, or None)."""
    c = compute(dtype)
    beta1, beta2 = betas
    p = p0.astype(c)
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    w1, w2, b2 = c(1 - beta1), c(1 - beta2), c(beta2)
    decay, eps32 = c(1 - lr * weight_decay), c(eps)
    t = 0
    for g in grads:
        if g is None:
            continue
        t += 1
        g = g.astype(c)
        p = p * decay
        m = m + w1 * (g - m) if w1 < 0.5 else g - (g - m) * (c(1) - w1)
        v = v * b2 + w2 * g * g
        denom = np.sqrt(v) / c(math.sqrt(1 - beta2 ** t)) + eps32
        p = p - c(lr / (1 - beta1 ** t)) * (m / denom)
    return p.astype(NUMPY[dtype])
