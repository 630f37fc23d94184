"""The names a kernel body calls: `pk.global_id(0)`, `pk.sqrt(x)`, ...

These are real Python objects so that the frontend can resolve `pk.sqrt`, `from pykern import
sqrt` or any alias to the same thing by identity. Called from ordinary Python (outside a kernel)
they raise, except the math functions. A math name that is also a tensor function of the op
library (`pk.exp`, `pk.abs`, `pk.max`, ...) is one object for both: `import pykern` registers
that function through the hook `serve_tensors` (the table is pykern.tensor.api.kernel_names),
which it runs on tensors, arrays and scalars alike (scalars give a 0-d tensor, computed by the
same kernel as a tensor's elements), so every elementwise function takes Python and numpy
scalars the same way. The others (`fma`) compute on numbers on
the host, and so do `pk.min`/`pk.max` of two or more numbers (Python's `min`/`max`; of one
argument they are the reductions).
"""

from __future__ import annotations

import builtins
import numbers
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    # What each name is to a type checker (mypy, pyright): an overloaded signature from
    # checker_types.pyi, so that `pk.exp(t) + 1` is a Tensor. At run time each is the
    # KernelBuiltin assigned below.
    from pykern.lang.checker_types import (Barrier, BinaryMath, Clamp, Extremum, Fma, IdBuiltin,
                                           KernelOnly, Predicate, Ravel, Select, UnaryMath,
                                           Unravel)

    sqrt: UnaryMath
    exp: UnaryMath
    log: UnaryMath
    sin: UnaryMath
    cos: UnaryMath
    tanh: UnaryMath
    floor: UnaryMath
    ceil: UnaryMath
    rsqrt: UnaryMath
    exp2: UnaryMath
    log2: UnaryMath
    tan: UnaryMath
    asin: UnaryMath
    acos: UnaryMath
    atan: UnaryMath
    sinh: UnaryMath
    cosh: UnaryMath
    erf: UnaryMath
    trunc: UnaryMath
    round: UnaryMath
    abs: UnaryMath
    real: UnaryMath
    imag: UnaryMath
    conj: UnaryMath
    angle: UnaryMath
    log10: UnaryMath
    log1p: UnaryMath
    expm1: UnaryMath
    asinh: UnaryMath
    acosh: UnaryMath
    atanh: UnaryMath
    square: UnaryMath
    pow: BinaryMath
    atan2: BinaryMath
    copysign: BinaryMath
    isnan: Predicate
    isinf: Predicate
    clamp: Clamp
    select: Select
    fma: Fma
    min: Extremum
    max: Extremum
    barrier: Barrier
    bitcast: KernelOnly
    unravel: Unravel
    ravel: Ravel
    global_id: IdBuiltin
    local_id: IdBuiltin
    group_id: IdBuiltin
    group_size: IdBuiltin
    num_groups: IdBuiltin
    grid: IdBuiltin
    atomic_add: KernelOnly
    atomic_sub: KernelOnly
    atomic_min: KernelOnly
    atomic_max: KernelOnly
    atomic_and_: KernelOnly
    atomic_or_: KernelOnly
    atomic_xor: KernelOnly
    atomic_exchange: KernelOnly
    atomic_cas: KernelOnly
    coop_fill: KernelOnly
    coop_load: KernelOnly
    coop_store: KernelOnly
    coop_mma: KernelOnly
    coop_convert: KernelOnly
    subgroup_size: KernelOnly
    subgroup_lane: KernelOnly
    subgroup_add: KernelOnly
    subgroup_min: KernelOnly
    subgroup_max: KernelOnly
    subgroup_any: KernelOnly
    subgroup_all: KernelOnly
    subgroup_broadcast: KernelOnly
    subgroup_shuffle: KernelOnly
    subgroup_shuffle_xor: KernelOnly
    subgroup_prefix_add: KernelOnly
    shared: KernelOnly
    local: KernelOnly


class KernelBuiltin:
    """A name that only means something inside a kernel body, or a math function that also
    runs outside kernels: the op library's function once given one (`tensor_op`), else `host`
    on numbers. `host_min_args`, where set, makes calls with that many numbers or more run
    `host` even so (min and max: `pk.max(3, 4)` is Python's max, `pk.max(t)` the reduction)."""

    def __init__(self, name: str, doc: str, host: Callable | None = None,
                 host_min_args: int = 0):
        self.__name__ = self.name = name
        self.__doc__ = doc
        self._host = host
        self._host_min_args = host_min_args
        self.tensor_op: Callable | None = None

    def serves_tensors(self, op: Callable) -> KernelBuiltin:
        """Makes `op`, a function of the op library, what this name does outside kernels on
        tensors, arrays, or with keyword arguments; returns self."""
        self.tensor_op = op
        self.__doc__ = f"{self.__doc__}\n\nOutside a kernel: {op.__doc__ or op.__name__}"
        return self

    def __call__(self, *args: object, **kwargs: object) -> object:
        if self.tensor_op is not None and (kwargs or not self._host_min_args
                                           or not self._on_numbers(args)):
            return self.tensor_op(*args, **kwargs)
        if self._host is None:
            raise RuntimeError(f"pk.{self.name}() can only be used inside a @pk.kernel")
        if kwargs:
            raise TypeError(f"pk.{self.name}() takes no keyword arguments")
        return self._host(*args)

    def _on_numbers(self, args: tuple) -> bool:
        """Whether the host function computes this call: numbers only, enough of them."""
        return len(args) >= self._host_min_args and builtins.all(
            isinstance(a, (numbers.Number, np.generic)) for a in args)

    def __repr__(self) -> str:
        return f"<pykern builtin {self.name}>"


def serve_tensors(functions: Iterable[tuple[KernelBuiltin, Callable]]) -> None:
    """The op library's registration hook: each (builtin, function) pair makes the function what
    the builtin does outside kernels on tensors (`KernelBuiltin.serves_tensors`). The builtins
    know nothing of tensors; `import pykern` calls this once with the library's table."""
    for builtin, op in functions:
        builtin.serves_tensors(op)


def _id_builtin(name: str, what: str) -> Any:  # a KernelBuiltin
    return KernelBuiltin(name, f"pk.{name}(dim): {what} along dimension dim (0, 1 or 2), an i32.")


global_id = _id_builtin("global_id", "this invocation's index in the launch grid")
local_id = _id_builtin("local_id", "this invocation's index inside its workgroup")
group_id = _id_builtin("group_id", "the index of this invocation's workgroup")
group_size = _id_builtin("group_size", "the workgroup size")
num_groups = _id_builtin("num_groups", "the number of workgroups of the launch")
grid = _id_builtin("grid", "the launch's logical size (the grid of kernel[grid])")


def _math(name: str, doc: str, host: Callable | None = None) -> Any:  # a KernelBuiltin
    """A math name. `import pykern` gives all but fma an op-library function (`serve_tensors`),
    which then runs every call outside a kernel: only fma needs `host`."""
    return KernelBuiltin(name, f"pk.{name}: {doc}", host)


sqrt = _math("sqrt", "square root")
exp = _math("exp", "e raised to x")
log = _math("log", "natural logarithm")
sin = _math("sin", "sine (radians)")
cos = _math("cos", "cosine (radians)")
tanh = _math("tanh", "hyperbolic tangent")
floor = _math("floor", "largest integral value <= x, in x's float type")
ceil = _math("ceil", "smallest integral value >= x, in x's float type")
pow = _math("pow", "x raised to y (Python semantics for negative x)")  # noqa: A001
rsqrt = _math("rsqrt", "1 / sqrt(x)")
exp2 = _math("exp2", "2 raised to x")
log2 = _math("log2", "base-2 logarithm")
tan = _math("tan", "tangent (radians)")
asin = _math("asin", "inverse sine")
acos = _math("acos", "inverse cosine")
atan = _math("atan", "inverse tangent")
atan2 = _math("atan2", "atan2(y, x): the angle of the point (x, y)")
sinh = _math("sinh", "hyperbolic sine")
cosh = _math("cosh", "hyperbolic cosine")
erf = _math("erf", "the error function")
trunc = _math("trunc", "x rounded toward zero, in x's float type")
round = _math("round", "x rounded to the nearest integer, halves to even, in x's "  # noqa: A001
              "float type")
fma = _math("fma", "a * b + c (fused where the device fuses)", lambda a, b, c: a * b + c)
copysign = _math("copysign", "the magnitude of x with the sign of y")
isnan = _math("isnan", "True where x is NaN")
isinf = _math("isinf", "True where x is infinite")
clamp = _math("clamp", "min(max(x, lo), hi)")
select = _math("select", "select(c, a, b): a where c else b; both are evaluated (no branch)")
abs = _math("abs", "the absolute value, of any numeric type")  # noqa: A001
# complex numbers: the parts, the conjugate and the angle (also of real values, as numpy's), and
# numpy's functions that kernels have for complex values
real = _math("real", "the real part (of a real value, the value)", np.real)
imag = _math("imag", "the imaginary part (of a real value, zero)", np.imag)
conj = _math("conj", "the complex conjugate (of a real value, the value)", np.conj)
angle = _math("angle", "the angle of the complex number, atan2(imag, real)", np.angle)
log10 = _math("log10", "base-10 logarithm")
log1p = _math("log1p", "log(1 + x), accurate near x = 0")
expm1 = _math("expm1", "exp(x) - 1, accurate near x = 0")
asinh = _math("asinh", "inverse hyperbolic sine")
acosh = _math("acosh", "inverse hyperbolic cosine")
atanh = _math("atanh", "inverse hyperbolic tangent")
square = _math("square", "x * x")
min = KernelBuiltin("min", "pk.min: min(a, b, ...) of two or more numbers, as Python's "  # noqa: A001
                           "min", builtins.min, host_min_args=2)
max = KernelBuiltin("max", "pk.max: max(a, b, ...) of two or more numbers, as Python's "  # noqa: A001
                           "max", builtins.max, host_min_args=2)


def _atomic(name: str, what: str) -> Any:  # a KernelBuiltin
    return KernelBuiltin(name, f"pk.{name}(a, index, value): atomically {what}; returns the old "
                               "value. `a` is an array parameter or pk.shared array; `index` an "
                               "int or a tuple of ints.")


atomic_add = _atomic("atomic_add", "a[index] += value")
atomic_sub = _atomic("atomic_sub", "a[index] -= value")
atomic_min = _atomic("atomic_min", "a[index] = min(a[index], value)")
atomic_max = _atomic("atomic_max", "a[index] = max(a[index], value)")
atomic_and_ = _atomic("atomic_and_", "a[index] &= value")
atomic_or_ = _atomic("atomic_or_", "a[index] |= value")
atomic_xor = _atomic("atomic_xor", "a[index] ^= value")
atomic_exchange = _atomic("atomic_exchange", "a[index] = value")
atomic_cas = KernelBuiltin("atomic_cas", "pk.atomic_cas(a, index, expected, desired): if "
                                         "a[index] == expected, store desired; returns the old "
                                         "value either way.")


def _coop(name: str, what: str) -> Any:  # a KernelBuiltin
    return KernelBuiltin(name, f"pk.{name}: {what} (cooperative-matrix tiles, inside a kernel)")


coop_fill = _coop("coop_fill", "(dtype, rows, cols, use, value) a tile with every element value")
coop_load = _coop("coop_load", "(array, row, col, rows, cols, use, transpose=False) the "
                               "rows x cols tile whose first element is array[row, col]")
coop_store = _coop("coop_store", "(array, row, col, tile, transpose=False) stores the tile with "
                                 "its first element at array[row, col]")
coop_mma = _coop("coop_mma", "(a, b, c) the tile a @ b + c")
coop_convert = _coop("coop_convert", "(tile, dtype) the tile with its elements converted")


def _subgroup(name: str, what: str) -> Any:  # a KernelBuiltin
    return KernelBuiltin(name, f"pk.{name}: {what}")


subgroup_size = _subgroup("subgroup_size", "() the number of invocations in a subgroup, i32")
subgroup_lane = _subgroup("subgroup_lane", "() this invocation's index in its subgroup, i32")
subgroup_add = _subgroup("subgroup_add", "(x) the sum of x over the subgroup")
subgroup_min = _subgroup("subgroup_min", "(x) the minimum of x over the subgroup")
subgroup_max = _subgroup("subgroup_max", "(x) the maximum of x over the subgroup")
subgroup_any = _subgroup("subgroup_any", "(c) True if c holds on any lane")
subgroup_all = _subgroup("subgroup_all", "(c) True if c holds on every lane")
subgroup_broadcast = _subgroup("subgroup_broadcast", "(x, lane) x of lane `lane` (a constant)")
subgroup_shuffle = _subgroup("subgroup_shuffle", "(x, lane) x of lane `lane` (any expression)")
subgroup_shuffle_xor = _subgroup("subgroup_shuffle_xor", "(x, mask) x of lane (lane ^ mask)")
subgroup_prefix_add = _subgroup("subgroup_prefix_add", "(x) the sum of x over the lower lanes "
                                                       "(exclusive prefix sum)")

bitcast = KernelBuiltin("bitcast", "pk.bitcast(x, dtype): the bits of the number x read as "
                                   "`dtype`, a number type of the same width (pk.bitcast(1.0, "
                                   "pk.u32) is 0x3F800000); inside a kernel.")

shared = KernelBuiltin("shared", "pk.shared(dtype, shape): an array in workgroup memory, shared "
                                 "by the invocations of a workgroup; assign it to a name.")
local = KernelBuiltin("local", "pk.local(dtype, shape): a small array private to an invocation; "
                               "assign it to a name.")
barrier = KernelBuiltin("barrier", "pk.barrier(): waits for every invocation of the workgroup "
                                   "and makes their memory writes visible to each other.")



def _unravel_host(i: int, shape: object) -> tuple[int, ...]:
    """The C-order multi-index of flat index `i` in `shape`, with Python's // and %."""
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    out = []
    for n in reversed(dims[1:]):
        out.append(i % n)
        i //= n
    return (i, *reversed(out))


def _ravel_host(index: object, shape: object) -> int:
    """The flat C-order index of the multi-index `index` in `shape`."""
    idx = tuple(index) if isinstance(index, (tuple, list)) else (index,)
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if len(idx) != len(dims):
        raise ValueError(f"pk.ravel(): an index of {len(idx)} for a shape of {len(dims)}")
    flat = 0
    for k, n in zip(idx, dims):
        flat = flat * n + k
    return flat


unravel = KernelBuiltin("unravel", "pk.unravel(i, shape): the multi-index (a tuple of ints) of "
                                   "flat index i in C order, as i0, i1 = pk.unravel(i, x.shape).",
                        _unravel_host)
ravel = KernelBuiltin("ravel", "pk.ravel(index, shape): the flat C-order index of the "
                               "multi-index `index` (a tuple) in `shape`.", _ravel_host)

def static_range(*args: int) -> range:
    """pk.static_range(stop) / pk.static_range(start, stop[, step]): a `for` loop that the
    compiler unrolls. The bounds are compile-time integers (literals, `pk.constexpr`
    parameters, captured globals) and the loop variable is a compile-time constant in each
    copy of the body, so it can index tuples (`acc[i]`), pick shapes and decide `if`s, as
    Triton's `tl.static_range`. Outside a kernel it is `range`."""
    return range(*args)


ID_BUILTINS = (global_id, local_id, group_id, group_size, num_groups, grid)
