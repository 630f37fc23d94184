"""One case of the `ops` benchmark (`OpCase`), and moving its data between numpy, pykern and
torch.

Inputs are made on the host as numpy arrays whose values the case's dtype holds exactly (f16
and bf16 values are rounded on the host first), so that pykern, torch and the float64
reference all start from the same numbers. bf16, which numpy lacks, travels as f32 and is
converted on the device.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

import pykern as pk

from .ops_check import Check

HOST_DTYPES = {"f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64,
               "i8": np.int8, "i32": np.int32}
TORCH_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
                "i8": "int8", "i32": "int32"}


@dataclass
class OpCase:
    """What one line of the `ops` table measures.

    `inputs` makes the host arrays; `pykern` and `torch` run the op on device copies of them,
    as a user calls it (`torch` is None where torch has no such op); `check` compares a pykern
    result with a float64 reference computed from the host arrays. `work` is the FLOPs (or
    bytes) of one call, counted as `unit` says.
    """

    group: str
    case: str
    dtype: str
    unit: str  # "TFLOP/s" or "GB/s"
    work: float
    inputs: Callable[[], Sequence[np.ndarray]]
    pykern: Callable[[Sequence[pk.Tensor]], pk.Tensor]
    torch: Callable[[object, Sequence[object]], object] | None
    check: Callable[[Sequence[np.ndarray], pk.Tensor], Check]

    def rate(self, seconds: float) -> float:
        """TFLOP/s or GB/s at `seconds` per call."""
        scale = 1e12 if self.unit == "TFLOP/s" else 1e9
        return self.work / seconds / scale


def pk_dtype(name: str) -> pk.DType | None:
    """pykern's dtype of that name, or None where this pykern has none (`bf16` is new)."""
    dtype = getattr(pk, name, None)
    return dtype if isinstance(dtype, pk.DType) else None


def unusable(name: str) -> str | None:
    """Why tensors of dtype `name` cannot be used on the current device, or None if they can
    (a round trip through the device is tried: the device may lack the feature)."""
    dtype = pk_dtype(name)
    if dtype is None:
        return f"this pykern has no pk.{name}"
    try:
        probe = pk.asarray(np.arange(4, dtype=np.float32)).astype(dtype)
        back = probe.astype(pk.f32).numpy()
    except Exception as e:  # noqa: BLE001 - whatever the device refuses, it is a skip
        return f"{type(e).__name__}: {str(e).strip()[:160]}"
    if not np.array_equal(back, np.arange(4, dtype=np.float32)):
        return f"a round trip of pk.{name} through the device changed the values"
    return None


def host_random(rng: np.random.Generator, shape: tuple[int, ...], name: str) -> np.ndarray:
    """Random values for dtype `name`, exactly representable in it: standard normal floats
    (rounded to f16 or bf16) or integers in [-8, 8)."""
    if name.startswith("i"):
        return rng.integers(-8, 8, size=shape, dtype=np.int8).astype(HOST_DTYPES[name])
    values = rng.standard_normal(shape, dtype=np.float32)
    if name == "bf16":
        return round_to_bf16(values)
    return values.astype(HOST_DTYPES[name])


def round_to_bf16(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to the nearest bf16 (ties to even), still as f32."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1)))
    return (rounded & np.uint32(0xFFFF0000)).view(np.float32)


def to_pykern(x: np.ndarray, name: str) -> pk.Tensor:
    """A device tensor of dtype `name` holding the host array `x`."""
    t = pk.asarray(x)
    dtype = pk_dtype(name)
    return t if t.dtype == dtype else t.astype(dtype)


def to_host(t: pk.Tensor) -> np.ndarray:
    """The tensor's values as numpy (bf16, which numpy lacks, through f32)."""
    return t.astype(pk.f32).numpy() if t.dtype.name == "bf16" else t.numpy()


def to_torch(torch: object, x: np.ndarray, name: str, device: str) -> object:
    """A torch tensor of dtype `name` on `device` holding the host array `x`."""
    dtype = getattr(torch, TORCH_DTYPES[name])
    return torch.from_numpy(np.ascontiguousarray(x)).to(device).to(dtype)  # type: ignore
