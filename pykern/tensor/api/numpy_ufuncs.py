"""numpy's ufuncs on tensors (`Tensor.__array_ufunc__`): `np.exp(t)`, `np.add(t, x, out=t)`,
`np.matmul(a, b)`, `np.cbrt(t)`, `np.conjugate(t)` (`np.conj`), `np.add.reduce(t)`,
`np.add.accumulate(t)` run pykern's kernels and return tensors. A ufunc, method or keyword
pykern does not have runs numpy's on host copies and returns numpy's result
(`pykern.tensor.api.numpy_fallback`; an implicit copy, which `pk.transfer_guard` can forbid).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import pykern as pk

from pykern.tensor.elementwise import functions as ew
from pykern.tensor.reduce import reduction
from pykern.tensor.complex.complex_elementwise import conj
from pykern.tensor.gemm.matmul import matmul
from pykern.tensor.api.numpy_fallback import Unsupported, on_host
from pykern.tensor.reduce.scan import cumsum
from pykern.tensor.core.tensor import Tensor
from pykern.tensor.elementwise.unary_ops import UNARY, UnaryOp, _math


@pk.func
def cbrt_f(x):
    # a first guess from exp2(log2|x| / 3), refined by one Newton step on y**3 = |x| (the
    # guess is a few ulp off; the step brings it to about one); 0, inf and nan pass through,
    # and copysign puts the sign back (-0.0 stays -0.0)
    a = builtins.abs(x)
    y = pk.exp2(pk.log2(a) / 3.0)
    y = y - (y * y * y - a) / (3.0 * y * y)
    return pk.copysign(pk.select(a == 0.0, a, pk.select(pk.isinf(a), a, y)), x)


CBRT = UnaryOp("cbrt", cbrt_f, _math, "the cube root")

# numpy's ufunc names whose pykern op has another name (None: pykern has no such op)
_RENAMED = {"true_divide": "divide", "power": "pow", "absolute": "abs", "fabs": "abs",
            "rint": "round", "invert": "bitwise_invert", "left_shift": "bitwise_left_shift",
            "right_shift": "bitwise_right_shift", "arctan2": "atan2", "arcsin": "asin",
            "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
            "arctanh": "atanh", "mod": "remainder", "fmod": None}

# ufunc.reduce: the reduction each ufunc's fold is; ufunc.accumulate: the scan
_REDUCTIONS: dict[str, Callable[..., Tensor]] = {
    "add": reduction.sum, "multiply": reduction.prod, "maximum": reduction.max,
    "minimum": reduction.min, "logical_and": reduction.all, "logical_or": reduction.any}
_TAKE_DTYPE = ("add", "multiply")
_ACCUMULATIONS = {"add": cumsum}

# keywords of a ufunc call that may be given as long as they hold numpy's default
_DEFAULTS = {"where": True, "casting": "same_kind", "order": "K", "subok": True,
             "signature": None}


def array_ufunc(ufunc: Any, method: str, inputs: tuple, kwargs: dict) -> Any:
    """`Tensor.__array_ufunc__`: `ufunc.method(*inputs, **kwargs)` run as pykern ops, or where
    pykern has no such op (or option), as numpy's on host copies."""
    where = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    try:
        return _on_device(ufunc, method, where, inputs, dict(kwargs))
    except Unsupported:
        return on_host(getattr(ufunc, method), where, inputs, kwargs)


def _on_device(ufunc: Any, method: str, where: str, inputs: tuple, kwargs: dict) -> Any:
    if method == "__call__":
        return _call(ufunc.__name__, where, inputs, kwargs)
    if method == "reduce" and ufunc.__name__ in _REDUCTIONS:
        return _reduce(ufunc.__name__, where, *inputs, **kwargs)
    if method == "accumulate" and ufunc.__name__ in _ACCUMULATIONS:
        return _accumulate(ufunc.__name__, where, *inputs, **kwargs)
    raise refused(where)


def refused(where: str, detail: str = "") -> Unsupported:
    """What a numpy function (or one of its options) pykern does not run on the device raises
    inside pykern's implementation: the call then falls back on numpy's over host copies."""
    what = f"{where} with {detail}" if detail else where
    return Unsupported(f"{what} does not run on the device")


def _call(name: str, where: str, inputs: tuple, kwargs: dict) -> Tensor:
    out = single_out(where, kwargs.pop("out", None))
    dtype = kwargs.pop("dtype", None)
    _check_defaults(where, kwargs)
    if dtype is not None:  # numpy computes in `dtype`: the operands are cast to it first
        inputs = tuple(ew.as_tensor(x).astype(dtype) if isinstance(x, Tensor) else x
                       for x in inputs)
    op = _RENAMED.get(name, name)
    if name == "matmul" and len(inputs) == 2:
        return into(out, matmul(*inputs))
    if name == "cbrt" and len(inputs) == 1:
        return ew.unary(CBRT, inputs[0], out)
    if name == "conjugate" and len(inputs) == 1:  # np.conj too: the same ufunc
        return into(out, conj(inputs[0]))
    if op is not None and len(inputs) == 1 and op in UNARY:
        return ew.unary(op, inputs[0], out)
    if op is not None and len(inputs) == 2 and op in ew.BINARY:
        return ew.binary(op, inputs[0], inputs[1], out)
    raise refused(where)


def _check_defaults(where: str, kwargs: dict) -> None:
    for key, value in kwargs.items():
        if key not in _DEFAULTS or not _is_default(value, _DEFAULTS[key]):
            raise refused(where, f"{key}={value!r}")


def _is_default(value: object, default: object) -> bool:
    return value is default or (type(value) is type(default) and value == default)


def single_out(where: str, out: object) -> Tensor | None:
    """numpy's `out=` (None, a tensor, or a tuple of one): the tensor, or None; a TypeError
    naming `where` for anything else (a numpy array, say: pykern writes device memory)."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise TypeError(f"{where}: out must be one pk.Tensor, not {len(out)} outputs")
        out = out[0]
    if out is not None and not isinstance(out, Tensor):
        raise refused(where, f"out={type(out).__name__}")  # numpy's writes into host memory
    return out


def into(out: Tensor | None, result: Tensor) -> Tensor:
    """`result`, or `out` with `result` written into it (numpy's shape and casting rules)."""
    if out is None:
        return result
    if out.shape != result.shape:
        raise ValueError(f"out has shape {out.shape}, the result {result.shape}")
    out[...] = result
    return out


def _reduce(name: str, label: str, array: object, /, axis: object = 0, dtype: object = None,
            out: object = None, keepdims: bool = False, **rest: Any) -> Tensor:
    """`ufunc.reduce` (numpy's default axis is 0, not None). `label` names the call in errors
    (positional only: numpy's `where=` lands in `rest`)."""
    _refuse_extras(label, rest)
    options: dict[str, Any] = {"keepdims": keepdims}
    if dtype is not None:
        if name not in _TAKE_DTYPE:
            raise refused(label, f"dtype={dtype!r}")
        options["dtype"] = dtype
    return into(single_out(label, out), _REDUCTIONS[name](array, axis, **options))


def _accumulate(name: str, label: str, array: object, /, axis: int = 0, dtype: object = None,
                out: object = None, **rest: Any) -> Tensor:
    _refuse_extras(label, rest)
    return into(single_out(label, out), _ACCUMULATIONS[name](array, axis, dtype))


def _refuse_extras(where: str, rest: dict) -> None:
    """`initial=` and `where=` (numpy's no-value default aside) are refused by name."""
    for key, value in rest.items():
        if key not in ("initial", "where") or not _is_no_value(value) and \
                not (key == "where" and value is True):
            raise refused(where, f"{key}={value!r}")


def _is_no_value(value: object) -> bool:
    return type(value).__name__ == "_NoValueType"
