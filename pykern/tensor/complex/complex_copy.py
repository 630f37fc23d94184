"""Moving complex values: assignment into complex tensors, casts to and from complex.

These run as real copies on the part views of `complex_views` (the real part and the
imaginary part of each element are two real elements of the same buffer), so they need no
complex arithmetic in a kernel.

Casting complex to a real type keeps the real part and warns with numpy's `ComplexWarning`,
as numpy does (the array API leaves it unspecified); to bool it is `z != 0`.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.tensor.complex.complex_views import parts, view_as_real
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.elementwise import functions as ew

ComplexWarning: type[Warning] = np.exceptions.ComplexWarning


def warn_discarded(what: str) -> None:
    """numpy's warning for a complex value stored into a real type."""
    warnings.warn(f"{what}: casting complex values to a real type discards the imaginary part",
                  ComplexWarning, stacklevel=4)


def assign_complex(target: Tensor, value: object, assign: Any) -> None:
    """`target[...] = value` for a complex `target`: a number (Python, numpy) or a tensor
    broadcast to its shape, real or complex. `assign` is the real assignment
    (`elementwise.assign`), which converts each part to the target's part type."""
    re, im = parts(target)
    if not isinstance(value, Tensor):
        if isinstance(value, (complex, float, int, np.number, np.bool_)):
            z = complex(value)  # type: ignore[arg-type]
            assign(re, z.real)
            assign(im, z.imag)
            return
        value = ew.as_tensor(value)
    try:
        value = value.broadcast_to(target.shape)
    except ValueError:
        raise ValueError(f"could not broadcast a value of shape {value.shape} into the indexed "
                         f"shape {target.shape}") from None
    if value.dtype.is_complex:
        assign(view_as_real(target), view_as_real(value))
    else:
        assign(re, value)
        assign(im, 0.0)


def assign_real_from_complex(target: Tensor, value: object, assign: Any) -> None:
    """`target[...] = value` for a real `target` and a complex `value`: numpy keeps the real
    part (and warns); a bool target gets `value != 0`."""
    if not isinstance(value, Tensor):
        z = complex(value)  # type: ignore[arg-type]
        if target.dtype == dt.bool_:
            assign(target, z != 0)
            return
        warn_discarded("assignment")
        assign(target, z.real)
        return
    assign(target, complex_to_real(value, target.dtype))


def complex_to_real(x: Tensor, d: DType) -> Tensor:
    """`x.astype(d)` for a complex `x` and a real `d` (see the module doc)."""
    re, im = parts(x)
    if d == dt.bool_:
        return ew.logical_or(ew.not_equal(re, 0.0), ew.not_equal(im, 0.0))
    warn_discarded("astype")
    return ew.astype(re, d)


def to_complex(x: Tensor, d: DType, assign: Any) -> Tensor:
    """`x.astype(d)` for a complex `d` (from any type): a new row-major tensor."""
    out = empty(x.shape, d)
    assign_complex(out, x, assign)
    return out
