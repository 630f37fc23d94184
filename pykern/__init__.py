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

from .builtins import (
                       ceil,
                       cos,
                       exp,
                       floor,
                       global_id,
                       grid,
                       group_id,
                       group_size,
                       local_id,
                       log,
                       num_groups,
                       pow,
                       sin,
                       sqrt,
                       tanh,
)
from .dtypes import (
                       Array,
                       ArrayType,
                       DType,
                       bool_,
                       constexpr,
                       f16,
                       f32,
                       f64,
                       i8,
                       i16,
                       i32,
                       i64,
                       u8,
                       u16,
                       u32,
                       u64,
)
from .errors import (
                       CompileError,
                       DeviceError,
                       DeviceLost,
                       KernelAssertionError,
                       KernelIndexError,
                       KernelTypeError,
                       LaunchError,
                       OutOfDeviceMemory,
)

from .jit import Kernel, kernel
from .runtime import devices, get_device, set_device, sync
from .tensor import Tensor, asarray, empty, empty_like, zeros, zeros_like
