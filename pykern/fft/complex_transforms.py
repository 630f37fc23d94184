"""The complex-to-complex transforms: `fft`, `ifft`, `fftn`, `ifftn`."""

from __future__ import annotations

from collections.abc import Sequence

from pykern.fft import args, gradients
from pykern.fft.pairs import as_complex, as_pairs, input_tensor, transform_axis
from pykern.fft.planned import planned
from pykern.tensor.core.tensor import Tensor


def fft(x: object, /, *, n: int | None = None, axis: int = -1, norm: str = "backward"
        ) -> Tensor:
    """The 1-D discrete Fourier transform along `axis`, of length `n` (x is cropped or zero
    padded to it; default: its length), X_k = Σ_j x_j exp(-2πi jk/n); norm "backward" (no
    factor), "ortho" (1/√n) or "forward" (1/n). Real input is promoted to complex (f64 to
    c128, other real dtypes to c64).

        pk.fft.fft(pk.asarray([1.0, 2.0, 3.0, 4.0])).numpy()
    """
    return _c2c("fft", x, n, axis, norm, inverse=False)


def ifft(x: object, /, *, n: int | None = None, axis: int = -1, norm: str = "backward"
         ) -> Tensor:
    """The inverse of `fft`: x_j = (1/n) Σ_k X_k exp(2πi jk/n) with norm "backward" (1/√n
    for "ortho", no factor for "forward")."""
    return _c2c("ifft", x, n, axis, norm, inverse=True)


def fftn(x: object, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str = "backward") -> Tensor:
    """The n-D transform over `axes` (default: all, or the last len(s)), of lengths `s`
    (default: x's; -1 keeps an axis's length): `fft` along each axis in turn."""
    return _c2cn("fftn", x, s, axes, norm, inverse=False)


def ifftn(x: object, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Tensor:
    """The inverse of `fftn`: `ifft` along each of `axes`."""
    return _c2cn("ifftn", x, s, axes, norm, inverse=True)


def _c2c(op: str, x: object, n: object, axis: object, norm: object, inverse: bool) -> Tensor:
    t = input_tensor(x, op)
    norm, ax, length = args.check_one_axis(t.shape, n, axis, norm, op)
    scale = args.scale_for(norm, length, inverse)

    def run() -> Tensor:
        return as_complex(transform_axis(as_pairs(t), ax, length, inverse, scale))

    return gradients.transform(op, t, lambda: planned(op, t, (length, ax, scale), run),
                               lambda: gradients.c2c(t, [length], [ax], norm, inverse))


def _c2cn(op: str, x: object, s: object, axes: object, norm: object, inverse: bool
          ) -> Tensor:
    t = input_tensor(x, op)
    norm = args.check_norm(norm, op)
    sizes, ax = args.check_s_axes(s, axes, t.shape, op)
    lengths = [t.shape[a] if size is None else size for size, a in zip(sizes, ax)]
    for length, a in zip(lengths, ax):
        if length == 0:
            raise ValueError(f"{op}: x has length 0 along axis {a}; pass s with sizes >= 1")

    def run() -> Tensor:
        p = as_pairs(t)
        for i, (length, a) in enumerate(reversed(list(zip(lengths, ax)))):
            p = transform_axis(p, a, length, inverse, args.scale_for(norm, length, inverse),
                               in_place=i > 0)  # (the first reads the caller's x)
        return as_complex(p)

    gradients.distinct_axes(op, t, ax)
    return gradients.transform(op, t, lambda: planned(op, t, (tuple(lengths), tuple(ax), norm),
                                                      run),
                               lambda: gradients.c2c(t, lengths, ax, norm, inverse))
