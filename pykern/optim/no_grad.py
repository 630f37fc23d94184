"""`no_grad()`: the optimizer's own copies and updates are not part of any autograd graph.

`pk.no_grad` where autograd provides it (as torch runs `step` under no_grad), a context that
does nothing where it does not exist yet; likewise `enable_grad` for a step's closure.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pykern as pk


def no_grad() -> Any:
    """A context in which tensor operations record nothing for autograd."""
    make = getattr(pk, "no_grad", None)
    return make() if make is not None else contextlib.nullcontext()


def enable_grad() -> Any:
    """A context in which tensor operations are recorded (for a step's closure)."""
    make = getattr(pk, "enable_grad", None)
    return make() if make is not None else contextlib.nullcontext()
