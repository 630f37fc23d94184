"""`lerp`, `addcmul` and `addcdiv` (what PyTorch's optimizers run per parameter through their
`_foreach_` operators) as one kernel each, written straight into the output.

Composed from pykern's elementwise ops they take three or four launches per tensor (the
difference, the product, the sum, the copy into an in-place output); an AdamW step over a
model's parameters spent most of its launches there. Each kernel does the composition's
operations in the same order and dtype (float32 for 16-bit floats, rounded once at the end),
so the results are the same bits. It applies where every tensor is a row-major "pykern"
tensor of the output's shape and the operands share one dtype; other calls return None and
are composed as before.
"""


import functools

import torch

import pykern as pk
from pykern.torch import dtypes
from pykern.torch.memory import is_pykern, pk_view


def lerp(out: torch.Tensor, start: torch.Tensor, end: torch.Tensor, weight: float,
         compute: torch.dtype) -> torch.Tensor | None:
    """out = start + weight * (end - start) where |weight| < 0.5, else
    end - (end - start) * (1 - weight), computed in `compute`; None where it does not apply."""
    views = _flat(out, (start, end), compute)
    if views is None:
        return None
    o, a, b = views
    cf = dtypes.to_pk(compute)
    _lerp_kernel(o.dtype, a.dtype, cf, abs(weight) < 0.5)[o.size](o, a, b, weight)
    return out


def add_scaled(kind: str, out: torch.Tensor, base: torch.Tensor, t1: torch.Tensor,
               t2: torch.Tensor, value: float, compute: torch.dtype) -> torch.Tensor | None:
    """out = base + (t1 * t2) * value ("addcmul") or base + (t1 / t2) * value ("addcdiv"),
    the product by value left out where it is 1; None where it does not apply."""
    views = _flat(out, (base, t1, t2), compute)
    if views is None:
        return None
    o, a, b, c = views
    cf = dtypes.to_pk(compute)
    _scaled_kernel(kind, o.dtype, a.dtype, cf, value != 1)[o.size](o, a, b, c, value)
    return out


def _flat(out: torch.Tensor, operands: tuple[torch.Tensor, ...], compute: torch.dtype
          ) -> tuple[pk.Tensor, ...] | None:
    """1-D views of out and the operands, where the kernels apply."""
    if not isinstance(out, torch.Tensor) or not is_pykern(out) or not out.is_contiguous() or \
            out.is_neg() or out.dtype.is_complex or not out.numel():
        return None
    first = operands[0]
    for t in operands:
        if not isinstance(t, torch.Tensor) or not is_pykern(t) or t.shape != out.shape or \
                t.dtype != first.dtype or not t.is_contiguous() or t.is_neg() or \
                t.device != out.device:
            return None
    if compute not in (torch.float32, torch.float64) or not first.dtype.is_floating_point:
        return None
    return tuple(pk_view(t).reshape(-1) for t in (out, *operands))


@functools.lru_cache(maxsize=None)
def _lerp_kernel(o_dt: pk.DType, x_dt: pk.DType, cf: pk.DType, near_start: bool) -> pk.Kernel:
    CF, NEAR_START = cf, near_start  # noqa: N806

    @pk.kernel
    def lerp_scalar(out: o_dt[:], a: x_dt[:], b: x_dt[:], w: CF):
        i = pk.global_id(0)
        x, y = CF(a[i]), CF(b[i])
        diff = y - x
        if NEAR_START:
            out[i] = o_dt(x + w * diff)
        else:
            out[i] = o_dt(y - diff * (CF(1.0) - w))

    return lerp_scalar


@functools.lru_cache(maxsize=None)
def _scaled_kernel(kind: str, o_dt: pk.DType, x_dt: pk.DType, cf: pk.DType,
                   scaled: bool) -> pk.Kernel:
    CF, SCALED, PRODUCT = cf, scaled, kind == "addcmul"  # noqa: N806

    @pk.kernel
    def add_scaled(out: o_dt[:], a: x_dt[:], b: x_dt[:], c: x_dt[:], value: CF):
        i = pk.global_id(0)
        if PRODUCT:
            term = CF(b[i]) * CF(c[i])
        else:
            term = CF(b[i]) / CF(c[i])
        if SCALED:
            term = term * value
        out[i] = o_dt(CF(a[i]) + term)

    return add_scaled
