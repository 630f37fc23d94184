"""examples/train_ddp.py under mpiexec -n 2: it learns the digits, and its weights equal
those of one process trained on the global minibatches (its --check)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.distributed.launch import OPEN_MPI_AS_ROOT, ROOT, has_mpi4py, mpiexec

pytest.importorskip("sklearn")
pytestmark = pytest.mark.skipif(not has_mpi4py() or mpiexec() is None,
                                reason="needs mpi4py and mpiexec: pip install "
                                       "'pykern-vulkan[distributed]'")


def test_train_ddp_example_learns_and_matches_one_process():
    done = subprocess.run([mpiexec(), "-n", "2", sys.executable, "examples/train_ddp.py",
                           "--epochs", "3", "--check"], cwd=ROOT, text=True,
                          capture_output=True, timeout=300,
                          env={**os.environ, **OPEN_MPI_AS_ROOT, "PYKERN_TIMEOUT": "120"})
    assert done.returncode == 0, done.stdout + done.stderr
    accuracy = float(re.search(r"test accuracy ([\d.]+) \(.* on 2 processes", done.stdout)[1])
    assert accuracy > 0.85, done.stdout
    difference = float(re.search(r"largest weight difference ([\d.e+-]+)", done.stdout)[1])
    assert difference < 1e-4, done.stdout
