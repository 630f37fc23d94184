"""`ProcessGroup`: the processes that train together, their MPI communicator, and the default
group that `init_process_group` makes.

One process per device: `mpirun -n N python train.py` starts N copies of a program, each of
which calls `init_process_group(backend="mpi")`. The group keeps a duplicate of
MPI_COMM_WORLD (so that the program's own mpi4py calls on COMM_WORLD never mix with pykern's),
the rank, the size, the local rank (the rank among the processes of this machine, from an
MPI_Comm_split_type of the shared-memory kind), the timeout of every wait (PYKERN_TIMEOUT
unless `timeout=` says otherwise), and whether a collective failed (then every later one
raises at once: the communicator may hold transfers that will never complete).
"""

from __future__ import annotations

import datetime
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pykern.distributed import mpi
from pykern.distributed.peers import Peers
from pykern.errors import DistributedError
from pykern.runtime import devices, set_device
from pykern.runtime.config import Config

BACKENDS = ("mpi",)


class ProcessGroup:
    """The processes of one MPI communicator (`comm`, duplicated here: the group owns it)."""

    def __init__(self, comm: Any, timeout: float) -> None:
        self.MPI = mpi.load()
        self.comm = comm.Dup()
        self.rank: int = self.comm.Get_rank()
        self.size: int = self.comm.Get_size()
        local = self.comm.Split_type(self.MPI.COMM_TYPE_SHARED, key=self.rank)
        self.local_rank: int = local.Get_rank()
        self.local_size: int = local.Get_size()
        local.Free()
        self.timeout = timeout
        self.peers = Peers.exchange(self.comm)
        self.sequence = 0  # collectives checked so far (signature.py)
        self.failure: str | None = None
        self._abandoned: list[object] = []  # memory that failed transfers may still write
        self._io: ThreadPoolExecutor | None = None

    def __repr__(self) -> str:
        return f"<ProcessGroup rank {self.rank} of {self.size} (mpi)>"

    def split(self) -> ProcessGroup:
        """A group of the same processes with a communicator of its own (data-parallel
        training communicates from its own thread: its collectives must never interleave
        with the program's)."""
        return ProcessGroup(self.comm, self.timeout)

    @property
    def io(self) -> ThreadPoolExecutor:
        """The thread that copies between device and host while MPI transfers run."""
        if self._io is None:
            self._io = ThreadPoolExecutor(1, thread_name_prefix="pykern-dist-io")
        return self._io

    def check_usable(self) -> None:
        """DistributedError if the group was destroyed or a collective of it failed."""
        if self.comm is None:
            raise DistributedError("the process group was destroyed")
        if self.failure is not None:
            raise DistributedError(f"the process group is unusable since an earlier "
                                   f"collective failed ({self.failure}); end the process")

    def fail(self, reason: str, keep: tuple[object, ...] = ()) -> DistributedError:
        """Marks the group failed (for good), keeps `keep` alive (MPI may still write into
        it) and returns the error to raise."""
        if self.failure is None:
            self.failure = reason
        self._abandoned.extend(keep)
        mpi.mark_failed()
        return DistributedError(f"rank {self.rank}: {reason}")

    def destroy(self) -> None:
        """Frees the communicator (not after a failure: it may hold transfers in flight)."""
        if self._io is not None:
            self._io.shutdown(wait=self.failure is None)
            self._io = None
        if self.comm is not None and self.failure is None:
            self.comm.Free()
        self.comm = None


_default: list[ProcessGroup | None] = [None]


def default_group(what: str = "this call") -> ProcessGroup:
    """The group init_process_group made; DistributedError naming `what` before it."""
    group = _default[0]
    if group is None:
        raise DistributedError(f"{what} needs a process group: call "
                               "pykern.distributed.init_process_group(backend='mpi') first")
    return group


def init_process_group(backend: str = "mpi", *, timeout: datetime.timedelta | float | None
                       = None, device_id: int | str | None = None, **ignored: Any) -> None:
    """Joins this process to the default group: every process of the MPI job (started by
    `mpirun -n N python train.py`, or alone as a group of one). Then picks this process's
    device (see `choose_device`). `timeout` (a timedelta or seconds) bounds every wait of a
    collective; default PYKERN_TIMEOUT. torch's `init_method`, `world_size`, `rank` and
    `store` are accepted and ignored: MPI's launcher decides them."""
    if backend != "mpi":
        raise ValueError(f"backend {backend!r}: pykern.distributed runs on MPI only "
                         "(backend='mpi')")
    if _default[0] is not None:
        raise DistributedError("init_process_group was called twice (call "
                               "destroy_process_group first)")
    unknown = set(ignored) - {"init_method", "world_size", "rank", "store", "group_name",
                              "pg_options"}
    if unknown:
        raise TypeError(f"init_process_group: unexpected argument(s) {', '.join(unknown)}")
    seconds = Config.from_env().timeout if timeout is None else (
        timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout))
    if seconds <= 0:
        raise ValueError(f"init_process_group: timeout must be positive, got {seconds}")
    MPI = mpi.load()
    group = ProcessGroup(MPI.COMM_WORLD, seconds)
    _default[0] = group
    choose_device(group.local_rank, device_id)


def choose_device(local_rank: int, device_id: int | str | None) -> None:
    """This process's device: `device_id` where given (an index or name, as pk.set_device
    takes); else the device PYKERN_DEVICE names (the same for every rank); else the GPUs in
    the default order, by local rank modulo their count; else the default device (the host
    device where no GPU is found)."""
    if device_id is not None:
        set_device(device_id)
        return
    if Config.from_env().device is not None:
        return  # get_device() opens what PYKERN_DEVICE names
    index = gpu_for(local_rank, devices())
    if index is not None:
        set_device(index)
    # else the default device: the host device where no GPU is found


GPU_KINDS = ("discrete", "integrated", "virtual")


def gpu_for(local_rank: int, infos: list[Any]) -> int | None:
    """The index of the GPU of local rank `local_rank`: the machine's GPUs in the default
    order (discrete, integrated, virtual; then by index), local rank modulo their count; None
    where there is none."""
    gpus = sorted((i for i in infos if i.kind in GPU_KINDS),
                  key=lambda i: (GPU_KINDS.index(i.kind), i.index))
    return gpus[local_rank % len(gpus)].index if gpus else None


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Leaves the default group (or frees `group`): init_process_group may be called again.
    MPI itself stays initialised until the process exits."""
    target = group if group is not None else _default[0]
    if target is None:
        return
    target.destroy()
    if target is _default[0]:
        _default[0] = None


def is_initialized() -> bool:
    """Whether init_process_group has made the default group (and it was not destroyed)."""
    return _default[0] is not None


def is_available() -> bool:
    """Whether mpi4py (and so an MPI library) can be imported."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in the group, 0 to world size - 1."""
    return (group or default_group("get_rank()")).rank


def get_world_size(group: ProcessGroup | None = None) -> int:
    """How many processes the group has."""
    return (group or default_group("get_world_size()")).size


def get_local_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank among the group's processes on this machine (what picks its
    device)."""
    return (group or default_group("get_local_rank()")).local_rank


def get_local_world_size(group: ProcessGroup | None = None) -> int:
    """How many of the group's processes run on this machine."""
    return (group or default_group("get_local_world_size()")).local_size
