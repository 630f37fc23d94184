"""Checking the arguments of the transforms (`n`, `axis`, `s`, `axes`, `norm`) and turning
`norm` into the factor each transform multiplies by. Every error names the function and the
argument."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pykern.tensor.core.checks import check_int
from pykern.tensor.core.tensor import normalize_axis

NORMS = ("backward", "ortho", "forward")


def check_norm(norm: object, op: str) -> str:
    """`norm` if it is one of NORMS ("backward" for None, as numpy and PyTorch take it), else
    a ValueError (TypeError for another non-string)."""
    if norm is None:
        return "backward"
    if not isinstance(norm, str):
        raise TypeError(f"{op}: norm must be a str ({', '.join(map(repr, NORMS))}), not "
                        f"{type(norm).__name__}")
    if norm not in NORMS:
        raise ValueError(f"{op}: norm must be one of {', '.join(map(repr, NORMS))}, got "
                         f"{norm!r}")
    return norm


def swap_norm(norm: str) -> str:
    """The norm of the opposite direction (hfft is irfft of the conjugate with it)."""
    return {"backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]


def scale_for(norm: str, n: int, inverse: bool) -> float:
    """The factor of a transform of length n: backward scales the inverse by 1/n, forward the
    forward one, ortho both by 1/sqrt(n)."""
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if (norm == "backward") == inverse:
        return 1.0 / n
    return 1.0


def check_n(n: object, op: str, what: str = "n") -> int | None:
    """None or a positive int."""
    if n is None:
        return None
    return check_int(n, op, what, 1)


def check_axis(axis: object, ndim: int, op: str) -> int:
    """`axis` normalised for an array of `ndim` dimensions (at least one is needed)."""
    if ndim == 0:
        raise ValueError(f"{op}: x must have at least one dimension, it is 0-d")
    return normalize_axis(axis, ndim, op=op)


def check_one_axis(t_shape: Sequence[int], n: object, axis: object, norm: object, op: str
                   ) -> tuple[str, int, int]:
    """(norm, axis, length) of a transform along one axis of an array of shape `t_shape`:
    the checked norm, the normalised axis, and `n` or the axis's length (at least 1)."""
    norm = check_norm(norm, op)
    length = check_n(n, op)
    ax = check_axis(axis, len(t_shape), op)
    length = t_shape[ax] if length is None else length
    if length == 0:
        raise ValueError(f"{op}: x has length 0 along axis {ax}; pass n >= 1")
    return norm, ax, length


def check_s_axes(s: object, axes: object, shape: Sequence[int], op: str
                 ) -> tuple[list[int | None], list[int]]:
    """The array API's `s` and `axes` of an n-D transform: axes default to all (or the last
    len(s) when `s` is given); `s[i]` of -1 (or None) keeps the axis's length."""
    ndim = len(shape)
    if s is not None and not isinstance(s, Sequence):
        raise TypeError(f"{op}: s must be a sequence of ints, not {type(s).__name__}")
    if axes is not None and not isinstance(axes, Sequence):
        raise TypeError(f"{op}: axes must be a sequence of ints, not {type(axes).__name__}")
    if axes is None:
        axes = list(range(ndim)) if s is None else list(range(ndim - len(s), ndim))
        if any(a < 0 for a in axes):
            raise ValueError(f"{op}: s has {len(s)} entries, more than x's {ndim} dimensions")
    norm_axes = [normalize_axis(a, ndim, op=op) for a in axes]
    if s is None:
        return [None] * len(norm_axes), norm_axes
    if len(s) != len(norm_axes):
        raise ValueError(f"{op}: s and axes must have the same length, got {len(s)} and "
                         f"{len(norm_axes)}")
    sizes = [None if v is None or (check_int(v, op, f"s[{i}]") == -1) else
             check_int(v, op, f"s[{i}]", 1) for i, v in enumerate(s)]
    return sizes, norm_axes
