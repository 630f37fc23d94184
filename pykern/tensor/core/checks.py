"""Argument checks shared by the ops: each raises the error a user's mistake deserves (TypeError
for a wrong kind of value, ValueError for a wrong value), prefixed with the op's name."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pykern.lang.dtypes import DType
from pykern.tensor.core.tensor import Tensor


def check_int(value: object, op: str, what: str, minimum: int | None = None) -> int:
    """`value` as an int (bools refused), at least `minimum` when given."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{op}: {what} must be an int, not {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{op}: {what} must be >= {minimum}, got {value}")
    return int(value)


def check_dtype_in(t: Tensor, allowed: Sequence[DType], op: str, what: str = "input") -> None:
    """TypeError naming the supported dtypes unless `t`'s dtype is one of `allowed`."""
    if t.dtype not in allowed:
        raise TypeError(f"{op}: {what} has dtype {t.dtype.name}; supported: "
                        f"{', '.join(d.name for d in allowed)}")
