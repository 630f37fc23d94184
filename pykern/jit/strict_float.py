"""Strict floating point at launch time: the `pk.strict_float()` block, and the warning for a
device that cannot give all of it."""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from pykern.spirv.lower import SpirvModule, strict_float_shortfall
from pykern.spirv.target import Target

# set by `strict_float()` for the launches of one thread (or asyncio task); the launch path
# reads it with `.get()`, a call cheaper than any function around it
STRICT_BLOCK: ContextVar[bool] = ContextVar("pykern_strict_float", default=False)


class StrictFloatWarning(UserWarning):
    """A strict-floating-point kernel runs on a device that cannot give all of it: the message
    names what (denormals, signed zeros/inf/NaN or round-to-nearest, per float width)."""


@contextlib.contextmanager
def strict_float() -> Iterator[None]:
    """Strict floating point for every kernel launched in the block, the op library's included:

        with pk.strict_float():
            y = (a / b).numpy()          # numpy's bits

    It holds for the thread (or asyncio task) that entered it; kernels compiled strict (with
    `@pk.kernel(strict_float=True)` or PYKERN_STRICT_FLOAT=1) are strict everywhere."""
    token = STRICT_BLOCK.set(True)
    try:
        yield
    finally:
        STRICT_BLOCK.reset(token)


def warn_shortfall(kernel_name: str, module: SpirvModule, target: Target, device: Any) -> None:
    """Says which float controls strict mode could not have on `device` (called once per
    variant, when it is built)."""
    missing = strict_float_shortfall(module.words, target)
    if missing:
        warnings.warn(StrictFloatWarning(
            f"kernel {kernel_name!r}: strict floating point on {device.info.name} "
            f"without {', '.join(missing)}: the device does not allow them"),
            stacklevel=_caller_outside_jit())


def _caller_outside_jit() -> int:
    """The `stacklevel` that makes a warning issued by the caller name the first line outside
    pykern/jit/ (the user's launch, or the tensor op they called)."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level
