"""Host memcpy on several threads: staging a large transfer is a copy between two host buffers,
and one core copies at a fraction of the memory bandwidth (and of a PCIe 5 link).

numpy releases the GIL while it copies plain bytes, so threads of this process run the parts of
one copy at the same time.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np

MIN_PART = 4 * 2**20  # smaller parts cost more in hand-offs than a thread gains
MAX_THREADS = 8


class ParallelCopy:
    """Copies between byte arrays, split into parts copied by a pool of threads."""

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads or max(1, min(MAX_THREADS, os.cpu_count() or 1))
        self._pool: ThreadPoolExecutor | None = None

    def copy(self, dst: np.ndarray, src: np.ndarray) -> None:
        """`dst[:] = src` for two uint8 arrays of one length."""
        n = dst.nbytes
        parts = min(self.threads, n // MIN_PART)
        if parts <= 1:
            np.copyto(dst, src)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="pykern-copy")
        step = -(-n // parts)
        futures = [
            self._pool.submit(np.copyto, dst[i : i + step], src[i : i + step])
            for i in range(step, n, step)
        ]
        try:
            np.copyto(dst[:step], src[:step])  # the calling thread copies the first part
        finally:  # also after an interrupt: no thread may still write once this returns
            wait(futures)
        for future in futures:
            future.result()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
