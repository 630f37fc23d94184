"""Functional overloads of the elementwise operators (`add.Tensor`, `exp`, `eq.Scalar`)
computed into a fresh result, without the allocation PyTorch makes for them.

PyTorch derives a structured operator's functional overload from its `out=` overload: its meta
function sizes the output, the backend's `empty_strided` allocates it, then the `out=` kernel
fills it: two calls into Python per operator, about half of a small op's host time on this
device. Here, where every "pykern" operand is row-major (PyTorch's kernels then give a
row-major result of the broadcast shape), the pykern function runs on the operands and its
result is handed to PyTorch as it is, when the operands already have the dtype the operator
computes in and the result has the dtype PyTorch gives (keyword options such as gelu's
`approximate` are passed on; `alpha` must be 1). Otherwise the output is allocated here
(row-major, that dtype) or, for other layouts, as PyTorch's route makes it (shape, strides
and dtype from the operator's meta function), and the `out=` kernel fills it.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from pykern.torch import devices, dtypes, memory
from pykern.torch.args import operand
from pykern.torch.elementwise import compute_dtype
from pykern.torch.memory import result

Fn = Callable[..., object]

_META = torch.device("meta")


def functional(fn: Fn, out_impl: Fn, overload: torch._ops.OpOverload, rule: str,
               tests: bool, steps: bool) -> Fn:
    """The kernel of the functional `overload` whose `out=` kernel is `out_impl`: `fn` (the
    pykern function that `out_impl` runs) on the operands where the common case holds.
    `rule`: how `out_impl` finds the dtype it computes in ("promote" or "float", see
    `compute_dtype`); `tests`: the operator gives bool; `steps`: it computes in float32 for
    16-bit floats (those take the `out=` kernel)."""
    alpha_at = next((i for i, a in enumerate(overload._schema.arguments)
                     if a.name == "alpha" and not a.kwarg_only), None)

    def kernel(*args: object, **kwargs: object) -> torch.Tensor:
        if alpha_at is not None and len(args) > alpha_at:  # add.Scalar's alpha: positional
            args, kwargs = args[:alpha_at], {**kwargs, "alpha": args[alpha_at]}
        if not _plain(args, kwargs):
            return out_impl(*args, **kwargs, out=_meta_output(overload, args, kwargs))
        d = compute_dtype(rule, args)
        want = torch.bool if tests else d
        # (PyTorch's error for shapes that do not broadcast, before pykern's could differ)
        shape = torch.broadcast_shapes(*(a.shape for a in args if isinstance(a, torch.Tensor)))
        if not (steps and d.itemsize == 2) and all(
                a.dtype == d for a in args if isinstance(a, torch.Tensor)):
            options = {k: v for k, v in kwargs.items() if k != "alpha"}
            value = fn(*[operand(a, d) for a in args], **options)
            if getattr(value, "dtype", None) == dtypes.to_pk(want):
                return result(value)  # type: ignore[arg-type]
        return out_impl(*args, **kwargs, out=memory.empty(shape, want, _device(args)))
    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return kernel


def _plain(args: tuple, kwargs: dict) -> bool:
    """Whether every "pykern" operand is row-major and real, without a lazy negation, the
    others real numbers or 0-d CPU tensors, and alpha (where given) 1: then the result is a
    row-major tensor of the broadcast shape, as PyTorch's kernels make it, of the dtype that
    `compute_dtype` finds (complex operands can give real results: `abs`, `angle`)."""
    if kwargs.get("alpha", 1) != 1:
        return False
    for a in args:
        if isinstance(a, torch.Tensor):
            if a.dtype.is_complex:
                return False
            if a.device.type == devices.NAME:
                if not a.is_contiguous() or a.is_neg():
                    return False
            elif a.dim():
                return False  # (the out= kernel names the device mismatch)
        elif isinstance(a, complex):
            return False
    return True


def _device(args: tuple) -> torch.device:
    return next(a.device for a in args if isinstance(a, torch.Tensor)
                and a.device.type == devices.NAME)


def _meta_output(overload: torch._ops.OpOverload, args: tuple, kwargs: dict) -> torch.Tensor:
    """An uninitialised output as PyTorch's route makes it: shape, strides and dtype from the
    operator's meta function, on the device of the first "pykern" operand."""
    schema = overload._schema.arguments
    meta = overload(*[_on_meta(a, str(s.type)) for a, s in zip(args, schema)], **kwargs)
    return memory.empty_strided(meta.shape, meta.stride(), meta.dtype, _device(args))


def _on_meta(a: object, declared: str) -> object:
    """An operand as the meta function takes it: a "pykern" tensor as a meta tensor, and a
    number where a Tensor is declared (PyTorch hands a Python kernel its wrapped scalars as
    numbers) as a 0-d CPU tensor, which promotes as the wrapped scalar does."""
    if isinstance(a, torch.Tensor):
        if a.device.type == devices.NAME:
            return torch.empty_strided(a.shape, a.stride(), dtype=a.dtype, device=_META)
        return a
    if declared == "Tensor" and isinstance(a, (bool, int, float, complex)):
        return torch.tensor(a)  # (floats and complexes in the default dtypes, as wrapped)
    return a
