"""`pk.Tensor` (`tensor`) and the op library on it, every op written as `@pk.kernel`s.

- `elementwise`: generic unary/binary/ternary kernels (arithmetic, comparisons, math, where,
  clip, casts and strided copies)
- `reduction`: sum, mean, max, min, argmax, argmin, prod, var, std, any, all
- `creation`: zeros, ones, full, eye, arange, linspace, tril, triu
- `random`: a counter-based (Philox-4x32-10) generator
- `manipulation`: functions on shapes (expand_dims, broadcast_arrays, moveaxis, roll, tile,
  repeat, meshgrid, ...); `searching`: searchsorted, nonzero, count_nonzero; `sets`: unique_*
- `linalg`, `nn`, `sort`, `indexing`, `scan`: matmul, softmax, layer_norm, conv2d, attention,
  sort/topk, concat/stack, take/scatter_add/one_hot, cumsum
- `promotion`: the type promotion rules; `strided`: broadcasting and launch planning
- `namespace`: the Python array API namespace (`pykern.array_api`)

The ops modules are imported by `import pykern`, not here: they are `@pk.kernel` users and
need `pykern` itself first.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


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
