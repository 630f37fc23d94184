"""A quick look at the tensor ops the host device's own kernels run, against numpy in the same
process (the official table is `python -m benchmarks --only host`):

    python -m benchmarks.host_tensor_ops [device] [op,op,...]

add over 2^24 f32; sum over axis 1 and axis 0, softmax and layer_norm over 4096×4096 f32;
matmul 512³ and 1024³ f32. Best of 5 (3 for matmul) wall-clock times, each pykern call
followed by `pk.sync()`; `ratio` is numpy's time over pykern's (above 1: pykern is faster),
`maxerr` the largest difference from a float64 reference.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

import pykern as pk

N = 4096
OPS = ["add", "sum1", "sum0", "softmax", "layer_norm", "matmul512", "matmul1024"]


def best(f: Callable[[], object], reps: int = 5) -> float:
    f()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def synced(f: Callable[[], object]) -> Callable[[], None]:
    return lambda: (f(), pk.sync())


def np_softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_layer_norm(a: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mu = a.mean(axis=-1, keepdims=True)
    return (a - mu) / np.sqrt(a.var(axis=-1, keepdims=True) + 1e-5) * w + b


def case(op: str, rng: np.random.Generator) -> tuple[Callable, Callable, Callable]:
    """(numpy's call, pykern's call, the float64 reference) of one op."""
    if op == "add":
        a, b = (rng.standard_normal(1 << 24, dtype=np.float32) for _ in range(2))
        ta, tb = pk.asarray(a), pk.asarray(b)
        return (lambda: a + b), (lambda: ta + tb), (lambda: a.astype(np.float64) + b)
    if op.startswith("matmul"):
        s = int(op[6:])
        a, b = (rng.standard_normal((s, s), dtype=np.float32) for _ in range(2))
        ta, tb = pk.asarray(a), pk.asarray(b)
        return (lambda: a @ b), (lambda: pk.matmul(ta, tb)), \
            (lambda: a.astype(np.float64) @ b)
    x = rng.standard_normal((N, N), dtype=np.float32)
    t = pk.asarray(x)
    x64 = x.astype(np.float64)
    if op in ("sum1", "sum0"):
        axis = int(op[3])
        return (lambda: x.sum(axis=axis)), (lambda: pk.sum(t, axis=axis)), \
            (lambda: x64.sum(axis=axis))
    if op == "softmax":
        return (lambda: np_softmax(x)), (lambda: pk.softmax(t, axis=-1)), \
            (lambda: np_softmax(x64))
    w, b = (rng.standard_normal(N, dtype=np.float32) for _ in range(2))
    tw, tb = pk.asarray(w), pk.asarray(b)
    return (lambda: np_layer_norm(x, w, b)), (lambda: pk.layer_norm(t, N, tw, tb)), \
        (lambda: np_layer_norm(x64, w, b))


def main(argv: list[str]) -> None:
    pk.set_device(argv[0] if argv else "host")
    ops = argv[1].split(",") if len(argv) > 1 else OPS
    rng = np.random.default_rng(0)
    print(f"{'op':12s} {'numpy ms':>9s} {'pykern ms':>9s} {'ratio':>6s} {'maxerr':>9s}")
    for op in ops:
        numpy_call, pykern_call, reference = case(op, rng)
        pk.sync()
        reps = 3 if op.startswith("matmul") else 5
        t_np = best(numpy_call, reps)
        t_pk = best(synced(pykern_call), reps)
        err = float(np.max(np.abs(pykern_call().numpy() - reference())))
        print(f"{op:12s} {t_np * 1e3:9.2f} {t_pk * 1e3:9.2f} {t_np / t_pk:6.2f} {err:9.2e}",
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
