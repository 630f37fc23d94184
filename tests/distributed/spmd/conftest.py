"""The tests of this folder run as one MPI job: every rank runs every test, in the same
order (`make test` runs `mpiexec -n 2` and `-n 3` of `pytest tests/distributed/spmd`). Run
alone, outside an MPI launcher, they are skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.distributed.launch import has_mpi4py, launched_by_mpi

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    """Skips this folder's tests (only these: the hook sees the whole session's items)
    outside an MPI job."""
    if launched_by_mpi() and has_mpi4py():
        return
    why = ("run under an MPI launcher: mpiexec -n 2 python -m pytest tests/distributed/spmd"
           if has_mpi4py() else "needs mpi4py: pip install 'pykern-vulkan[distributed]'")
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.skip(reason=why))


@pytest.fixture(scope="session")
def dist():
    """pykern.distributed with the default group made (once for the session)."""
    import pykern.distributed as dist

    if not dist.is_initialized():
        dist.init_process_group(backend="mpi")
    if dist.get_world_size() < 2:
        pytest.skip("a job of one process: start it with mpiexec -n 2 or more")
    return dist
