"""Which peer processes are still alive, for the ones on this machine.

MPI itself does not say that a peer died: a collective it is part of simply never completes
(MPICH's launcher, by default, kills the whole job instead; see docs/distributed.md). Every
wait therefore has a deadline (PYKERN_TIMEOUT). For the peers on the same machine the wait
also looks at their processes, so that a death is reported at once rather than at the
deadline: at start-up each rank says its host name and process id, and a peer whose process
has gone (or is a zombie) is dead. A peer whose process this one cannot see at start-up (in
another PID namespace, a container) is watched through the deadline only.
"""

from __future__ import annotations

import os
import socket
from typing import Any


class Peers:
    """The ranks of a communicator and, for those on this machine, their process ids."""

    def __init__(self, table: list[tuple[str, int]], rank: int) -> None:
        self.table = table  # (host, pid) of every rank
        host = table[rank][0]
        self.local = {r: pid for r, (h, pid) in enumerate(table)
                      if h == host and r != rank and _alive(pid)}

    @staticmethod
    def exchange(comm: Any) -> Peers:
        """Every rank's host and pid (a blocking allgather: at start-up only)."""
        return Peers(comm.allgather((socket.gethostname(), os.getpid())), comm.Get_rank())

    def dead(self) -> list[int]:
        """The ranks on this machine whose process has ended."""
        return [r for r, pid in self.local.items() if not _alive(pid)]

    def describe(self, rank: int) -> str:
        host, pid = self.table[rank]
        return f"rank {rank} (pid {pid} on {host})"


def _alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X", b"x")
    except FileNotFoundError:
        return False
    except OSError:  # no /proc (macOS): whether a signal could be sent
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
