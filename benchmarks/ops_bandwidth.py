"""The bandwidth-bound cases of the `ops` benchmark, on a rows×cols f32 matrix, in GB/s.

Bytes counted: what the op must read plus what it must write, once each (softmax and
layer_norm read the matrix and write one; row and column sums read it and write a vector; the
transpose copy reads it and writes its transpose), whatever the implementation moves in
addition. These results are cheap to compute in float64, so they are checked whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

import pykern as pk

from .ops_case import OpCase, host_random
from .ops_check import Check, compare
from .ops_plan import OpsPlan

SEED = 11
EPS = 1e-5  # layer_norm's epsilon, pykern's and torch's default


def bandwidth_cases(plan: OpsPlan) -> Iterator[OpCase]:
    """softmax, layer_norm, row sums, column sums and a transpose copy, in that order."""
    rows, cols = plan.rows, plan.cols
    shape = f"{rows}x{cols} f32"
    matrix = 4.0 * rows * cols

    def one(group: str, nbytes: float, extra: int, pykern, torch, reference,
            exact: bool = False) -> OpCase:
        return OpCase(group, shape, "f32", "GB/s", nbytes, _inputs(rows, cols, extra),
                      pykern, torch, _whole(reference, exact))

    yield one("softmax", 2 * matrix, 0, lambda t: pk.softmax(t[0], axis=-1),
              lambda torch, t: torch.softmax(t[0], dim=-1), _softmax)
    yield one("layer_norm", 2 * matrix + 8.0 * cols, 2,
              lambda t: pk.layer_norm(t[0], cols, t[1], t[2], eps=EPS),
              lambda torch, t: torch.nn.functional.layer_norm(t[0], (cols,), t[1], t[2],
                                                              eps=EPS),
              _layer_norm)
    yield one("sum rows", matrix + 4.0 * rows, 0, lambda t: pk.sum(t[0], axis=1),
              lambda torch, t: torch.sum(t[0], dim=1), lambda x: x[0].sum(axis=1))
    yield one("sum cols", matrix + 4.0 * cols, 0, lambda t: pk.sum(t[0], axis=0),
              lambda torch, t: torch.sum(t[0], dim=0), lambda x: x[0].sum(axis=0))
    yield one("transpose", 2 * matrix, 0, lambda t: t[0].T.contiguous(),
              lambda torch, t: t[0].t().contiguous(), lambda x: x[0].T, exact=True)


def _inputs(rows: int, cols: int, vectors: int) -> Callable[[], Sequence[np.ndarray]]:
    """The matrix, then `vectors` vectors of `cols` (layer_norm's weight and bias)."""

    def make() -> Sequence[np.ndarray]:
        rng = np.random.default_rng(SEED)
        return (host_random(rng, (rows, cols), "f32"),
                *(host_random(rng, (cols,), "f32") for _ in range(vectors)))

    return make


def _whole(reference: Callable[[Sequence[np.ndarray]], np.ndarray], exact: bool
           ) -> Callable[[Sequence[np.ndarray], pk.Tensor], Check]:
    """A check of the whole result against `reference` computed on the float64 inputs
    (`exact`: it must be equal)."""

    def check(host: Sequence[np.ndarray], result: pk.Tensor) -> Check:
        want = reference([x.astype(np.float64) for x in host])
        return compare([(result.numpy(), want)], result.dtype.name, "whole result", exact)

    return check


def _softmax(x: Sequence[np.ndarray]) -> np.ndarray:
    e = np.exp(x[0] - x[0].max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _layer_norm(x: Sequence[np.ndarray]) -> np.ndarray:
    m, weight, bias = x
    centred = m - m.mean(axis=-1, keepdims=True)
    return centred / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + EPS) * weight + bias
