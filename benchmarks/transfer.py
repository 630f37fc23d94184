"""Host-device transfers in GB/s: a numpy array into an existing device buffer (upload) and
back into an existing numpy array (download), by the wall clock, best of `transfer_reps`.

pykern copies through the persistent mapping where device memory is host-visible (lavapipe; a
GPU's resizable BAR for uploads) and stages through a host-cached buffer otherwise (downloads
from a GPU). numpy's own copy is the host-memory ceiling; torch copies from/to pageable memory.
"""

from __future__ import annotations

import numpy as np

import pykern as pk

from .clock import wall
from .peers import Peers
from .plan import Plan
from .results import Results, Row


def run(plan: Plan, results: Results, peers: Peers) -> None:
    nbytes, reps = plan.transfer_bytes, plan.transfer_reps
    case = f"{nbytes // 2**20} MiB"
    host = np.arange(nbytes // 4, dtype=np.float32)
    back = np.empty_like(host)

    def row(group: str, impl: str, seconds: float) -> None:
        results.add(Row(group, case, impl, nbytes / seconds / 1e9, "GB/s", True, "wall clock"))

    buf = pk.get_device().create_buffer(nbytes)
    row("upload", "pykern Buffer.upload", wall(lambda: buf.upload(host), reps))
    row("download", "pykern Buffer.read_into", wall(lambda: buf.read_into(back), reps))
    if not np.array_equal(back, host):
        results.note("pykern download returned different bytes than were uploaded")
    buf.free()
    row("upload", "numpy copyto (host memcpy)", wall(lambda: np.copyto(back, host), reps))
    row("download", "numpy copyto (host memcpy)", wall(lambda: np.copyto(back, host), reps))
    if peers.cuda:
        results.attempt("torch cuda transfers", lambda: _torch(peers.torch, host, back, reps, row))
    if peers.taichi is not None:
        results.attempt("taichi transfers", lambda: _taichi(peers.taichi, host, reps, row))


def _torch(torch, host: np.ndarray, back: np.ndarray, reps: int, row) -> None:
    src = torch.from_numpy(host)
    dst = torch.empty_like(src, device="cuda")
    out = torch.from_numpy(back)

    def upload() -> None:
        dst.copy_(src)
        torch.cuda.synchronize()

    def download() -> None:
        out.copy_(dst)
        torch.cuda.synchronize()

    row("upload", "torch cuda copy_", wall(upload, reps))
    row("download", "torch cuda copy_", wall(download, reps))


def _taichi(ti, host: np.ndarray, reps: int, row) -> None:
    from . import taichi_kernels as tk

    (field,) = tk.fresh_fields(host.size, 1)

    def upload() -> None:
        field.from_numpy(host)
        ti.sync()

    row("upload", "taichi vulkan from_numpy", wall(upload, reps))
    row("download", "taichi vulkan to_numpy", wall(field.to_numpy, reps))
