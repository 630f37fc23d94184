"""examples/train_mlp.py's training written in numpy: the reference the host benchmark checks
pykern's losses against, and its numpy figure.

The same model (Linear 64→128, ReLU, Linear 128→10), loss (mean cross-entropy), optimizer
(AdamW with PyTorch's rule and defaults, the one pk.optim.AdamW documents) and minibatch order
(a permutation per epoch from `default_rng(1)`, made afresh on each call of `train`, as the
example does), from the weights given, in f32.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

BETAS = (0.9, 0.999)
EPS = 1e-8
WEIGHT_DECAY = 0.01
NAMES = ("0.weight", "0.bias", "2.weight", "2.bias")


def loss_and_grads(p: dict[str, np.ndarray], x: np.ndarray,
                   y: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
    """The mean cross-entropy of the batch and its gradient for every parameter."""
    pre = x @ p["0.weight"].T + p["0.bias"]
    h = np.maximum(pre, 0)
    logits = h @ p["2.weight"].T + p["2.bias"]
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    total = e.sum(axis=1, keepdims=True)
    rows = np.arange(len(y))
    loss = float(np.mean(np.log(total[:, 0]) - shifted[rows, y]))
    d_logits = e / total
    d_logits[rows, y] -= 1
    d_logits /= np.float32(len(y))
    d_h = (d_logits @ p["2.weight"]) * (pre > 0)
    return loss, {"2.weight": d_logits.T @ h, "2.bias": d_logits.sum(axis=0),
                  "0.weight": d_h.T @ x, "0.bias": d_h.sum(axis=0)}


def train(params: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray, epochs: int,
          batch: int, lr: float, on_epoch: Callable[[int], None] | None = None) -> list[float]:
    """As examples/train_mlp.py's `train`: updates `params` in place, returns every loss;
    `on_epoch(e)` is called as epoch `e` starts."""
    b1, b2 = BETAS
    m = {k: np.zeros_like(params[k]) for k in NAMES}
    v = {k: np.zeros_like(params[k]) for k in NAMES}
    rng = np.random.default_rng(1)
    losses, t = [], 0
    for epoch in range(epochs):
        if on_epoch is not None:
            on_epoch(epoch)
        order = rng.permutation(len(x))
        for i in range(0, len(order), batch):
            idx = order[i:i + batch]
            loss, grads = loss_and_grads(params, x[idx], y[idx])
            losses.append(loss)
            t += 1
            for k in NAMES:
                g, p = grads[k], params[k]
                p *= np.float32(1 - lr * WEIGHT_DECAY)
                m[k] += np.float32(1 - b1) * (g - m[k])
                v[k] = np.float32(b2) * v[k] + np.float32(1 - b2) * g * g
                step = np.float32(lr / (1 - b1**t))
                p -= step * m[k] / (np.sqrt(v[k]) / np.float32(np.sqrt(1 - b2**t))
                                    + np.float32(EPS))
    return losses
