"""The op library: tensor operations, each written as `@pk.kernel`s.

- `elementwise`: generic unary/binary/ternary kernels (arithmetic, comparisons, math, where,
  clip, casts and strided copies)
- `reduction`: sum, mean, max, min, argmax, argmin, prod, var, std, any, all
- `creation`: zeros, ones, full, eye, arange, linspace, tril, triu
- `random`: a counter-based (Philox-4x32-10) generator
- `manipulation`: functions on shapes (expand_dims, broadcast_arrays, moveaxis, roll, tile,
  repeat, meshgrid, ...); `searching`: searchsorted, nonzero, count_nonzero; `sets`: unique_*
- `linalg`, `nn`, `sort`, `indexing`, `scan`: matmul, softmax, layer_norm, conv2d, attention,
  sort/topk, concat/stack, take/scatter_add/one_hot, cumsum
- `math64`: the exp/log family in f64 (Vulkan has no 64-bit transcendentals)
- `promotion`: the type promotion rules; `strided`: broadcasting and launch planning
- `namespace`: the Python array API namespace (`pykern.array_api`)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from . import creation, elementwise, manipulation, promotion, random, reduction  # noqa: F401
from . import searching, sets, strided  # noqa: F401

# modules holding the linear-algebra, neural-network, sorting, indexing and scan ops
OTHER_MODULES = ("linalg", "nn", "sort", "indexing", "scan")


def other(name: str) -> Callable[..., Any]:
    """The op `name` from the linalg/nn/sort/indexing/scan modules (imported on first use, so
    the rest of the library works without them)."""
    for module in OTHER_MODULES:
        try:
            mod = importlib.import_module(f"{__name__}.{module}")
        except ImportError:
            continue
        fn = getattr(mod, name, None)
        if fn is not None:
            return fn
    raise NotImplementedError(f"pykern has no '{name}' op yet")


def _tensor_aware_builtins() -> None:
    """`pk.exp`, `pk.sqrt`, ... are kernel builtins (resolved by identity inside kernels) and
    also API names of tensor functions: outside a kernel they are the tensor functions, taking
    tensors, numpy arrays, numpy scalars and Python scalars as every elementwise function does
    (scalars give a 0-d tensor, computed by the same kernel as a tensor would be)."""
    from .. import builtins as bi

    ew = elementwise
    ops: dict[object, Callable[..., Any]] = {
        bi.sqrt: ew.sqrt, bi.exp: ew.exp, bi.log: ew.log, bi.sin: ew.sin, bi.cos: ew.cos,
        bi.tanh: ew.tanh, bi.floor: ew.floor, bi.ceil: ew.ceil, bi.pow: ew.pow,
        bi.rsqrt: ew.rsqrt, bi.exp2: ew.exp2, bi.log2: ew.log2, bi.tan: ew.tan,
        bi.asin: ew.asin, bi.acos: ew.acos, bi.atan: ew.atan, bi.atan2: ew.atan2,
        bi.sinh: ew.sinh, bi.cosh: ew.cosh, bi.erf: ew.erf, bi.trunc: ew.trunc,
        bi.round: ew.round, bi.copysign: ew.copysign, bi.isnan: ew.isnan, bi.isinf: ew.isinf,
        bi.clamp: ew.clip, bi.select: ew.where,
    }
    for builtin, op in ops.items():
        builtin._host = op  # type: ignore[attr-defined]


_tensor_aware_builtins()
