"""Host-device transfers in GB/s, by the wall clock, best of `transfer_reps`, and how far copies
overlap kernels.

- upload: a pageable numpy array onto the device: `pk.asarray(x)` (a fresh tensor, as
  `torch.from_numpy(x).cuda()`), with `non_blocking=True` (its return alone, and until the data
  are on the device), and `Buffer.upload` into an existing buffer; each timed until the copy
  has finished on the device (`pk.sync()`).
- download: `t.numpy()` (a fresh array: its first touch is in the figure, as in torch's
  `.cpu().numpy()`) and `Buffer.read_into` an existing array.
- On a device with a DMA queue, the import path is measured too (`transfer_import=True`: the
  numpy array's pages imported instead of staged).
- overlap: an upload and a download of the same size, kernels taking about as long, and both
  at once; the ratio of the sum of the two alone to the time of both together (2 = full
  overlap, 1 = none).

numpy's own copy is the host-memory ceiling; torch copies from/to pageable and pinned memory.
"""

from __future__ import annotations

import numpy as np

import pykern as pk
import pykern.runtime as rt

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

    device = pk.get_device()
    _pykern(device, host, back, reps, row, results, "pykern")
    if getattr(device, "_transfers", None) is not None:
        imported = rt.open_device(device.info.index, transfer_import=True)
        try:
            _buffers(imported, host, back, reps, row, results, "pykern imported")
        finally:
            imported.close()
    row("upload", "numpy copyto (host memcpy)", wall(lambda: np.copyto(back, host), reps))
    row("download", "numpy copyto (host memcpy)", wall(lambda: np.copyto(back, host), reps))
    results.attempt("pykern overlap", lambda: _overlap(device, host, back, results, case))
    if peers.cuda:
        results.attempt("torch cuda transfers", lambda: _torch(peers.torch, host, back, reps, row))
    if peers.taichi is not None:
        results.attempt("taichi transfers", lambda: _taichi(peers.taichi, host, reps, row))


def _pykern(device, host, back, reps, row, results, label) -> None:
    """pk.asarray (blocking, non_blocking) and t.numpy(), then the Buffer-level figures."""
    def asarray(non_blocking: bool) -> None:
        pk.asarray(host, non_blocking=non_blocking)
        pk.sync()

    row("upload", f"{label} pk.asarray", wall(lambda: asarray(False), reps))
    row("upload", f"{label} pk.asarray non_blocking", wall(lambda: asarray(True), reps))
    kept: list[object] = []

    def returns() -> None:  # the call alone; the copy finishes while the next one is timed
        kept.append(pk.asarray(host, non_blocking=True))

    row("upload", f"{label} asarray non_blocking (return)", wall(returns, reps))
    pk.sync()
    kept.clear()
    t = pk.asarray(host)
    row("download", f"{label} t.numpy()", wall(t.numpy, reps))
    if not np.array_equal(t.numpy(), host):
        results.fail(f"{label}: t.numpy() returned different bytes than were uploaded")
    del t
    _buffers(device, host, back, reps, row, results, label)


def _buffers(device, host, back, reps, row, results, label) -> None:
    buf = device.create_buffer(host.nbytes)

    def upload() -> None:
        buf.upload(host)
        device.sync()

    row("upload", f"{label} Buffer.upload", wall(upload, reps))
    row("download", f"{label} Buffer.read_into", wall(lambda: buf.read_into(back), reps))
    if not np.array_equal(back, host):
        results.fail(f"{label}: download returned different bytes than were uploaded")
    buf.free()


def _overlap(device, host, back, results: Results, case: str) -> None:
    """Wall time of copies and kernels alone and together; the sum over the together time."""
    buf = device.create_buffer(host.nbytes)
    work = pk.asarray(np.ones(min(host.size, 2**24), np.float32))

    def copies() -> None:
        buf.upload(host)
        buf.read_into(back)

    def kernels(count: int) -> None:
        nonlocal work
        for _ in range(count):
            work = work * 1.0
        pk.sync()

    copy_s = wall(copies, 2)
    per_kernel = wall(lambda: kernels(20), 2) / 20
    count = max(1, min(5000, int(copy_s / per_kernel)))
    kernel_s = wall(lambda: kernels(count), 2)

    def both() -> None:
        nonlocal work
        for _ in range(count):
            work = work * 1.0
        copies()  # the kernels recorded above are submitted first, then run meanwhile
        pk.sync()

    both_s = wall(both, 2)
    ratio = (copy_s + kernel_s) / both_s
    extra = {"copy_ms": copy_s * 1e3, "kernels_ms": kernel_s * 1e3, "both_ms": both_s * 1e3,
             "kernels": count}
    results.add(Row("overlap", case, "pykern (copy + kernels) / both", ratio, "x", True,
                    "wall clock", extra))
    buf.free()


def _torch(torch, host: np.ndarray, back: np.ndarray, reps: int, row) -> None:
    src = torch.from_numpy(host)
    dst = torch.empty_like(src, device="cuda")
    out = torch.from_numpy(back)

    def sync(fn):
        def timed() -> None:
            fn()
            torch.cuda.synchronize()
        return timed

    row("upload", "torch from_numpy(x).cuda()", wall(sync(lambda: src.cuda()), reps))
    row("upload", "torch cuda copy_ (pageable)", wall(sync(lambda: dst.copy_(src)), reps))
    row("download", "torch .cpu().numpy()", wall(sync(lambda: dst.cpu().numpy()), reps))
    row("download", "torch cuda copy_ (pageable)", wall(sync(lambda: out.copy_(dst)), reps))
    pinned = src.pin_memory()
    pinned_out = torch.empty_like(src).pin_memory()
    row("upload", "torch copy_ (pinned, non_blocking)",
        wall(sync(lambda: dst.copy_(pinned, non_blocking=True)), reps))
    row("download", "torch copy_ (pinned, non_blocking)",
        wall(sync(lambda: pinned_out.copy_(dst, non_blocking=True)), reps))


def _taichi(ti, host: np.ndarray, reps: int, row) -> None:
    from . import taichi_kernels as tk

    (field,) = tk.fresh_fields(host.size, 1)

    def upload() -> None:
        field.from_numpy(host)
        ti.sync()

    row("upload", "taichi vulkan from_numpy", wall(upload, reps))
    row("download", "taichi vulkan to_numpy", wall(field.to_numpy, reps))
