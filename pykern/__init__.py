"""pykern: Python kernels JIT-compiled to SPIR-V, run on any Vulkan device.

    import pykern as pk

    @pk.kernel
    def saxpy(a: pk.f32, x: pk.f32[:], y: pk.f32[:], out: pk.f32[:]):
        i = pk.global_id(0)
        out[i] = a * x[i] + y[i]

    saxpy[x.size](2.0, x, y, out)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
from pykern.lang.builtins import bitcast, static_range
# kernel names that are tensor functions too (pykern.tensor.api.kernel_names), and complex parts
from pykern.lang.builtins import (acosh, angle, asinh, atanh, conj, expm1, imag, log1p, log10,
                                  real, square)
from pykern.lang.builtins import coop_convert, coop_fill, coop_load, coop_mma, coop_store
from pykern.lang.coop import ACCUMULATOR, MATRIX_A, MATRIX_B, CoopType
from pykern.lang.dtypes import (Array, ArrayType, DType, bf16, bool_, c64, c128, constexpr, f16,
                                f32, f64, i8, i16, i32, i64, u8, u16, u32, u64)
from pykern.errors import (CompileError, DeviceError, DeviceLost, DeviceUnavailable,
                           DistributedError, GraphError, InternalError, KernelAssertionError,
                           KernelIndexError, KernelTypeError, LaunchError, OutOfDeviceMemory,
                           PykernError, ToolError, TransferGuardError)
from pykern.lang.func import Func, func
from pykern.jit.kernel import Kernel, StrictFloatWarning, kernel, strict_float
from pykern.runtime import devices, get_device, set_device, sync
from pykern.jit.graph import Graph, graph
from pykern.jit.profile import Profile, profile
from pykern.runtime.feature import COMPONENT_DTYPES as _COMPONENT_DTYPES
from pykern.lang import dtypes as _dtypes
from pykern import autograd
from pykern.autograd import enable_grad, no_grad
from pykern.tensor.core.tensor import Tensor, asarray, empty, empty_like
from pykern.tensor import library as _library  # every op module: they declare their ops
from pykern.tensor.create import random
from pykern.tensor.api import namespace as array_api
from pykern.tensor.api import namespace_versions as _namespace_versions  # pykern.array_api_2023_12
from pykern.tensor.api.namespace import from_dlpack
from pykern.tensor.core.promotion import can_cast, result_type
from pykern.tensor.core.autocast import autocast
from pykern.tensor.core.transfer_guard import transfer_guard
# PyTorch's names that numpy lacks (pykern.tensor.api.torch_functions), and the dtypes' long names
from pykern.tensor.api.torch_functions import cat, flatten
from pykern.tensor.create.multinomial import multinomial
from pykern.lang.dtype_names import (bfloat16, bool, complex64, complex128, double, float16,
                                     float32, float64, half, int8, int16, int32, int64, long,
                                     short, uint8, uint16, uint32, uint64)
from pykern.io import load, save
from pykern.fuse import fuse
from pykern.compile import compile
from pykern import amp, fft, linalg, nn, optim
from pykern import ops
from pykern.lang.builtins import serve_tensors as _serve_tensors
from pykern.tensor.api.kernel_names import tensor_functions as _tensor_functions
from pykern.tensor.core import operand_device as _edge

# Every op pk exports, from the registry (pykern.ops): the modules imported above (and those
# they import) declared them. What type checkers see of the same names is below; a test
# (tests/ops/test_registry.py) keeps the two equal.
globals().update(ops.exported("pk"))
if TYPE_CHECKING:
    from pykern.tensor.complex.complex_views import view_as_complex, view_as_real
    from pykern.tensor.conv.conv import conv2d, conv_transpose2d
    from pykern.tensor.create.creation import (arange, eye, full, full_like, linspace, ones,
                                               ones_like, tril, triu, zeros, zeros_like)
    from pykern.tensor.elementwise.functions import (
        add, astype, bitwise_and, bitwise_invert, bitwise_left_shift, bitwise_or,
        bitwise_right_shift, bitwise_xor, clip, divide, equal, floor_divide, gelu, greater,
        greater_equal, hypot, isfinite, less, less_equal, logaddexp, logical_and, logical_not,
        logical_or, logical_xor, maximum, minimum, multiply, negative, nextafter, not_equal,
        positive, reciprocal, relu, remainder, sigmoid, sign, signbit, silu, subtract, where)
    from pykern.tensor.gemm.matmul import matmul
    from pykern.tensor.index.indexing import concat, scatter_add, stack, take, take_along_axis
    from pykern.tensor.nnops.nn_ops import attention, layer_norm, log_softmax, one_hot, softmax
    from pykern.tensor.reduce.reduction import (all, any, argmax, argmin, mean, prod, std, sum,
                                                var)
    from pykern.tensor.reduce.scan import cumprod, cumsum
    from pykern.tensor.reduce.searching import count_nonzero
    from pykern.tensor.reduce.sort import argsort, sort, topk

# pk.exp, pk.abs, ...: the kernel names that also run the op library on tensors (one object
# each); the builtins' registration hook, called once here. Each op runs on its tensors'
# device (pykern.tensor.core.operand_device), as every function of the op library exported
# above.
_serve_tensors((_builtin, _edge.follows_operands(_op)) for _builtin, _op in _tensor_functions())
_edge.wrap_functions(globals(), [_n for _n, _v in list(globals().items())
                                 if getattr(_v, "__module__", "").startswith(("pykern.tensor.",
                                                                              "pykern.ops."))])

# the runtime names the element types of cooperative-matrix shapes (`DeviceInfo.coop_shapes`)
# with pykern's dtypes, so that `shape.a == pk.f16` (bf16 stays a name where pk.bf16 is absent)
_COMPONENT_DTYPES.update({name: getattr(_dtypes, name, name) for name in _COMPONENT_DTYPES})


def __getattr__(name: str) -> object:
    """An op declared after `import pykern` (pykern.ops.register) that pk exports: its public
    function, running on its tensors' device (PEP 562: asked only for names not found)."""
    function = ops.exported("pk").get(name)
    if function is None:
        raise AttributeError(f"module 'pykern' has no attribute {name!r}")
    return _edge.follows_operands(function)
