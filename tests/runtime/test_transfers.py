"""Copies through the DMA (transfer) queue: correctness of the overlapped paths, and (on a
device with a transfer-only queue family) that copies and kernels really run at once.

lavapipe has no transfer-only family, so the DMA path runs there on a queue of the compute
family (`transfer_queue="compute"`), with staged storage (`force_staging`) as on a discrete
GPU. Synchronisation validation watches every test (see conftest.py): a missing semaphore wait
or barrier between the queues is a validation error even where the numbers come out right.
"""

from __future__ import annotations

import numpy as np
import pykern.runtime as rt
import pytest
from pykern.runtime import BufferSlot
from pykern.runtime.config import Config
from pykern.runtime.transfer.transfer_queue import TimestampTrace
from rt_helpers import args_for, layout_of, slots, spin_result, spv

MIB = 2**20


@pytest.fixture(scope="module", params=["import", "staged"])
def dma(request):
    """A device whose host-device copies go through the DMA path, importing numpy arrays'
    pages where it can ("import") or always through staging ("staged")."""
    device = rt.open_device(
        transfer_queue="compute", force_staging=True, transfer_import=request.param == "import"
    )
    assert device._transfers is not None
    yield device
    device.close()


@pytest.fixture
def small_pieces(dma):
    """Pieces of 256 KiB, two in flight, from 64 KiB on: many interleaved pieces."""
    t = dma._transfers
    saved = t.piece_bytes, t.depth, t.min_bytes
    t.piece_bytes, t.depth, t.min_bytes = 256 * 1024, 2, 64 * 1024
    yield t
    t.piece_bytes, t.depth, t.min_bytes = saved


def affine(device, n):
    """dst = scale * src + shift over n floats."""
    layout = layout_of(
        [BufferSlot(0, "src", writable=False), BufferSlot(1, "dst", readable=False)],
        [("scale", "f"), ("shift", "f")],
        (64, 1, 1),
    )
    program = device.create_program(spv("affine"), layout)
    return lambda src, dst, scale, shift: device.launch(
        program, (n,), [src, dst], args_for(layout, scale, shift)
    )


def counts_exact(device) -> bool:
    """Whether the semaphore waits counted below are exact: a GPU may have finished the kernel
    a copy would wait for before the copy is submitted (then it does not wait), a CPU
    implementation as slow as lavapipe never has."""
    return device.info.kind == "cpu"


def data(n, seed=0):
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


@pytest.mark.parametrize("nbytes", [4, 64 * 1024 - 4, 3 * MIB + 12, 20 * MIB])
@pytest.mark.parametrize("skew", [0, 4])
def test_round_trip(dma, nbytes, skew):
    """Small copies (the compute-queue path) and large ones (DMA), from and to arrays that
    start on a page boundary or not (the import covers only the aligned interior)."""
    src = np.frombuffer(np.random.default_rng(1).bytes(nbytes + skew), np.uint8)[skew:]
    buf = dma.create_buffer(nbytes)
    buf.upload(src)
    out = np.zeros(nbytes + 2 * skew, np.uint8)[skew : skew + nbytes]
    np.testing.assert_array_equal(buf.read_into(out), src)
    tail = min(16, nbytes)
    assert buf.download(tail, nbytes - tail) == src[-tail:].tobytes()
    buf.free()


def test_large_arrays_are_imported_not_staged(dma, monkeypatch):
    """Where the driver can import host memory, a large copy reads and writes the array's own
    pages; a refused import falls back to staging with the same result."""
    importer = dma._transfers.host_import
    if importer is None:
        pytest.skip("staged device (transfer_import=False)")
    x = data(6 * MIB + 3)
    buf = dma.create_buffer(x.nbytes)
    before = importer.imports
    buf.upload(x)
    out = buf.read_into(np.empty_like(x))
    assert importer.imports == before + 2
    np.testing.assert_array_equal(out, x)
    monkeypatch.setattr(importer, "wrap", lambda address, nbytes: None)  # the driver refuses
    buf.upload(x[::-1].copy())
    np.testing.assert_array_equal(buf.read_into(np.empty_like(x)), x[::-1])
    assert importer.imports == before + 2
    buf.free()


def test_large_copies_take_the_dma_queue(dma):
    submitted = dma._transfers.queue.submitted
    buf = dma.create_buffer(4 * MIB)
    buf.upload(np.ones(MIB, np.float32))
    assert dma._transfers.queue.submitted > submitted
    buf.free()


def test_kernel_reads_what_an_upload_wrote(dma, small_pieces):
    n = MIB
    run = affine(dma, n)
    x = data(n)
    src, dst = dma.create_buffer(4 * n), dma.create_buffer(4 * n)
    src.upload(x)
    run(src, dst, 2.0, 1.0)
    np.testing.assert_array_equal(dst.read_into(np.empty(n, np.float32)), 2 * x + 1)
    src.free()
    dst.free()


def test_upload_after_a_kernel_that_reads_the_buffer(dma, small_pieces):
    """Write after read across the queues: the upload waits for the kernel recorded before it
    that still reads the old contents; the kernel after it sees the new ones."""
    n = MIB
    run = affine(dma, n)
    x, y = data(n, 1), data(n, 2)
    src = dma.create_buffer(4 * n)
    first, second = dma.create_buffer(4 * n), dma.create_buffer(4 * n)
    src.upload(x)
    run(src, first, 3.0, 0.0)
    src.upload(y)  # the open batch (with the kernel reading x) is submitted first
    run(src, second, 3.0, 0.0)
    np.testing.assert_array_equal(first.read_into(np.empty(n, np.float32)), 3 * x)
    np.testing.assert_array_equal(second.read_into(np.empty(n, np.float32)), 3 * y)
    for b in (src, first, second):
        b.free()


def spin(device, n):
    """A kernel that runs long (about a second on lavapipe at n = 2**17) writing `out`."""
    layout = layout_of(slots("result", writable=("result",)), [], (64, 1, 1))
    program = device.create_program(spv("spin"), layout)
    return lambda out: device.launch(program, (n,), [out], args_for(layout))


def test_upload_over_a_buffer_a_kernel_writes(dma, small_pieces):
    """Write after write: the upload waits, on the device, for the kernel still writing the
    buffer, and the kernel after the upload waits for the upload. (Debian 12's validation layer
    checks hazards inside a command buffer only, and lavapipe runs submissions in order, so the
    semaphore waits counted are the check that the queues are synchronised.)"""
    n = 1 << 17
    run = affine(dma, n)
    t = dma._transfers
    dst, result = dma.create_buffer(4 * n), dma.create_buffer(4 * n)
    spin(dma, n)(dst)
    dma._batches.submit()
    before = t.queue.compute_waits, t.upload_waits
    y = data(n, 3)
    dst.upload(y)
    run(dst, result, 2.0, 0.0)
    dma._batches.submit()
    waits = (t.queue.compute_waits - before[0], t.upload_waits - before[1])
    assert waits == (2, 1) if counts_exact(dma) else waits <= (2, 1)
    np.testing.assert_array_equal(dst.read_into(np.empty(n, np.float32)), y)
    np.testing.assert_array_equal(result.read_into(np.empty(n, np.float32)), 2 * y)
    dst.free()
    result.free()


def test_download_waits_for_the_kernel_writing_the_buffer(dma, small_pieces):
    """A download of a buffer a kernel is still writing (recorded, not even submitted) waits
    for exactly that kernel, on the device."""
    n = 1 << 17
    out = dma.create_buffer(4 * n)
    spin(dma, n)(out)
    before = dma._transfers.queue.compute_waits
    np.testing.assert_array_equal(out.read_into(np.empty(n, np.uint32)), spin_result(n))
    waits = dma._transfers.queue.compute_waits - before
    assert waits == 2 if counts_exact(dma) else waits <= 2  # two pieces
    out.free()


def test_many_interleaved_pieces(dma, small_pieces):
    """Uploads, kernels and downloads of several buffers interleaved, each copy in many
    pieces: every result is the one the program order gives."""
    n = 1 << 18
    run = affine(dma, n)
    bufs = [dma.create_buffer(4 * n) for _ in range(3)]
    host = [data(n, i) for i in range(3)]
    for b, h in zip(bufs, host):
        b.upload(h)
    for step in range(4):
        a, b, c = bufs[step % 3], bufs[(step + 1) % 3], bufs[(step + 2) % 3]
        ha, hc = host[step % 3], host[(step + 2) % 3]
        run(a, b, 0.5, float(step))
        host[(step + 1) % 3] = np.float32(0.5) * ha + np.float32(step)
        np.testing.assert_array_equal(c.read_into(np.empty(n, np.float32)), hc)
        fresh = data(n, 10 + step)
        c.upload(fresh)
        host[(step + 2) % 3] = fresh
    for b, h in zip(bufs, host):
        np.testing.assert_array_equal(b.read_into(np.empty(n, np.float32)), h)
        b.free()


def test_non_blocking_upload_then_use(dma, small_pieces):
    """non_blocking returns with the data in staging: changing the array afterwards changes
    nothing; a kernel and a download after it see what was uploaded."""
    n = MIB
    run = affine(dma, n)
    x = data(n)
    expected = x.copy()
    src, dst = dma.create_buffer(4 * n), dma.create_buffer(4 * n)
    src.upload(x, non_blocking=True)
    x[:] = -1.0
    run(src, dst, 1.0, 2.0)
    np.testing.assert_array_equal(src.read_into(np.empty(n, np.float32)), expected)
    np.testing.assert_array_equal(dst.read_into(np.empty(n, np.float32)), expected + 2)
    src.free()
    dst.free()


def test_free_while_a_copy_runs(dma, small_pieces):
    """A buffer freed right after a non-blocking upload into it is kept for reuse (the next
    buffer of its size gets it, the first copy still running: the second lands after it), and
    released after the copy when memory runs short."""
    for i in range(3):
        buf = dma.create_buffer(4 * MIB)
        buf.upload(data(MIB, i), non_blocking=True)
        buf.free()
    again = dma.create_buffer(4 * MIB)
    again.upload(data(MIB, 7), non_blocking=True)
    np.testing.assert_array_equal(again.read_into(np.empty(MIB, np.float32)), data(MIB, 7))
    again.free()
    dma.sync()
    dma._reclaim()
    assert not dma._transfers._last_use


def test_without_a_transfer_only_family_copies_stay_on_the_compute_queue():
    """lavapipe has no such family: the default ("auto") keeps the compute-queue path."""
    device = rt.get_device()
    has_dma_family = device._transfers is not None
    assert has_dma_family == (device.transfer_queue is not None)
    off = rt.open_device(transfer_queue="off")
    assert off._transfers is None
    off.close()


def test_transfer_queue_setting():
    assert Config.from_env({"PYKERN_TRANSFER_QUEUE": "compute"}).transfer_queue == "compute"
    assert Config.from_env({}).transfer_queue == "auto"
    assert not Config.from_env({"PYKERN_TRANSFER_IMPORT": "0"}).transfer_import
    with pytest.raises(rt.DeviceError, match="PYKERN_TRANSFER_QUEUE='dma' is none of"):
        Config.from_env({"PYKERN_TRANSFER_QUEUE": "dma"})


def test_copies_overlap_kernels():
    """GPU timestamps on both queues: a copy's interval intersects a kernel's."""
    device = rt.get_device()
    transfers = device._transfers
    if transfers is None or transfers.queue.family == device.family:
        pytest.skip(f"{device.info.name} has no transfer-only queue family")
    n = 1 << 24
    layout = layout_of(slots("result", writable=("result",)), [], (64, 1, 1))
    program = device.create_program(spv("spin"), layout)
    out = device.create_buffer(4 * n)
    host = np.ones(64 * MIB, np.uint8)
    copied = device.create_buffer(host.nbytes)
    copied.upload(host)  # the staging pieces made (pinning memory takes longer than the kernel)
    copied.read_into(host)
    device.sync()
    trace = transfers.queue.trace = TimestampTrace(device.handle, device.fn)
    try:
        batches = device._batches
        batch = batches.current()
        batch.commands += 1
        trace.write(batch.cmd)
        device.launch(program, (n,), [out], args_for(layout))
        trace.write(batches.current().cmd)
        batches.submit()
        for _ in range(4):
            copied.upload(host)
            copied.read_into(host)
        device.sync()
        ticks = trace.read()
    finally:
        transfers.queue.trace = None
        trace.destroy()
    kernel = (ticks[0], ticks[1])
    copies = list(zip(ticks[2::2], ticks[3::2]))
    assert any(start < kernel[1] and end > kernel[0] for start, end in copies), (kernel, copies)
    out.free()
    copied.free()
