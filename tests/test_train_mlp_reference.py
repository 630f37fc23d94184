"""The digits MLP of examples/train_mlp.py, trained by pykern (autograd, pk.nn, AdamW on the
device), gives the loss curve of the same steps written out in numpy: the same initial weights,
minibatches, forward pass, hand-derived gradients and torch's AdamW rule, in f32."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import pykern as pk

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))


def numpy_training(params: list[np.ndarray], x: np.ndarray, y: np.ndarray, epochs: int,
                   batch: int, lr: float, betas=(0.9, 0.999), eps=1e-8,
                   weight_decay=0.01) -> list[float]:
    w1, b1, w2, b2 = (p.astype(np.float32).copy() for p in params)
    state = [[np.zeros_like(p), np.zeros_like(p)] for p in (w1, b1, w2, b2)]
    rng = np.random.default_rng(1)
    losses, t = [], 0
    f32 = np.float32
    for _ in range(epochs):
        order = rng.permutation(len(x))
        for i in range(0, len(order), batch):
            idx = order[i:i + batch]
            xb, yb = x[idx], y[idx]
            h = xb @ w1.T + b1
            r = np.maximum(h, 0)
            z = r @ w2.T + b2
            zmax = z.max(axis=1, keepdims=True)
            lse = zmax[:, 0] + np.log(np.exp(z - zmax).sum(axis=1))
            n = len(idx)
            losses.append(float((lse - z[np.arange(n), yb]).mean()))
            dz = np.exp(z - lse[:, None])
            dz[np.arange(n), yb] -= 1
            dz /= f32(n)
            dr = dz @ w2
            dh = dr * (h > 0)
            grads = (dh.T @ xb, dh.sum(0), dz.T @ r, dz.sum(0))
            t += 1
            for p, g, (m, v) in zip((w1, b1, w2, b2), grads, state):
                p *= f32(1 - lr * weight_decay)
                m[...] = f32(betas[0]) * m + f32(1 - betas[0]) * g
                v[...] = f32(betas[1]) * v + f32(1 - betas[1]) * g * g
                mhat = m / f32(1 - betas[0] ** t)
                vhat = v / f32(1 - betas[1] ** t)
                p -= f32(lr) * mhat / (np.sqrt(vhat) + f32(eps))
    return losses


def test_the_mlp_trains_along_the_numpy_loss_curve():
    pytest.importorskip("sklearn", reason="the example reads scikit-learn's digits")
    import train_mlp

    x_train, y_train, _, _ = train_mlp.split(*train_mlp.load_digits(), seed=0)
    pk.random.seed(0)
    model = train_mlp.make_model()
    params = [model[0].weight.numpy(), model[0].bias.numpy(), model[2].weight.numpy(),
              model[2].bias.numpy()]
    ours = train_mlp.train(model, x_train, y_train, epochs=2, batch=64, lr=3e-3, log=False)
    theirs = numpy_training(params, x_train, y_train, epochs=2, batch=64, lr=3e-3)
    assert len(ours) == len(theirs) == 46
    assert theirs[-1] < 0.5 * theirs[0]  # the reference itself learns
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=0)  # seen: 1.5e-7
