"""Measures upload and download bandwidth through the mapping and through staging.

    python tests/runtime/measure_transfer.py [MiB]

(`python -m benchmarks --only transfer` measures the same next to numpy, torch and Taichi.)
"""

from __future__ import annotations

import os
import sys
import time

os.environ.pop("PYKERN_VALIDATE", None)

import numpy as np  # noqa: E402

import pykern.runtime as rt  # noqa: E402


def bandwidth(device: rt.Device, nbytes: int, repeats: int = 5) -> tuple[float, float]:
    """GB/s of upload and of download (best of `repeats`)."""
    data = np.random.default_rng(0).integers(0, 255, nbytes, dtype=np.uint8)
    out = np.empty_like(data)
    buf = device.create_buffer(nbytes)
    up = down = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        buf.upload(data)
        device.sync()
        up = min(up, time.perf_counter() - t)
        t = time.perf_counter()
        buf.read_into(out)
        down = min(down, time.perf_counter() - t)
    assert (out == data).all()
    buf.free()
    return nbytes / up / 1e9, nbytes / down / 1e9


def main(mib: int | None = None) -> None:
    devices = [("default", rt.get_device()), ("staged", rt.open_device(force_staging=True))]
    if mib is None:  # 256 MiB, or what one buffer may hold (128 MiB on lavapipe)
        mib = min(256, devices[0][1].limits.max_storage_buffer_range // 2**20)
    nbytes = mib * 2**20
    for label, device in devices:
        mapped = device.allocator.storage_mapped
        up, down = bandwidth(device, nbytes)
        print(f"{device.info.name}, {label} (storage mapped: {mapped}), {mib} MiB: "
              f"upload {up:.2f} GB/s, download {down:.2f} GB/s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else None)
