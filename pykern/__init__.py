"""pykern: Python kernels JIT-compiled to SPIR-V, run on any Vulkan device.

    import pykern as pk

    @pk.kernel
    def saxpy(a: pk.f32, x: pk.f32[:], y: pk.f32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        out[i] = a * x[i] + y[i]

    saxpy[x.size](2.0, x, y, out)
"""

from __future__ import annotations

__version__ = "0.1.0"  # before the imports: the compile cache keys on it

from pykern.lang.builtins import (abs, acos, asin, atan, atan2, atomic_add, atomic_and_, atomic_cas,
                       atomic_exchange, atomic_max, atomic_min, atomic_or_, atomic_sub,
                       atomic_xor, barrier, ceil, clamp, copysign, cos, cosh, erf, exp, exp2,
                       floor, fma, global_id, grid, group_id, group_size, isinf, isnan, local,
                       local_id, log, log2, max, min, num_groups, pow, ravel, round, rsqrt, select,
                       shared, sin, sinh, sqrt, subgroup_add, subgroup_all, subgroup_any,
                       subgroup_broadcast, subgroup_lane, subgroup_max, subgroup_min,
                       subgroup_prefix_add, subgroup_shuffle, subgroup_shuffle_xor,
                       subgroup_size, tan, tanh, trunc, unravel)
from pykern.lang.dtypes import (Array, ArrayType, DType, bool_, constexpr, f16, f32, f64, i8, i16,
                                i32, i64, u8, u16, u32, u64)
from pykern.errors import (CompileError, DeviceError, DeviceLost, DeviceUnavailable,
                           KernelAssertionError, KernelIndexError, KernelTypeError, LaunchError,
                           OutOfDeviceMemory)
from pykern.lang.func import Func, func
from pykern.jit.kernel import Kernel, StrictFloatWarning, kernel, strict_float
from pykern.runtime import devices, get_device, set_device, sync
from pykern.tensor.tensor import Tensor, asarray, empty, empty_like
from pykern.tensor import random
from pykern.tensor import namespace as array_api
from pykern.tensor.creation import (arange, eye, full, full_like, linspace, ones, ones_like, tril,
                                    triu, zeros, zeros_like)
from pykern.tensor.elementwise import (acosh, add, asinh, astype, atanh, bitwise_and,
                              bitwise_invert, bitwise_left_shift, bitwise_or, bitwise_right_shift,
                              bitwise_xor, clip, divide, equal, expm1, floor_divide, gelu,
                              greater, greater_equal, hypot, isfinite, less, less_equal, log10,
                              log1p, logaddexp, logical_and, logical_not, logical_or, logical_xor,
                              maximum, minimum, multiply, negative, not_equal, positive,
                              reciprocal, relu, remainder, sigmoid, sign, signbit, silu, square,
                              subtract, where)
from pykern.tensor.promotion import can_cast, result_type
from pykern.tensor.reduction import all, any, argmax, argmin, mean, prod, std, sum, var
from pykern.tensor.searching import count_nonzero
from pykern.tensor.indexing import concat, scatter_add, stack, take, take_along_axis
from pykern.tensor.linalg import matmul
from pykern.tensor.nn import attention, conv2d, layer_norm, log_softmax, one_hot, softmax
from pykern.tensor.scan import cumsum
from pykern.tensor.sort import argsort, sort, topk
from pykern.tensor import elementwise as _ew
from pykern.tensor import reduction as _reduction

# The math names of the kernel language that are also tensor functions: one object each,
# resolved by identity inside kernels, running the op on tensors outside (see builtins).
for _builtin, _op in (
        (abs, _ew.abs), (acos, _ew.acos), (asin, _ew.asin), (atan, _ew.atan),
        (atan2, _ew.atan2), (ceil, _ew.ceil), (clamp, _ew.clip), (copysign, _ew.copysign),
        (cos, _ew.cos), (cosh, _ew.cosh), (erf, _ew.erf), (exp, _ew.exp), (exp2, _ew.exp2),
        (floor, _ew.floor), (isinf, _ew.isinf), (isnan, _ew.isnan), (log, _ew.log),
        (log2, _ew.log2), (max, _reduction.max), (min, _reduction.min), (pow, _ew.pow),
        (round, _ew.round), (rsqrt, _ew.rsqrt), (select, _ew.where), (sin, _ew.sin),
        (sinh, _ew.sinh), (sqrt, _ew.sqrt), (tan, _ew.tan), (tanh, _ew.tanh),
        (trunc, _ew.trunc)):
    _builtin.serves_tensors(_op)
del _builtin, _op
