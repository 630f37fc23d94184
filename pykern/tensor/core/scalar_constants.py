"""The one-element constant tensors a Python scalar operand becomes (`t * 2.0`, `where(c, x,
0.0)`): cached per device, dtype and value, so that an op with a scalar replays the plan of
its tensors (`pykern.tensor.core.dispatch`) with the scalar's constant as an operand."""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from pykern.jit import compiling
from pykern.lang import dtypes as dt
from pykern.lang.bf16_rounding import bf16_words
from pykern.lang.dtypes import DType
from pykern.runtime import get_device
from pykern.tensor.core.tensor import Tensor, asarray

_CONSTANTS: OrderedDict[tuple, Tensor] = OrderedDict()
_CONSTANTS_MAX = 512


def constant(value: object, dtype: DType) -> Tensor:
    """A cached one-element tensor holding `value` converted to `dtype` (never handed to users,
    so never written)."""
    # bf16 rounded by pykern's rule (as asarray and kernels round), not by ml_dtypes
    arr = bf16_words(np.asarray(value)) if dtype == dt.bf16 else \
        np.asarray(value).astype(dtype.numpy)
    key = (get_device(), dtype, arr.tobytes())
    t = _CONSTANTS.get(key)
    if t is None:
        t = asarray(np.asarray(value).reshape(1), dtype=dtype) if dtype == dt.bf16 else \
            asarray(arr.reshape(1))
        _CONSTANTS[key] = t
        if compiling.ACTIVE[0] is not None:
            compiling.note_kept(t.buffer)  # a pk.compile replay uploads the same bytes again
        if len(_CONSTANTS) > _CONSTANTS_MAX:
            _CONSTANTS.popitem(last=False)
    else:
        _CONSTANTS.move_to_end(key)
    return Tensor(t.buffer, (), dtype, (), t.offset)


_SCALARS: dict[tuple, Tensor] = {}


def scalar_constant(value: float | int, dtype: DType) -> Tensor:
    """`constant(value, dtype)` for a Python float or int, found by the value itself (no numpy
    conversion) where the value tells its constant apart: not nan (never equal to itself);
    0.0 and -0.0, equal keys, are told apart by their sign."""
    if value == value:
        sign = math.copysign(1.0, value) if value == 0 else 1.0
        key = (get_device(), dtype, type(value), value, sign)
        t = _SCALARS.get(key)
        if t is None:
            t = constant(value, dtype)
            if len(_SCALARS) >= _CONSTANTS_MAX:
                _SCALARS.clear()
            _SCALARS[key] = t
        return t
    return constant(value, dtype)
