"""`@pk.fuse` against the same expressions run op by op: `exp(a) * 2 + b` (in Gelt/s, and GB/s
counting the 12 bytes per element a fused kernel must move) and the fused reduction
`((a - b) ** 2).sum()`, over f32 arrays.

Implementations: pykern fused, pykern eager (one kernel per op, each writing a temporary),
torch eager, and torch.compile where it works (it needs a compiler toolchain; a failure is a
note). pykern is timed with GPU timestamps around `reps` calls recorded back to back, torch
on CUDA with CUDA events the same way, torch on the CPU by the wall clock. Every fused result
is checked against a float64 reference.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

import pykern as pk

from .clock import cuda_per_call, gpu_per_call, per_call
from .peers import Peers
from .plan import Plan
from .results import Results, Row, power_of_two

GROUP = "fusion"
BYTES_PER_ELEMENT = 12  # a and b read, the result written (the reduction: 8)


@pk.fuse
def exp_scale_add(a, b):
    return pk.exp(a) * 2.0 + b


@pk.fuse
def squared_distance(a, b):
    return ((a - b) ** 2).sum()


def eager_exp_scale_add(a, b):
    return pk.exp(a) * 2.0 + b


def eager_squared_distance(a, b):
    return ((a - b) ** 2).sum()


def run(plan: Plan, results: Results, peers: Peers) -> None:
    for n, reps in plan.fusion:
        rng = np.random.default_rng(0)
        a = rng.uniform(-2, 2, n).astype(np.float32)
        b = rng.uniform(-2, 2, n).astype(np.float32)
        A, B = pk.asarray(a), pk.asarray(b)
        _pykern(results, n, reps, a, b, A, B)
        del A, B
        for device in peers.torch_devices():
            results.attempt(f"torch {device} on n={power_of_two(n)}",
                            functools.partial(_torch, results, peers.torch, device, n, reps,
                                              a, b))


def _case(what: str, n: int) -> str:
    return f"{what} n={power_of_two(n)}"


def _row(results: Results, what: str, n: int, impl: str, seconds: float, method: str,
         nbytes: int, **extra: object) -> None:
    results.add(Row(GROUP, _case(what, n), impl, n / seconds / 1e9, "Gelt/s", True, method,
                    {"gbps": nbytes * n / seconds / 1e9, **extra}))


def _pykern(results: Results, n: int, reps: int, a: np.ndarray, b: np.ndarray,
            A: pk.Tensor, B: pk.Tensor) -> None:
    dev = pk.get_device()
    reference = np.exp(a.astype(np.float64)) * 2 + b
    distance = float(((a.astype(np.float64) - b) ** 2).sum())
    cases: list[tuple[str, str, Callable[[], pk.Tensor], int]] = [
        ("exp(a)*2+b", "pykern fuse", lambda: exp_scale_add(A, B), BYTES_PER_ELEMENT),
        ("exp(a)*2+b", "pykern eager", lambda: eager_exp_scale_add(A, B), BYTES_PER_ELEMENT),
        ("sum((a-b)**2)", "pykern fuse", lambda: squared_distance(A, B), 8),
        ("sum((a-b)**2)", "pykern eager", lambda: eager_squared_distance(A, B), 8),
    ]
    for what, impl, work, nbytes in cases:
        seconds, out = gpu_per_call(dev, work, reps)
        got = out.numpy().astype(np.float64)
        if what.startswith("exp"):
            correct = bool(np.allclose(got, reference, rtol=1e-5, atol=1e-6))
        else:
            correct = bool(abs(float(got) - distance) <= 1e-4 * distance)
        _row(results, what, n, impl, seconds, "gpu timestamps", nbytes, correct=correct)
        if not correct:
            results.failures.append(f"{impl} gave wrong results for {_case(what, n)}")


def _torch(results: Results, torch: object, device: str, n: int, reps: int, a: np.ndarray,
           b: np.ndarray) -> None:
    ta = torch.from_numpy(a).to(device)  # type: ignore[attr-defined]
    tb = torch.from_numpy(b).to(device)  # type: ignore[attr-defined]

    def exp_add() -> object:
        return torch.exp(ta) * 2.0 + tb  # type: ignore[attr-defined]

    def distance() -> object:
        return ((ta - tb) ** 2).sum()

    works = [("exp(a)*2+b", f"torch {device}", exp_add, BYTES_PER_ELEMENT),
             ("sum((a-b)**2)", f"torch {device}", distance, 8)]
    if device == "cuda":
        try:
            compiled = torch.compile(exp_add)  # type: ignore[attr-defined]
            compiled()
            works.append(("exp(a)*2+b", "torch.compile cuda", compiled, BYTES_PER_ELEMENT))
        except Exception as e:  # noqa: BLE001 - optional: needs a working inductor toolchain
            results.note(f"torch.compile unavailable: {type(e).__name__}: {str(e)[:120]}")
    for what, impl, work, nbytes in works:
        if device == "cuda":
            seconds, method = cuda_per_call(torch, work, reps)[0], "cuda events"
        else:
            seconds, method = per_call(work, max(3, min(reps, 5))), "wall clock"
        _row(results, what, n, impl, seconds, method, nbytes)
