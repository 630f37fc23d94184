"""The op library: tensor operations, each written as `@pk.kernel`s.

- `elementwise`: generic unary/binary/ternary kernels (arithmetic, comparisons, math, where,
  clip, casts and strided copies)
- `reduction`: sum, mean, max, min, argmax, argmin, prod, var, std, any, all
- `creation`: zeros, ones, full, eye, arange, linspace, tril, triu
- `random`: a counter-based (Philox-4x32-10) generator
- `manipulation`: views and copies beyond the Tensor methods (expand_dims, broadcast_arrays,
  moveaxis, roll, tile, repeat, ...)
- `promotion`: the type promotion rules; `strided`: broadcasting and launch planning
- `namespace`: the Python array API namespace (`pykern.array_api`)
"""

from . import creation, elementwise, promotion, strided  # noqa: F401
