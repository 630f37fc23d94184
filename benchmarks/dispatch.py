"""Op dispatch: wall-clock microseconds per tensor op on tiny tensors (64 f32), where the cost is
the op layer's Python and the launch, not the device's work.

Each op runs `launches` times back to back (queued: the device works meanwhile) and is divided
by their number, as the launch benchmark does for a bare kernel; the bare `add[64](A, B, C)`
launch of the same process is the yardstick (the op's target is 1.5× of it), and torch runs the
same ops on the CPU and, where it has one, on CUDA. Results are fresh tensors each call (a
result dropped is freed), as in user code; `+=` writes into its left operand; `a * w` with
`w.requires_grad` is recorded by autograd. The `compiled` rows run `a + a` and the `add[64]`
launch CHAIN times inside one `@pk.compile`d function and divide a replayed call by CHAIN:
what an op costs once its Python is gone.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import pykern as pk

from .kernels import add
from .launch_overhead import _queued
from .peers import Peers
from .plan import Plan
from .results import Results, Row

N = 64
CHAIN = 100  # ops per compiled call


def _ops(xp: object, a: object, b: object, m: object, w: object
         ) -> dict[str, Callable[[], object]]:
    """The ops timed, written once for pykern and torch (`xp` is `pk` or `torch`)."""
    def inplace() -> None:
        nonlocal a
        a += b

    return {
        "a + a": lambda: a + a,
        "a + b": lambda: a + b,
        "a * w (autograd)": lambda: a * w,
        "a * 2.0": lambda: a * 2.0,
        "exp(a)": lambda: xp.exp(a),
        "a += b": inplace,
        "a.sum()": lambda: a.sum(),
        "m @ m (8×8)": lambda: m @ m,
        "softmax(m)": lambda: xp.softmax(m, -1) if xp is pk else xp.softmax(m, dim=-1),
    }


def run(plan: Plan, results: Results, peers: Peers) -> None:
    a, b, c = (pk.asarray(np.ones(N, np.float32)) for _ in range(3))
    m = pk.asarray(np.ones((8, 8), np.float32))
    w = pk.ones(N, requires_grad=True)
    kernel, _ = _queued(lambda: add[N](a, b, c), pk.sync, plan.launches)
    _row(results, "add[64](a, b, c) kernel", "pykern", kernel)
    for case, op in _ops(pk, a, b, m, w).items():
        queued, _ = _queued(op, pk.sync, plan.launches)
        _row(results, case, "pykern", queued, per_kernel_launch=round(queued / kernel, 2))
    _compiled(plan, results, a, b, c, kernel)
    for device in peers.torch_devices():
        results.attempt(f"torch {device} dispatch",
                        lambda d=device: _torch(plan, results, peers.torch, d))


def _compiled(plan: Plan, results: Results, a: pk.Tensor, b: pk.Tensor, c: pk.Tensor,
              kernel: float) -> None:
    """`a + a` and the `add[64]` launch, CHAIN of each per `@pk.compile`d call."""
    @pk.compile
    def sums(a: pk.Tensor) -> pk.Tensor:
        for _ in range(CHAIN - 1):
            a + a
        return a + a

    @pk.compile
    def launches(a: pk.Tensor, b: pk.Tensor, c: pk.Tensor) -> None:
        for _ in range(CHAIN):
            add[N](a, b, c)

    calls = max(plan.launches // CHAIN, 10)
    for case, call in (("a + a", lambda: sums(a)),
                       ("add[64](a, b, c) kernel", lambda: launches(a, b, c))):
        queued, _ = _queued(call, pk.sync, calls)
        _row(results, case, "pykern compiled", queued / CHAIN,
             per_kernel_launch=round(queued / CHAIN / kernel, 2))


def _torch(plan: Plan, results: Results, torch: object, device: str) -> None:
    a, b = (torch.ones(N, device=device) for _ in range(2))
    m = torch.ones((8, 8), device=device)
    w = torch.ones(N, device=device, requires_grad=True)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    for case, op in _ops(torch, a, b, m, w).items():
        queued, _ = _queued(op, sync, plan.launches)
        _row(results, case, f"torch {device}", queued)


def _row(results: Results, case: str, impl: str, seconds: float, **extra: object) -> None:
    results.add(Row("dispatch", case, impl, seconds * 1e6, "µs", False, "wall clock",
                    dict(extra)))
