"""Helpers of the distributed tests: whether this process was started by an MPI launcher,
and how a test starts a job of its own (`mpiexec -n N python script.py`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# set by MPICH's launcher (PMI), Open MPI's and PMIx-based ones
LAUNCHER_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")


def launched_by_mpi() -> bool:
    """Whether an MPI launcher started this process."""
    return any(v in os.environ for v in LAUNCHER_VARIABLES)


def has_mpi4py() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def mpiexec() -> str | None:
    """The launcher next to this Python (the MPICH wheel's), else the one on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.exists() else shutil.which("mpiexec")


def run_job(script: str, ranks: int, timeout: float, env: dict[str, str] | None = None,
            keep_going: bool = False) -> subprocess.CompletedProcess:
    """Runs the Python source `script` as an MPI job of `ranks` processes; with
    `keep_going`, a rank that dies does not make the launcher kill the others (MPICH's
    -disable-auto-cleanup), so that they can report it."""
    launcher = mpiexec()
    assert launcher is not None
    flags = ["-disable-auto-cleanup"] if keep_going else []
    return subprocess.run([launcher, *flags, "-n", str(ranks), sys.executable, "-c", script],
                          cwd=ROOT, text=True, capture_output=True, timeout=timeout,
                          env={**os.environ, **OPEN_MPI_AS_ROOT, **(env or {})})


# Open MPI refuses to start as root unless told (containers run as root); MPICH ignores these
OPEN_MPI_AS_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
