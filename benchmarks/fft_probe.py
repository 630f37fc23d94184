"""`python benchmarks/fft_probe.py [device] [case,...]`: GPU time of `pk.fft` plans, whole and
per launch, under variants of the plans' tuning constants (pykern/fft/radix_plan.py:
ROW_INVOCATIONS, COLUMN_GROUP, COLUMN_INVOCATIONS, PAD, MAX_RADIX; pykern/fft/engine.py:
LAST_GROUP), against a plain copy of the same bytes (the bandwidth a pass in and out could
reach). Every result is checked against numpy.

Per launch: the plan's kernel launches are recorded during one call, then each is replayed
alone with GPU timestamps; "other" is the rest of the call (copies, pointwise launches).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pykern as pk  # noqa: E402
from pykern.fft import engine, radix_plan  # noqa: E402
from pykern.tensor.core import dispatch  # noqa: E402

from benchmarks.clock import gpu_per_call  # noqa: E402

REPS = 20
CASES: tuple[tuple[str, tuple[int, ...], bool], ...] = (
    ("fft 2^24", (2**24,), False),
    ("fft 1024x4096", (1024, 4096), False),
    ("fft 4096x1000", (4096, 1000), False),
    ("fft 4096x1024", (4096, 1024), False),
    ("fft 64x10007", (64, 10007), False),
    ("rfft2 2048x2048", (2048, 2048), True),
)
VARIANTS: tuple[tuple[str, dict[tuple[object, str], object]], ...] = (
    ("default", {}),
    ("max radix 8", {(radix_plan, "MAX_RADIX"): 8}),
    ("row invocations 256", {(radix_plan, "ROW_INVOCATIONS"): 256}),
    ("row invocations 512", {(radix_plan, "ROW_INVOCATIONS"): 512}),
    ("no pad", {(radix_plan, "PAD"): False}),
    ("last group 8", {(engine, "LAST_GROUP"): 8}),
    ("column invocations 512", {(radix_plan, "COLUMN_INVOCATIONS"): 512}),
)
_REFERENCES: dict[str, np.ndarray] = {}  # numpy's f64 transform of each case, computed once


def data(shape: tuple[int, ...], real: bool) -> np.ndarray:
    rng = np.random.default_rng(0)
    if real:
        return rng.standard_normal(shape, dtype=np.float32)
    return (rng.standard_normal(shape, dtype=np.float32)
            + 1j * rng.standard_normal(shape, dtype=np.float32)).astype(np.complex64)


def recorded_launches(work: Callable[[], object]) -> list[tuple[tuple, dict]]:
    """The arguments of every kernel launch of `engine.launch` during one call of `work`."""
    calls: list[tuple[tuple, dict]] = []
    original = engine.launch

    def record(*args: object, **kwargs: object) -> None:
        calls.append((args, kwargs))
        original(*args, **kwargs)

    engine.launch = record  # type: ignore[assignment]
    try:
        dispatch.clear()
        work()
    finally:
        engine.launch = original  # type: ignore[assignment]
        dispatch.clear()
    return calls


def describe(args: tuple) -> str:
    shape, x, out = args[0], args[1], args[2]
    return (f"n={shape.n} radices={shape.radices} threads={shape.threads} "
            f"group={shape.groups} cols={shape.columns} across={shape.stores_across} "
            f"pad={shape.pad} mode={shape.mode} batch={out.shape[0]}x{out.shape[1]} "
            f"in_strides={x.element_strides} out_strides={out.element_strides}")


def probe_case(dev: object, name: str, shape: tuple[int, ...], real: bool) -> None:
    x = data(shape, real)
    t = pk.asarray(x)
    work: Callable[[], pk.Tensor] = ((lambda: pk.fft.rfft2(t)) if real
                                     else (lambda: pk.fft.fft(t)))
    seconds, out = gpu_per_call(dev, work, REPS)
    start = time.perf_counter()
    for _ in range(REPS):
        work()
    host = (time.perf_counter() - start) / REPS
    dev.sync()  # type: ignore[attr-defined]
    if name not in _REFERENCES:
        _REFERENCES[name] = (np.fft.rfft2(x.astype(np.float64)) if real
                             else np.fft.fft(x.astype(np.complex128)))
    want = _REFERENCES[name]
    err = float(np.max(np.abs(out.numpy() - want)) / np.max(np.abs(want)))
    gbs = 2 * x.nbytes / seconds / 1e9
    print(f"  {name:18s} {seconds * 1e6:10.1f} us  {gbs:7.0f} GB/s  rel err {err:.2e}   "
          f"(the host records a call in {host * 1e6:.1f} us)", flush=True)
    total = 0.0
    for args, kwargs in recorded_launches(work):
        each, _ = gpu_per_call(dev, lambda a=args, k=kwargs: engine.launch(*a, **k), REPS)
        total += each
        print(f"      {each * 1e6:9.1f} us  {describe(args)}", flush=True)
    print(f"      {(seconds - total) * 1e6:9.1f} us  other", flush=True)


def copy_reference(dev: object) -> None:
    for n in (2**24, 2**22):
        src = pk.asarray(data((n,), False))
        seconds, _ = gpu_per_call(dev, lambda s=src: s.copy(), REPS)
        print(f"  copy {n} c64: {seconds * 1e6:.1f} us ({2 * 8 * n / seconds / 1e12:.2f} TB/s)")


def warm_up(dev: object) -> None:
    """As `python -m benchmarks` does before its FFT cases: torch's CUDA context up (it keeps the
    GPU's clocks up), then a second of FFTs."""
    try:
        import torch
        if torch.cuda.is_available():
            torch.zeros(1, device="cuda")
    except ImportError:
        pass
    t = pk.asarray(data((1024, 4096), False))
    gpu_per_call(dev, lambda: pk.fft.fft(t), 200)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1]:
        pk.set_device(sys.argv[1])
    dev = pk.get_device()
    print(f"device: {dev.info.name}; shared capacity c64 {engine.shared_capacity(pk.f32)}")
    warm_up(dev)
    copy_reference(dev)
    only = sys.argv[2].split(",") if len(sys.argv) > 2 else None
    variants = sys.argv[3].split(",") if len(sys.argv) > 3 else None
    for label, knobs in VARIANTS:
        if variants is not None and label not in variants:
            continue
        saved = {key: getattr(*key) for key in knobs}
        for (module, attr), value in knobs.items():
            setattr(module, attr, value)
        dispatch.clear()
        print(f"== {label}", flush=True)
        try:
            for name, shape, real in CASES:
                if only is None or any(o in name for o in only):
                    probe_case(dev, name, shape, real)
        finally:
            for (module, attr), value in saved.items():
                setattr(module, attr, value)
            dispatch.clear()


if __name__ == "__main__":
    main()
