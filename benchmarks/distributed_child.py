"""One MPI job of the distributed benchmark (benchmarks/distributed.py), started by mpiexec:

    mpiexec -n 2 python -m benchmarks.distributed_child allreduce --sizes 1024,65536 --json R
    mpiexec -n 3 python -m benchmarks.distributed_child ddp --steps 20 --json R

Rank 0 writes the measurements (and any wrong result, under "wrong") to R as JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

import pykern as pk
import pykern.distributed as dist
import pykern.nn.functional as F

TRIALS = 5  # alternating timed trials per size; the median is reported
TRIAL_BYTES = 2**27  # bytes all-reduced per trial (at least 3 calls)
BATCH, WIDTH, INPUTS, CLASSES = 64, 1024, 256, 10  # the DDP step's MLP, per rank


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("allreduce", "ddp"))
    parser.add_argument("--sizes", default="1024")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args(argv)
    dist.init_process_group(backend="mpi")
    wrong: list[str] = []
    if args.mode == "allreduce":
        report = {"allreduce": [_allreduce(int(n), wrong) for n in args.sizes.split(",")]}
    else:
        report = {"ddp": _ddp(args.steps, wrong)}
    if dist.get_rank() == 0:
        args.json.write_text(json.dumps({**report, "wrong": wrong}, indent=1))
    dist.destroy_process_group()


def _allreduce(n: int, wrong: list[str]) -> dict:
    """Seconds per all-reduce of `n` f32: pykern's on a host-device tensor, mpi4py's on a
    numpy array; checked once against the expected sum."""
    from mpi4py import MPI

    comm, rank, world = MPI.COMM_WORLD, dist.get_rank(), dist.get_world_size()
    t = pk.full((n,), float(rank + 1))
    dist.all_reduce(t)
    expected = world * (world + 1) / 2
    if not np.all(t.numpy() == expected):
        wrong.append(f"all_reduce of {n} f32 is not {expected} everywhere")
    t = pk.zeros((n,))  # zeros stay zeros: the values never overflow over the repetitions
    array = np.zeros(n, np.float32)
    reps = max(3, TRIAL_BYTES // (4 * n))
    dist.all_reduce(t)
    comm.Allreduce(MPI.IN_PLACE, array)
    ours, theirs = [], []
    for _ in range(TRIALS):
        ours.append(_timed(comm, reps, lambda: dist.all_reduce(t)))
        theirs.append(_timed(comm, reps, lambda: comm.Allreduce(MPI.IN_PLACE, array)))
    return {"elements": n, "bytes": 4 * n, "reps": reps,
            "pykern_s": statistics.median(ours), "mpi4py_s": statistics.median(theirs)}


def _timed(comm, reps: int, call) -> float:
    """Seconds per call, the slowest rank's."""
    comm.Barrier()
    start = time.perf_counter()
    for _ in range(reps):
        call()
    elapsed = (time.perf_counter() - start) / reps
    return comm.allreduce(elapsed, op=_max(comm))


def _max(comm):
    from mpi4py import MPI
    return MPI.MAX


def _ddp(steps: int, wrong: list[str]) -> dict:
    """ms per DDP training step of the MLP, each rank on its own batch of BATCH samples."""
    from mpi4py import MPI

    comm, rank, world = MPI.COMM_WORLD, dist.get_rank(), dist.get_world_size()
    pk.random.seed(0)
    model = pk.nn.Sequential(pk.nn.Linear(INPUTS, WIDTH), pk.nn.GELU(),
                             pk.nn.Linear(WIDTH, WIDTH), pk.nn.GELU(),
                             pk.nn.Linear(WIDTH, CLASSES))
    ddp = pk.nn.parallel.DistributedDataParallel(model)
    opt = pk.optim.AdamW(ddp.parameters(), lr=1e-3)
    rng = np.random.default_rng(rank)
    x = pk.asarray(rng.standard_normal((BATCH, INPUTS)).astype(np.float32))
    y = pk.asarray(rng.integers(0, CLASSES, BATCH).astype(np.int32))

    def step() -> None:
        loss = F.cross_entropy(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        float(loss)

    for _ in range(2):
        step()
    seconds = _timed(comm, steps, step)
    sums = comm.allgather([float(np.sum(p.numpy(), dtype=np.float64))
                           for p in model.parameters()])
    if any(s != sums[0] for s in sums):
        wrong.append(f"DDP weights differ between ranks after {steps + 2} steps (n={world})")
    grad_bytes = sum(p.nbytes for p in model.parameters())
    return {"ranks": world, "step_ms": seconds * 1e3, "batch_per_rank": BATCH,
            "samples_per_s": world * BATCH / seconds, "gradient_bytes": grad_bytes,
            "buckets": len(ddp._reducer.buckets)}


if __name__ == "__main__":
    main()
