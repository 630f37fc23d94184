"""The MPI library, through mpi4py, loaded when a process group is first made.

`import pykern.distributed` needs neither mpi4py nor an MPI: only `init_process_group` does,
and where they are missing it says what to install. mpi4py is told not to finalize MPI at exit
by itself: `finalize_at_exit` does, unless a collective failed in this process (a peer died or
stopped answering) or the process ends on an uncaught exception. MPI_Finalize waits for the
peers, so a rank that crashed would otherwise hang in it, alive, and its peers would learn of
the crash only at their deadline, not at once (peers.py).
"""

from __future__ import annotations

import atexit
import sys
from typing import Any

from pykern.errors import DistributedError

INSTALL = ("pip install 'pykern-vulkan[distributed]' (mpi4py and the MPICH wheel), or mpi4py "
           "built against the cluster's own MPI (pip install mpi4py with its mpicc on PATH)")

_state: dict[str, Any] = {"mpi": None, "failed": False}


def load() -> Any:
    """mpi4py's `MPI` module, MPI initialised (thread level MULTIPLE: data-parallel training
    communicates from a thread of its own). DistributedError saying what to install where
    mpi4py or an MPI library is missing."""
    if _state["mpi"] is not None:
        return _state["mpi"]
    try:
        import mpi4py
    except ImportError as error:
        raise DistributedError(f"pykern.distributed needs mpi4py and an MPI library: {INSTALL}"
                               ) from error
    mpi4py.rc.finalize = False  # finalize_at_exit decides (no effect if MPI was imported before)
    mpi4py.rc.thread_level = "multiple"
    try:
        from mpi4py import MPI
    except (ImportError, RuntimeError) as error:  # mpi4py without a usable libmpi
        raise DistributedError(f"mpi4py found no usable MPI library ({error}): {INSTALL}"
                               ) from error
    _state["mpi"] = MPI
    atexit.register(finalize_at_exit)
    previous_hook = sys.excepthook

    def note_uncaught(*info: Any) -> None:  # runs before the atexit handlers
        mark_failed()
        previous_hook(*info)

    sys.excepthook = note_uncaught
    return MPI


def mark_failed() -> None:
    """A collective of this process could not complete: MPI is not finalized at exit."""
    _state["failed"] = True


def finalize_at_exit() -> None:
    """MPI_Finalize, unless a collective failed (a dead peer could make it wait forever)."""
    MPI = _state["mpi"]
    if MPI is None or _state["failed"] or MPI.Is_finalized() or not MPI.Is_initialized():
        return
    MPI.Finalize()
