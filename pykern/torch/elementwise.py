"""Elementwise ATen operators on pykern's elementwise ops.

Most are PyTorch's "structured" operators: only the `.out` overload is implemented here, and
PyTorch derives the functional and in-place overloads from it (its meta function computes the
result's shape, dtype and strides, allocates it on "pykern", and calls the `.out` overload), so
broadcasting, type promotion and the in-place casting checks are PyTorch's own.

Operands are converted to the computation dtype PyTorch would use (`compute_dtype`), the pykern
op runs, and its result is written into the output.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import torch

import pykern as pk
from pykern.ops import Op, all_ops
from pykern.torch import pointwise_kernels
from pykern.torch.args import new, operand, write
from pykern.torch.memory import pk_view, unallocated

Fn = Callable[..., object]


def compute_dtype(rule: str, values: tuple, out: torch.Tensor | None = None) -> torch.dtype:
    """The dtype an elementwise op computes in: "promote" (PyTorch's result type of the
    operands), "float" (that, with integers and bools taken to the default float dtype),
    "out" (the output's dtype)."""
    if rule == "out":
        assert out is not None
        return out.dtype
    args = [v for v in values if v is not None]
    d = _result_type(args)
    if rule == "float" and not (d.is_floating_point or d.is_complex):
        return torch.get_default_dtype()
    return d


def _result_type(args: list) -> torch.dtype:
    if len(args) == 1:
        a = args[0]
        return a.dtype if isinstance(a, torch.Tensor) else torch.result_type(a, a)
    if len(args) == 2:
        return torch.result_type(args[0], args[1])
    from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes
    return elementwise_dtypes(*args, type_promotion_kind=ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT
                              )[1]


_LOW = (torch.float16, torch.bfloat16)


def opmath(dtype: torch.dtype) -> torch.dtype:
    """The dtype PyTorch's kernels compute a 16-bit float op in before rounding the result
    once: float32 (used here for ops of several steps, whose intermediate roundings would
    otherwise add up)."""
    return torch.float32 if dtype in _LOW else dtype


def elementwise_ops() -> Iterator[Op]:
    """The op registry's elementwise ops (rows of pykern's unary and binary tables)."""
    for op in all_ops():
        if op.kind in ("unary", "binary") and op.function is not None:
            yield op


def function_of(op: Op) -> Fn:
    """The function that runs an elementwise op: `pk.<name>` where `pk` exports it (the
    builtin that is also a tensor function, `pk.exp`), else the op's own (the fused
    backward formulas, `gelu_backward`)."""
    return getattr(pk, op.name) if "pk" in op.exports else op.function  # type: ignore


# pykern's elementwise functions take `out=` and give the operands' dtype (bool for
# comparisons): computed straight into the output tensor, without a copy
WRITES_OUT = frozenset(function_of(op) for op in elementwise_ops())


def apply(fn: Fn, ops: list, out: torch.Tensor, dtype: torch.dtype,
          options: dict | None = None) -> torch.Tensor:
    """fn(*ops, **options) into out: a fresh output takes the result's memory; an existing
    one (an in-place op) is computed into directly where fn can and out has the dtype fn gives
    (the operands' `dtype`, or bool); else the result is copied."""
    options = options or {}
    if fn in WRITES_OUT and (out.dtype == dtype or out.dtype == torch.bool) and \
            out.is_contiguous() and not out.is_conj() and out.numel() and not unallocated(out):
        target = pk_view(out)
        try:
            fn(*ops, out=target, **options)
            return out
        except (TypeError, ValueError):
            pass  # (a dtype or shape pykern's out= refuses: computed below, then written)
    return write(out, fn(*ops, **options))


def _run(fn: Fn, rule: str, values: tuple, out: torch.Tensor,
         steps: bool = False, options: dict | None = None) -> torch.Tensor:
    d = compute_dtype(rule, values, out)
    if steps:
        d = opmath(d)
    ops = [operand(v, d) if v is not None else None for v in values]
    return apply(fn, ops, out, d, options)


def unary(fn: Fn, rule: str = "promote") -> Fn:
    """`op.out(self, *, out)`; keyword options of the operator (gelu's `approximate`) are
    passed on to fn."""
    def impl(self: torch.Tensor, *, out: torch.Tensor, **options: object) -> torch.Tensor:
        return _run(fn, rule, (self,), out, options=options)
    return impl


def binary(fn: Fn, rule: str = "promote", steps: bool = False) -> Fn:
    """`op.out(self, other, *, out)` (other a tensor or a number); `steps`: fn is several
    operations, computed in float32 for 16-bit floats. Keyword options are passed on."""
    def impl(self: object, other: object, *, out: torch.Tensor,
             **options: object) -> torch.Tensor:
        return _run(fn, rule, (self, other), out, steps, options)
    return impl


def binary_alpha(fn: Fn) -> Fn:
    """`add.out` / `sub.out`: self op alpha * other."""
    def impl(self: object, other: object, *, alpha: object = 1,
             out: torch.Tensor) -> torch.Tensor:
        d = compute_dtype("promote", (self, other), out)
        if alpha != 1:
            scale = operand(alpha, d)
            d = opmath(d)
            a, b = operand(self, d), pk.multiply(operand(other, d), scale)
        else:
            a, b = operand(self, d), operand(other, d)
        return apply(fn, [a, b], out, d)
    return impl


def unary_functional(fn: Fn, rule: str = "promote") -> Fn:
    """A non-structured unary operator's functional overload: a new tensor."""
    def impl(self: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(self, dtype=compute_dtype(rule, (self,)))
        return _run(fn, rule, (self,), out)
    return impl


def unary_inplace(fn: Fn, rule: str = "promote") -> Fn:
    """A non-structured unary operator's in-place overload."""
    def impl(self: torch.Tensor) -> torch.Tensor:
        return _run(fn, rule, (self,), self)
    return impl


def binary_functional(fn: Fn, rule: str = "promote") -> Fn:
    """A non-structured binary operator's functional overload: a new tensor of the
    broadcast shape and promoted dtype."""
    def impl(self: torch.Tensor, other: object) -> torch.Tensor:
        d = compute_dtype(rule, (self, other))
        shape = torch.broadcast_shapes(self.shape, other.shape) if isinstance(
            other, torch.Tensor) else self.shape
        out = torch.empty(shape, dtype=d, device=self.device)
        return _run(fn, rule, (self, other), out)
    return impl


def binary_inplace(fn: Fn, rule: str = "promote") -> Fn:
    """A non-structured binary operator's in-place overload."""
    def impl(self: torch.Tensor, other: object) -> torch.Tensor:
        d = compute_dtype(rule, (self, other))
        if not torch.can_cast(d, self.dtype):
            raise RuntimeError(f"result type {str(d).split('.')[-1].capitalize()} can't be "
                               f"cast to the desired output type "
                               f"{str(self.dtype).split('.')[-1].capitalize()}")
        return _run(fn, rule, (self, other), self)
    return impl


def predicate(fn: Fn) -> Fn:
    """A functional test (`isnan`, ...): a bool tensor of self's shape."""
    def impl(self: torch.Tensor) -> torch.Tensor:
        out = torch.empty(self.shape, dtype=torch.bool, device=self.device)
        return write(out, fn(operand(self)))
    return impl




# ---------------------------------------------------------------- pykern compositions


def precise(fn: Fn) -> Fn:
    """fn computed in float64 where the device has it, for float32 operands: for the functions
    whose Vulkan precision is loose (the spec allows acos, asin, atan and atan2 4096 ULP), so
    that their float32 results agree with the CPU's on every device."""
    def run(*xs: object) -> object:
        tensors = [x for x in xs if isinstance(x, pk.Tensor)]
        if not tensors or tensors[0].dtype != pk.f32 or not tensors[0].device.features.fp64:
            return fn(*xs)
        wide = [x.astype(pk.f64) if isinstance(x, pk.Tensor) else x for x in xs]
        return fn(*wide).astype(pk.f32)
    run.__name__ = fn.__name__
    return run


def gelu_backward(fn: Fn) -> Fn:
    """`gelu_backward`: pykern's fused erf-form gradient `fn(g, x)`, and for
    approximate="tanh" the derivative of 0.5 x (1 + tanh(k (x + c x³))) from pykern ops."""
    def run(g: object, x: object, approximate: str = "none") -> object:
        if approximate == "none":
            return fn(g, x)
        k, c = math.sqrt(2.0 / math.pi), 0.044715
        x2 = pk.multiply(x, x)
        t = pk.tanh(pk.multiply(pk.multiply(x, pk.add(pk.multiply(x2, c), 1.0)), k))
        slope = pk.multiply(pk.subtract(1.0, pk.multiply(t, t)),
                            pk.multiply(pk.add(pk.multiply(x2, 3.0 * c), 1.0), k))
        grad = pk.multiply(pk.add(pk.add(t, 1.0), pk.multiply(x, slope)), 0.5)
        return pk.multiply(g, grad)
    return run


def fmod(a: object, b: object) -> object:
    """C's fmod (the remainder with a's sign), exact: |a| % |b| is exact for positive
    operands (Python's % and C's fmod agree there), and takes a's sign."""
    r = pk.remainder(pk.abs(a), pk.abs(b))
    if _is_float(a, b):
        return pk.copysign(r, a)
    return pk.where(pk.less(a, 0), pk.negative(r), r)


def trunc_divide(a: object, b: object) -> object:
    """Division rounded toward zero (div with rounding_mode="trunc")."""
    if _is_float(a, b):
        return pk.trunc(pk.divide(a, b))
    q = pk.floor_divide(pk.abs(a), pk.abs(b))
    return pk.where(pk.not_equal(pk.less(a, 0), pk.less(b, 0)), pk.negative(q), q)


def floor_divide(a: object, b: object) -> object:
    """Division rounded toward -inf (div with rounding_mode="floor", floor_divide)."""
    return pk.floor_divide(a, b)


def _is_float(*values: object) -> bool:
    for v in values:
        d = getattr(v, "dtype", None)
        if d is not None:
            return d.is_float or d.is_complex
    return any(isinstance(v, (float, complex)) for v in values)


def div_mode(self: object, other: object, *, rounding_mode: str | None,
             out: torch.Tensor) -> torch.Tensor:
    """`div.out_mode`: true division, or rounded with "trunc" or "floor"."""
    if rounding_mode is None:
        return _run(pk.divide, "float", (self, other), out)
    fn = trunc_divide if rounding_mode == "trunc" else floor_divide
    return _run(fn, "promote", (self, other), out)


def fmax(a: object, b: object) -> object:
    """The larger, ignoring a NaN operand (NaN only where both are)."""
    return pk.where(pk.isnan(a), b, pk.where(pk.isnan(b), a, pk.maximum(a, b)))


def fmin(a: object, b: object) -> object:
    """The smaller, ignoring a NaN operand."""
    return pk.where(pk.isnan(a), b, pk.where(pk.isnan(b), a, pk.minimum(a, b)))


def logaddexp2(a: object, b: object) -> object:
    """log2(2**a + 2**b), as logaddexp scaled by ln 2."""
    return pk.divide(pk.logaddexp(pk.multiply(a, math.log(2)), pk.multiply(b, math.log(2))),
                     math.log(2))


def xlogy(x: object, y: object) -> object:
    """x * log(y), 0 where x is 0 (unless y is NaN)."""
    r = pk.multiply(x, pk.log(y))
    return pk.where(pk.isnan(y), y, pk.where(pk.equal(x, 0), 0.0, r))


def heaviside(x: object, values: object) -> object:
    """0 below 0, `values` at 0, 1 above."""
    return pk.where(pk.equal(x, 0), values, pk.where(pk.less(x, 0), 0, 1))


def frac(x: object) -> object:
    """x - trunc(x) (keeps the sign)."""
    return pk.subtract(x, pk.trunc(x))




def sgn(x: object) -> object:
    """sign(x); for complex x, x / |x| (0 at 0)."""
    if getattr(x, "dtype", None) is not None and x.dtype.is_complex:  # type: ignore[attr-defined]
        mag = pk.abs(x)
        return pk.where(pk.equal(mag, 0), 0j, pk.divide(x, mag))
    return sign(x)


def sign(x: object) -> object:
    """-1, 0 or 1 (a bool stays itself, as PyTorch)."""
    if getattr(x, "dtype", None) == pk.bool_:
        return x
    return pk.sign(x)






def rsub(a: object, b: object) -> object:
    """b - a."""
    return pk.subtract(b, a)






def round_decimals(self: torch.Tensor, *, decimals: int, out: torch.Tensor) -> torch.Tensor:
    """`round.decimals_out`: rounded to `decimals` places, halves to even, as PyTorch
    computes it (x * 10**d rounded, divided by 10**d; negative d the other way)."""
    def fn(x: object) -> object:
        if not x.dtype.is_float:  # type: ignore[attr-defined]
            return x
        if decimals >= 0:
            ten = 10.0 ** decimals
            return pk.divide(pk.round(pk.multiply(x, ten)), ten)
        ten = 10.0 ** -decimals
        return pk.multiply(pk.round(pk.divide(x, ten)), ten)
    return _run(fn, "promote", (self,), out, steps=True)


def nan_to_num(self: torch.Tensor, nan: float | None = None, posinf: float | None = None,
               neginf: float | None = None, *, out: torch.Tensor) -> torch.Tensor:
    """`nan_to_num.out`: NaN, +inf and -inf replaced (by 0 and the dtype's largest and
    smallest finite values unless given)."""
    def fn(x: object) -> object:
        if not x.dtype.is_float:  # type: ignore[attr-defined]
            return x
        info = torch.finfo(self.dtype)
        hi = info.max if posinf is None else posinf
        lo = info.min if neginf is None else neginf
        y = pk.where(pk.isnan(x), 0.0 if nan is None else nan, x)
        y = pk.where(pk.logical_and(pk.isinf(y), pk.greater(y, 0)), hi, y)
        return pk.where(pk.logical_and(pk.isinf(y), pk.less(y, 0)), lo, y)
    return _run(fn, "promote", (self,), out)


def clamp(self: torch.Tensor, min: object = None, max: object = None, *,  # noqa: A002
          out: torch.Tensor) -> torch.Tensor:
    """`clamp.out` / `clamp.Tensor_out`: `pk.clip`, which has PyTorch's meaning (NaN
    propagates, also from the bounds; where min > max the result is max)."""
    d = compute_dtype("promote", (self, min, max), out)
    return write(out, pk.clip(operand(self, d), operand(min, d), operand(max, d)))


def clamp_min(self: torch.Tensor, min: object, *, out: torch.Tensor  # noqa: A002
              ) -> torch.Tensor:
    """`clamp_min.out` (and its Tensor overload)."""
    return clamp(self, min, None, out=out)


def clamp_max(self: torch.Tensor, max: object, *, out: torch.Tensor  # noqa: A002
              ) -> torch.Tensor:
    """`clamp_max.out` (and its Tensor overload)."""
    return clamp(self, None, max, out=out)


def where_out(condition: torch.Tensor, self: object, other: object, *,
              out: torch.Tensor) -> torch.Tensor:
    """`where.self_out`: self where condition, else other."""
    d = compute_dtype("promote", (self, other), out)
    c = operand(condition, torch.bool)
    return write(out, pk.where(c, operand(self, d), operand(other, d)))


def where_self(condition: torch.Tensor, self: object, other: object) -> torch.Tensor:
    """`where.self` (not structured): a new tensor."""
    d = compute_dtype("promote", (self, other))
    shape = torch.broadcast_shapes(*(t.shape for t in (condition, self, other)
                                     if isinstance(t, torch.Tensor)))
    out = torch.empty(shape, dtype=d, device=condition.device if condition.device.type != "cpu"
                      else next(t.device for t in (self, other) if isinstance(t, torch.Tensor)
                                and t.device.type != "cpu"))
    return where_out(condition, self, other, out=out)


def lerp(self: torch.Tensor, end: torch.Tensor, weight: object, *,
         out: torch.Tensor) -> torch.Tensor:
    """`lerp.Scalar_out` / `lerp.Tensor_out`: self + weight * (end - self), computed as
    PyTorch does (from the nearer end where |weight| >= 0.5)."""
    d = opmath(compute_dtype("promote", (self, end), out))
    a, b, w = operand(self, d), operand(end, d), operand(weight, d)
    if not isinstance(w, pk.Tensor):  # a number (the optimizers' lerp): its end chosen here
        if pointwise_kernels.lerp(out, self, end, w, d) is not None:
            return out
        diff = pk.subtract(b, a)
        return write(out, pk.add(a, pk.multiply(w, diff)) if abs(w) < 0.5 else
                     pk.subtract(b, pk.multiply(diff, pk.subtract(1, operand(w, d)))))
    diff = pk.subtract(b, a)
    near_start = pk.add(a, pk.multiply(w, diff))
    near_end = pk.subtract(b, pk.multiply(diff, pk.subtract(1, w)))
    small = pk.less(pk.abs(w), 0.5)
    return write(out, pk.where(small, near_start, near_end))


def addcmul(self: torch.Tensor, tensor1: torch.Tensor, tensor2: torch.Tensor, *,
            value: object = 1, out: torch.Tensor) -> torch.Tensor:
    """`addcmul.out`: self + value * tensor1 * tensor2."""
    return _add_scaled("addcmul", self, tensor1, tensor2, value, out)


def addcdiv(self: torch.Tensor, tensor1: torch.Tensor, tensor2: torch.Tensor, *,
            value: object = 1, out: torch.Tensor) -> torch.Tensor:
    """`addcdiv.out`: self + value * tensor1 / tensor2."""
    return _add_scaled("addcdiv", self, tensor1, tensor2, value, out)


_COMBINE = {"addcmul": pk.multiply, "addcdiv": pk.divide}


def _add_scaled(kind: str, self: torch.Tensor, tensor1: torch.Tensor, tensor2: torch.Tensor,
                value: object, out: torch.Tensor) -> torch.Tensor:
    """self + value * (tensor1 * tensor2) ("addcmul") or (tensor1 / tensor2) ("addcdiv"),
    computed in the op-math dtype: one kernel where `pointwise_kernels` applies, else
    composed."""
    d = compute_dtype("promote", (self, tensor1, tensor2), out)
    scale = operand(value, d)
    d = opmath(d)
    if isinstance(scale, float) and pointwise_kernels.add_scaled(
            kind, out, self, tensor1, tensor2, scale, d) is not None:
        return out
    a, b, c = operand(self, d), operand(tensor1, d), operand(tensor2, d)
    term = _COMBINE[kind](b, c)
    if scale != 1:
        term = pk.multiply(term, scale)
    return write(out, pk.add(a, term))


def cross(self: torch.Tensor, other: torch.Tensor, *, dim: int = -1,
          out: torch.Tensor) -> torch.Tensor:
    """`linalg_cross.out`: the cross product along `dim` (of length 3), each product and
    difference rounded in the operands' dtype, as PyTorch's CPU kernel."""
    d = compute_dtype("promote", (self, other), out)
    a, b = operand(self, d), operand(other, d)
    shape = tuple(out.shape)
    a, b = a.broadcast_to(shape), b.broadcast_to(shape)  # type: ignore[union-attr]
    axis = dim % len(shape)

    def part(t: pk.Tensor, i: int) -> pk.Tensor:
        key = [slice(None)] * len(shape)
        key[axis] = slice(i, i + 1)
        return t[tuple(key)]

    parts = [pk.subtract(pk.multiply(part(a, (i + 1) % 3), part(b, (i + 2) % 3)),
                         pk.multiply(part(a, (i + 2) % 3), part(b, (i + 1) % 3)))
             for i in range(3)]
    return write(out, pk.concat(parts, axis=axis))


def complex_out(real: torch.Tensor, imag: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:
    """`complex.out`: real + 1j * imag."""
    part = torch.float64 if out.dtype == torch.complex128 else torch.float32
    shape = tuple(torch.broadcast_shapes(real.shape, imag.shape))
    if tuple(out.shape) != shape:
        out.resize_(shape)
    re = operand(real, part).broadcast_to(shape)  # type: ignore[union-attr]
    im = operand(imag, part).broadcast_to(shape)  # type: ignore[union-attr]
    return write(out, pk.view_as_complex(pk.stack([re, im], axis=-1)))


def polar_out(abs: torch.Tensor, angle: torch.Tensor, *,  # noqa: A002
              out: torch.Tensor) -> torch.Tensor:
    """`polar.out`: abs * (cos(angle) + 1j * sin(angle))."""
    part = torch.float64 if out.dtype == torch.complex128 else torch.float32
    r, t = operand(abs, part), operand(angle, part)
    re, im = pk.multiply(r, pk.cos(t)), pk.multiply(r, pk.sin(t))
    return complex_out(new(re), new(im), out=out)


def gcd(a: object, b: object) -> object:
    """The greatest common divisor (non-negative), by Euclid's algorithm on the whole tensor
    until every pair is done."""
    x, y = pk.abs(a), pk.abs(b)
    for step in range(200):
        if step % 8 == 0 and not bool(pk.any(pk.not_equal(y, 0)).item()):
            break
        live = pk.not_equal(y, 0)
        x, y = pk.where(live, y, x), pk.where(live, pk.remainder(x, pk.where(live, y, 1)), 0)
    return x


def lcm(a: object, b: object) -> object:
    """The least common multiple (non-negative), |a / gcd(a, b) * b|; 0 where gcd is 0."""
    g = gcd(a, b)
    safe = pk.where(pk.equal(g, 0), 1, g)
    return pk.where(pk.equal(g, 0), 0, pk.abs(pk.multiply(pk.floor_divide(a, safe), b)))
