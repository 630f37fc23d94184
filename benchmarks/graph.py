"""Recorded graphs: wall-clock microseconds per launch of a chain of 100 small ops
(`y = y * 1.0001 + 0.5` fifty times on 64 f32 elements: 100 launches, each reading what the
one before wrote), run eagerly and replayed from a `pk.graph()`.

- queued: the chain's launches back to back (or `reps` replays of the graph), divided by the
  launches, timed to the last call returning; `+ sync` to the end of the sync after. A queue
  that fills up waits for the device, so on lavapipe (whose "GPU" is the CPU Python runs on)
  these include device time.
- host cost: the time the calls themselves take with the device idle (a sync before each,
  not timed), per launch: recording 100 launches eagerly, or one replay (one submit) of them.
- torch cuda (where torch has CUDA, in the same process): the same chain eagerly and replayed
  from a `torch.cuda.CUDAGraph`.

Every result is checked against the chain computed in float64.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

import pykern as pk

from .peers import Peers
from .plan import Plan
from .results import Results, Row

N = 64
STEPS = 50  # two ops each: 100 launches
LAUNCHES = 2 * STEPS


def run(plan: Plan, results: Results, peers: Peers) -> None:
    reps = max(10, plan.launches // LAUNCHES)
    _pykern(reps, results)
    if peers.torch is not None and peers.cuda:
        results.attempt("torch cuda graphs", lambda: _torch(reps, results, peers.torch))


def chain(y: object) -> object:
    for _ in range(STEPS):
        y = y * 1.0001 + 0.5
    return y


def expected(x: np.ndarray) -> np.ndarray:
    y = x.astype(np.float64)
    for _ in range(STEPS):
        y = y * np.float32(1.0001) + 0.5
    return y


def _row(results: Results, case: str, impl: str, seconds: float, **extra: object) -> None:
    results.add(Row("graph", case, impl, seconds * 1e6, "µs", False, "wall clock", dict(extra)))


def _timed(work: Callable[[], object], sync: Callable[[], object], reps: int
           ) -> tuple[float, float]:
    """Seconds per launch to return from `reps` calls of `work` (LAUNCHES launches each),
    and to finish them."""
    for _ in range(3):  # warm up: compiled, pools and batches made
        work()
    sync()
    start = time.perf_counter()
    for _ in range(reps):
        work()
    queued = time.perf_counter()
    sync()
    done = time.perf_counter()
    return (queued - start) / (reps * LAUNCHES), (done - start) / (reps * LAUNCHES)


def _host_cost(work: Callable[[], object], sync: Callable[[], object], reps: int) -> float:
    """Seconds per launch that a call of `work` takes with nothing pending on the device."""
    work()
    total = 0.0
    for _ in range(reps):
        sync()
        start = time.perf_counter()
        work()
        total += time.perf_counter() - start
    sync()
    return total / (reps * LAUNCHES)


def _check(results: Results, what: str, got: np.ndarray, x: np.ndarray) -> None:
    if not np.allclose(got, expected(x), rtol=1e-5):
        results.fail(f"graph: {what} gave a wrong result")


def _pykern(reps: int, results: Results) -> None:
    x0 = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    x = pk.asarray(x0)
    queued, finished = _timed(lambda: chain(x), pk.sync, reps)
    _check(results, "the eager chain", chain(x).numpy(), x0)
    _row(results, "queued", "pykern eager ops", queued, finished_us=finished * 1e6)
    _row(results, "queued + sync", "pykern eager ops", finished)
    _row(results, "host cost", "pykern eager ops", _host_cost(lambda: chain(x), pk.sync, reps))
    with pk.graph() as g:
        y = chain(x)
    assert g.launches == LAUNCHES, g.launches
    queued, finished = _timed(g.replay, pk.sync, reps)
    x1 = np.random.default_rng(1).standard_normal(N).astype(np.float32)
    x[...] = pk.asarray(x1)
    g.replay()
    _check(results, "the replayed chain", y.numpy(), x1)
    _row(results, "queued", "pykern pk.graph replay", queued, finished_us=finished * 1e6)
    _row(results, "queued + sync", "pykern pk.graph replay", finished)
    _row(results, "host cost", "pykern pk.graph replay", _host_cost(g.replay, pk.sync, reps))


def _torch(reps: int, results: Results, torch) -> None:
    x0 = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    x = torch.from_numpy(x0).to("cuda")
    sync = torch.cuda.synchronize
    queued, finished = _timed(lambda: chain(x), sync, reps)
    _row(results, "queued", "torch cuda eager", queued, finished_us=finished * 1e6)
    _row(results, "queued + sync", "torch cuda eager", finished)
    _row(results, "host cost", "torch cuda eager", _host_cost(lambda: chain(x), sync, reps))
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm-up on a side stream, as torch's docs ask
        chain(x)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = chain(x)
    queued, finished = _timed(graph.replay, sync, reps)
    graph.replay()
    sync()
    if not np.allclose(y.cpu().numpy(), expected(x0), rtol=1e-5):
        results.note("torch cuda graph: wrong result")
    _row(results, "queued", "torch cuda graph replay", queued, finished_us=finished * 1e6)
    _row(results, "queued + sync", "torch cuda graph replay", finished)
    _row(results, "host cost", "torch cuda graph replay", _host_cost(graph.replay, sync, reps))
