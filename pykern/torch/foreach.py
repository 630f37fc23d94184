"""The optimizers' `_foreach_` operators: one pykern op per tensor of the list, run straight
from here (PyTorch's generic version goes through the dispatcher once per tensor, which costs
more than the op). Each reuses the single-tensor implementation of the table, with the
argument that belongs to each tensor: a list element, a list's scalar, or one shared scalar
or tensor."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from pykern.torch import elementwise as ew
from pykern.torch import reductions

Impl = Callable[..., torch.Tensor]


def _item(arg: object, i: int) -> object:
    """The i-th tensor's share of a foreach argument: its element where it is a list."""
    return arg[i] if isinstance(arg, (list, tuple)) else arg


def _result_dtype(t: torch.Tensor, args: tuple, i: int) -> torch.dtype:
    """The dtype of `t op arg_i` (PyTorch's promotion of a tensor with a tensor or number)."""
    for a in args:
        o = _item(a, i)
        if isinstance(o, (torch.Tensor, bool, int, float, complex)):
            return torch.result_type(t, o)
    return t.dtype


def inplace(out_impl: Impl) -> Impl:
    """`_foreach_<op>_`: out_impl(t, *args_i, out=t) for each tensor."""
    def impl(self: Sequence[torch.Tensor], *args: object, **kwargs: object) -> None:
        for i, t in enumerate(self):
            out_impl(t, *(_item(a, i) for a in args), **kwargs, out=t)
    return impl


def functional(out_impl: Impl, float_result: bool = False) -> Impl:
    """`_foreach_<op>`: a new tensor per input tensor."""
    def impl(self: Sequence[torch.Tensor], *args: object,
             **kwargs: object) -> list[torch.Tensor]:
        results = []
        for i, t in enumerate(self):
            d = _result_dtype(t, args, i)
            if float_result and not (d.is_floating_point or d.is_complex):
                d = torch.get_default_dtype()
            out = torch.empty_like(t, dtype=d)
            out_impl(t, *(_item(a, i) for a in args), **kwargs, out=out)
            results.append(out)
        return results
    return impl


def _scalar_tensor(value: object) -> object:
    """A 0-d CPU tensor of scalars (the `.Tensor` overloads of addcmul/addcdiv pass one
    scalar per tensor in a 1-d CPU tensor) as Python numbers."""
    return value.tolist() if isinstance(value, torch.Tensor) and value.device.type == "cpu" \
        else value


def pointwise_inplace(out_impl: Impl) -> Impl:
    """`_foreach_addcmul_` / `_foreach_addcdiv_` (value a scalar, a list of them, or a CPU
    tensor of them)."""
    def impl(self: Sequence[torch.Tensor], tensor1: Sequence[torch.Tensor],
             tensor2: Sequence[torch.Tensor], value: object = 1) -> None:
        value = _scalar_tensor(value)
        for i, t in enumerate(self):
            out_impl(t, tensor1[i], tensor2[i], value=_item(value, i), out=t)
    return impl


def pointwise_functional(out_impl: Impl) -> Impl:
    """`_foreach_addcmul` / `_foreach_addcdiv`."""
    def impl(self: Sequence[torch.Tensor], tensor1: Sequence[torch.Tensor],
             tensor2: Sequence[torch.Tensor], value: object = 1) -> list[torch.Tensor]:
        value = _scalar_tensor(value)
        results = []
        for i, t in enumerate(self):
            out = torch.empty_like(t, dtype=torch.result_type(t, tensor1[i]))
            out_impl(t, tensor1[i], tensor2[i], value=_item(value, i), out=out)
            results.append(out)
        return results
    return impl


def lerp_inplace(self: Sequence[torch.Tensor], tensors1: Sequence[torch.Tensor],
                 weight: object) -> None:
    """`_foreach_lerp_` (weight a scalar, a list of scalars or a list of tensors)."""
    for i, t in enumerate(self):
        ew.lerp(t, tensors1[i], _item(weight, i), out=t)


def zero_(self: Sequence[torch.Tensor]) -> None:
    """`_foreach_zero_`."""
    for t in self:
        t.zero_()


def norm(self: Sequence[torch.Tensor], ord: float = 2,  # noqa: A002
         dtype: torch.dtype | None = None) -> list[torch.Tensor]:
    """`_foreach_norm.Scalar`: each tensor's vector norm."""
    results = []
    for t in self:
        d = dtype or (t.dtype if t.is_floating_point() or t.is_complex()
                      else torch.get_default_dtype())
        if d.is_complex:
            d = torch.float64 if d == torch.complex128 else torch.float32
        out = torch.empty((), dtype=d, device=t.device)
        reductions.vector_norm_out(t, ord, None, False, dtype=dtype, out=out)
        results.append(out)
    return results
