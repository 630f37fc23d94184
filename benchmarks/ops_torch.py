"""The torch side of the `ops` benchmark: like-for-like precision settings, and its timing.

On CUDA the op is timed with CUDA events around the calls (GPU time, as pykern's timestamps);
on any other torch device (the CPU build, to try this code path where there is no GPU) by the
wall clock, since its work is done when the call returns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .clock import cuda_per_call, wall_per_call

# (module path under torch.backends, flag, value while the benchmark runs): f32 matmul and
# convolutions in full f32 (no TF32), f16/bf16 GEMMs reducing in f32 as pykern does, and cuDNN
# free to pick its fastest algorithm per shape
SETTINGS = (
    ("cuda.matmul", "allow_tf32", False),
    ("cudnn", "allow_tf32", False),
    ("cuda.matmul", "allow_fp16_reduced_precision_reduction", False),
    ("cuda.matmul", "allow_bf16_reduced_precision_reduction", False),
    ("cudnn", "benchmark", True),
)


@contextmanager
def like_for_like(torch: object) -> Iterator[dict[str, object]]:
    """torch's precision flags set as SETTINGS says for the block, restored after it; yields
    the flags that were set (a torch without one of them leaves it out)."""
    saved: list[tuple[object, str, object]] = []
    applied: dict[str, object] = {}
    for path, flag, value in SETTINGS:
        owner = _backend(torch, path)
        if owner is None or not hasattr(owner, flag):
            continue
        saved.append((owner, flag, getattr(owner, flag)))
        setattr(owner, flag, value)
        applied[f"torch.backends.{path}.{flag}"] = value
    try:
        yield applied
    finally:
        for owner, flag, value in reversed(saved):
            setattr(owner, flag, value)


def _backend(torch: object, path: str) -> object | None:
    owner = getattr(torch, "backends", None)
    for part in path.split("."):
        owner = getattr(owner, part, None)
    return owner


def per_call(torch: object, device: str, work: Callable[[], object],
             reps: int) -> tuple[float, object, str]:
    """Seconds per call of `work` on `device`, the last result, and how it was timed."""
    if device.startswith("cuda"):
        seconds, result = cuda_per_call(torch, work, reps)
        return seconds, result, "cuda events"
    seconds, result = wall_per_call(work, reps)
    return seconds, result, "wall clock"


def release(torch: object, device: str) -> None:
    """Gives cached device memory back after a case (the next one may need it)."""
    if device.startswith("cuda"):
        torch.cuda.empty_cache()  # type: ignore[attr-defined]
