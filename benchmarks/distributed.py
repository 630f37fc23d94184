"""`--only distributed`: pykern.distributed on this machine's host device, against mpi4py.

- all-reduce: the bus bandwidth (2·(n-1)/n · bytes / time, the figure NCCL's tests report) of
  `dist.all_reduce` on a pykern f32 tensor of the host device, against mpi4py's blocking
  `Allreduce` on a numpy array of the same size, in the same 2-process job, alternating;
- data-parallel step: the time of one training step (forward, backward with the gradient
  averaging, AdamW) of an MLP through DistributedDataParallel with 1, 2 and 3 processes, each
  on its own batch of the same size (weak scaling), and the samples per second.

Each figure comes from an MPI job started here (`mpiexec -n N python -m
benchmarks.distributed_child`), whose rank 0 writes its measurements as JSON; every result is
checked (the all-reduced values against the expected sum, the DDP weights equal on all
ranks). Skipped, with a note, where mpi4py or mpiexec is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .results import Results, Row

GROUP = "distributed"
ROOT = Path(__file__).resolve().parents[1]
STEP_RANKS = (1, 2, 3)


def run(plan: Any, results: Results, peers: Any) -> None:
    launcher = _mpiexec()
    if launcher is None:
        results.note("distributed: skipped: no mpiexec or mpi4py (pip install "
                     "'pykern-vulkan[distributed]')")
        return
    sizes = ",".join(str(n) for n in plan.distributed_sizes)
    report = _job(launcher, results, 2, ["allreduce", "--sizes", sizes])
    for row in (report or {}).get("allreduce", []):
        case = f"f32 {_size(row['bytes'])} n=2"
        for impl, key in (("pykern all_reduce (host)", "pykern_s"),
                          ("mpi4py Allreduce (numpy)", "mpi4py_s")):
            busbw = 2 * (2 - 1) / 2 * row["bytes"] / row[key] / 1e9
            results.add(Row(GROUP, case, impl, busbw, "GB/s", True, "wall clock",
                            {"seconds": row[key]}))
    steps = str(plan.distributed_steps)
    for ranks in STEP_RANKS:
        report = _job(launcher, results, ranks, ["ddp", "--steps", steps])
        if report is not None:
            ddp = report["ddp"]
            results.add(Row(GROUP, "DDP MLP step", f"pykern DDP n={ranks}", ddp["step_ms"],
                            "ms", False, "wall clock", ddp))
            results.add(Row(GROUP, "DDP MLP samples/s", f"pykern DDP n={ranks}",
                            ddp["samples_per_s"], "samples/s", True, "wall clock", ddp))


def _mpiexec() -> str | None:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return None
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.exists() else shutil.which("mpiexec")


def _job(launcher: str, results: Results, ranks: int, args: list[str]) -> dict | None:
    """Runs the child as an MPI job of `ranks`; rank 0's report, or None (a failure, noted)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        # (Open MPI refuses to start as root unless told; MPICH ignores these)
        env = {**os.environ, "PYKERN_DEVICE": "host", "PYKERN_TIMEOUT": "300",
               "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
        done = subprocess.run([launcher, "-n", str(ranks), sys.executable, "-m",
                               "benchmarks.distributed_child", *args, "--json", str(out)],
                              cwd=ROOT, env=env, text=True, capture_output=True, timeout=1800)
        if done.returncode != 0 or not out.exists():
            results.fail(f"distributed: the job of {ranks} ({' '.join(args)}) failed: "
                         f"{(done.stdout + done.stderr)[-1500:]}")
            return None
        report = json.loads(out.read_text())
    for problem in report.get("wrong", []):
        results.fail(f"distributed: {problem}")
    return report


def _size(nbytes: int) -> str:
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes} B"
