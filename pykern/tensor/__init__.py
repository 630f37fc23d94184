"""`pk.Tensor` (`tensor`) and the op library on it, every op written as `@pk.kernel`s.

- `elementwise`: generic unary/binary/ternary kernels (arithmetic, comparisons, math, where,
  clip, casts and strided copies)
- `reduction`: sum, mean, max, min, argmax, argmin, prod, var, std, any, all
- `creation`: zeros, ones, full, eye, arange, linspace, tril, triu
- `random`: a counter-based (Philox-4x32-10) generator
- `manipulation`: functions on shapes (expand_dims, broadcast_arrays, moveaxis, roll, tile,
  repeat, meshgrid, ...); `searching`: searchsorted, nonzero, count_nonzero; `sets`: unique_*
- `linalg`, `nn`, `sort`, `indexing`, `scan`: matmul, softmax, layer_norm, attention,
  sort/topk, concat/stack, take/scatter_add/one_hot, cumsum
- `conv` (entry points), `conv_args` (argument checks), `conv_igemm` (the portable kernel):
  conv2d, conv_transpose2d
- `pool` (entry points, with their backward), `pool_kernels`: max_pool2d, avg_pool2d,
  adaptive_avg_pool2d (reached through `pk.nn.functional`)
- `promotion`: the type promotion and accumulator rules; `strided`: broadcasting, views and
  launch planning; `checks`: argument checks; `device_limits`: what the device allows
- `namespace`: the Python array API namespace (`pykern.array_api`)

Every module imports the ones it calls; `pykern/__init__.py` imports the public names. They
are `@pk.kernel` users, so they need `pykern` itself first.
"""
