"""What the other ranks see when one dies or stops taking part: a pk.DistributedError within
PYKERN_TIMEOUT, never a hang. Each test runs an MPI job of its own (mpiexec, started here),
whose ranks print what they saw."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import time

import pytest

from tests.distributed.launch import ROOT, has_mpi4py, mpiexec, run_job

pytestmark = pytest.mark.skipif(not has_mpi4py() or mpiexec() is None,
                                reason="needs mpi4py and mpiexec: pip install "
                                       "'pykern-vulkan[distributed]'")

PROLOGUE = textwrap.dedent("""
    import os, time
    import numpy as np
    import pykern as pk
    import pykern.distributed as dist
    dist.init_process_group(backend="mpi")
    rank, world = dist.get_rank(), dist.get_world_size()

    def report(what):
        start = time.monotonic()
        try:
            what()
        except pk.DistributedError as error:
            print(f"rank {rank} raised after {time.monotonic() - start:.2f} s: {error}",
                  flush=True)
            return True
        print(f"rank {rank} completed", flush=True)
        return False
""")


def _raised(out: str) -> dict[int, tuple[float, str]]:
    """rank -> (seconds, message) of each rank that reported a DistributedError."""
    return {int(m[1]): (float(m[2]), m[3])
            for m in re.finditer(r"rank (\d+) raised after ([\d.]+) s: (.*)", out)}


def test_a_rank_that_dies_gives_the_others_an_error_at_once():
    script = PROLOGUE + textwrap.dedent("""
        dist.barrier()
        if rank == world - 1:
            os._exit(3)  # dies without a word
        t = pk.ones(1_000_000)
        report(lambda: dist.all_reduce(t))
        report(lambda: dist.all_reduce(t))  # the group is unusable now: at once
    """)
    start = time.monotonic()
    done = run_job(script, 3, timeout=120, env={"PYKERN_TIMEOUT": "30"}, keep_going=True)
    elapsed = time.monotonic() - start
    raised = _raised(done.stdout)
    assert set(raised) == {0, 1}, done.stdout + done.stderr
    for seconds, message in raised.values():
        assert seconds < 10, message  # seen dead (same machine), not at the 30 s deadline
    assert "rank 2 (pid" in done.stdout and "has ended" in done.stdout
    assert done.stdout.count("unusable since an earlier collective failed") == 2
    assert elapsed < 60, done.stdout
    assert done.returncode != 0  # the launcher reports the dead rank


def test_a_rank_that_does_not_take_part_times_out():
    """Rank 1 is alive but late past PYKERN_TIMEOUT: rank 0 gives up at the deadline."""
    script = PROLOGUE + textwrap.dedent("""
        if rank == 1:
            time.sleep(8)
        report(lambda: dist.all_reduce(pk.ones(4)))
    """)
    done = run_job(script, 2, timeout=120, env={"PYKERN_TIMEOUT": "2"}, keep_going=True)
    raised = _raised(done.stdout)
    assert 0 in raised, done.stdout + done.stderr
    seconds, message = raised[0]
    assert 2 <= seconds < 6 and "PYKERN_TIMEOUT" in message, message
    assert 1 in raised, done.stdout  # rank 0 ended meanwhile: rank 1 sees that too


def test_a_rank_that_dies_during_data_parallel_backward():
    script = PROLOGUE + textwrap.dedent("""
        model = pk.nn.parallel.DistributedDataParallel(pk.nn.Linear(64, 64))
        x = pk.ones((8, 64))
        pk.sum(model(x)).backward()  # one step together
        if rank == 1:
            os._exit(3)
        report(lambda: pk.sum(model(x)).backward())
    """)
    done = run_job(script, 2, timeout=120, env={"PYKERN_TIMEOUT": "30"}, keep_going=True)
    raised = _raised(done.stdout)
    assert 0 in raised, done.stdout + done.stderr
    seconds, message = raised[0]
    assert seconds < 10 and "gradient averaging" in message, message


def test_by_default_the_launcher_ends_the_job_when_a_rank_dies():
    """Without -disable-auto-cleanup MPICH's launcher kills the other ranks itself: the job
    ends at once, no survivor runs on (and none hangs)."""
    script = PROLOGUE + textwrap.dedent("""
        dist.barrier()
        if rank == 1:
            os._exit(3)
        time.sleep(60)
    """)
    start = time.monotonic()
    done = run_job(script, 2, timeout=120, env={"PYKERN_TIMEOUT": "30"})
    assert done.returncode != 0
    assert time.monotonic() - start < 40


def test_pykern_works_without_mpi4py_and_init_says_what_to_install():
    program = textwrap.dedent("""
        import sys
        sys.modules["mpi4py"] = None  # import mpi4py now fails
        import pykern as pk
        import pykern.distributed as dist
        from pykern.nn.parallel import DistributedDataParallel
        assert not dist.is_available() and not dist.is_initialized()
        try:
            dist.init_process_group(backend="mpi")
        except pk.DistributedError as error:
            print("refused:", error)
        print(float(pk.sum(pk.ones(3))))
    """)
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, text=True,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "refused:" in done.stdout and "pip install" in done.stdout
    assert "3.0" in done.stdout
