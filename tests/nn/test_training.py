"""End to end: a small MLP trained by plain gradient descent on the device; the loss falls."""

from __future__ import annotations

import numpy as np

import pykern as pk
from pykern import nn
from pykern.nn import functional as F


def sgd_step(model: nn.Module, lr: float) -> None:
    """p <- p - lr * p.grad, written into each parameter's memory under no_grad (a leaf that
    requires grad refuses writes while grad mode records)."""
    with pk.no_grad():
        for p in model.parameters():
            p -= lr * p.grad


def test_mlp_loss_decreases_over_50_steps():
    pk.random.seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 4)).astype(np.float32)
    labels = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 0.5)  # 3 classes
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 3))
    xb, yb = pk.asarray(x), pk.asarray(labels)
    losses = []
    for _ in range(50):
        loss = F.cross_entropy(model(xb), yb)
        model.zero_grad()
        loss.backward()
        sgd_step(model, 0.5)
        losses.append(loss.item())
    assert all(np.isfinite(losses))
    assert losses[-1] < 0.6 * losses[0], losses
    model.eval()
    with pk.no_grad():
        accuracy = (model(xb).numpy().argmax(-1) == labels).mean()
    assert accuracy > 0.8
