"""The backward of the transforms: each is a linear map, so the gradient is its adjoint.

In pykern's convention for complex gradients (the pair d/d real, d/d imag) the adjoint of a
DFT is the DFT of the other direction with the same factor: `fft` with norm m goes back as
`ifft` with the swapped norm (`args.swap_norm`: "backward" <-> "forward", "ortho" stays),
and the reverse. Around that:
- a length `n` that cropped or zero padded the input goes back as zero padding or cropping;
- a real input (rfft, ihfft, and real tensors given to fft) takes the real part, which the
  engine does when it fits the gradient to the input's dtype;
- rfft's dropped negative frequencies are zeros in the adjoint (ifft's `n` pads them);
- irfft (and hfft) count every spectrum value but X_0 and X_(n/2) twice in the signal, so
  their adjoints weigh those by 2 (`_hermitian_weights`).
Each adjoint is a composition of the public transforms, so it runs on their plans.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

import pykern as pk
from pykern.autograd.graph import needs_grad, record
from pykern.autograd.mode import no_grad
from pykern.fft.args import swap_norm
from pykern.tensor.core.tensor import Tensor


def transform(op: str, t: Tensor, run: Callable[[], Tensor],
              adjoint: Callable[[], Callable[[Tensor], Tensor]]) -> Tensor:
    """`run()`, the transform `op` of `t`, recorded with `adjoint()` (its gradient map, made
    only then) when `t` requires grad."""
    if not needs_grad(t, complex_ok=True):
        return run()
    with no_grad():
        out = run()
    back = adjoint()
    return record("fft." + op, out, (t,), lambda g: (back(g),), saved=())


def resized(g: Tensor, axes: Sequence[int], lengths: Sequence[int]) -> Tensor:
    """`g` cropped or zero padded along each of `axes` to `lengths` (the input's): the
    adjoint of the padding or cropping a transform's `n`/`s` did."""
    for a, m in zip(axes, lengths):
        n = g.shape[a]
        if n > m:
            g = g[(slice(None),) * a + (slice(0, m),)]
        elif n < m:
            zeros = pk.zeros(g.shape[:a] + (m - n,) + g.shape[a + 1:], g.dtype)
            g = pk.concat([g, zeros], axis=a)
    return g


def _hermitian_weights(g: Tensor, axis: int, n: int) -> Tensor:
    """`g` (the n//2 + 1 non-negative frequencies along `axis`) with every value but X_0 and,
    for even n, X_(n/2) doubled: how often each one is counted in a real signal of length n."""
    w = np.full(n // 2 + 1, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    shape = (n // 2 + 1,) + (1,) * (g.ndim - 1 - axis)
    return g * pk.asarray(w.reshape(shape), dtype=g.dtype.real_dtype)


def c2c(t: Tensor, lengths: Sequence[int], axes: Sequence[int], norm: str, inverse: bool
        ) -> Callable[[Tensor], Tensor]:
    """The adjoint of fft/ifft (fftn/ifftn) over `axes` at `lengths`."""
    back = pk.fft.fftn if inverse else pk.fft.ifftn
    sizes = [t.shape[a] for a in axes]
    return lambda g: resized(back(g, axes=list(axes), norm=swap_norm(norm)), axes, sizes)


def r2c(t: Tensor, lengths: Sequence[int], axes: Sequence[int], norm: str, conj_out: bool
        ) -> Callable[[Tensor], Tensor]:
    """The adjoint of rfft/rfftn (ihfft with `conj_out`): the half spectrum padded with zeros
    to the full lengths, transformed back, its real part."""
    sizes = [t.shape[a] for a in axes]

    def back(g: Tensor) -> Tensor:
        if conj_out:  # ihfft = conj(rfft): conj's adjoint is conj, and Re(ifft(conj)) = Re(fft)
            full = pk.fft.fft(g, n=lengths[-1], axis=axes[-1], norm=swap_norm(norm))
        else:
            full = pk.fft.ifftn(g, s=list(lengths), axes=list(axes), norm=swap_norm(norm))
        return resized(pk.real(full), axes, sizes)
    return back


def c2r(t: Tensor, lengths: Sequence[int], axes: Sequence[int], norm: str, conj_in: bool
        ) -> Callable[[Tensor], Tensor]:
    """The adjoint of irfft/irfftn (hfft with `conj_in`): the real gradient's half spectrum,
    weighted by how often the inverse counts each value, cropped or padded to x's lengths."""
    sizes = [t.shape[a] for a in axes]
    last = lengths[-1]

    def back(g: Tensor) -> Tensor:
        if conj_in:  # hfft = irfft(conj x): conj(rfft(g)) = ihfft(g) up to the norm
            half = pk.fft.ihfft(g, n=last, axis=axes[-1], norm=swap_norm(norm))
        else:
            half = pk.fft.rfftn(g, s=list(lengths), axes=list(axes), norm=swap_norm(norm))
        return resized(_hermitian_weights(half, axes[-1], last), axes, sizes)
    return back


def distinct_axes(op: str, t: Tensor, axes: Sequence[int]) -> None:
    """A transform repeating an axis (numpy allows it) has no backward here: refused when a
    gradient would be recorded."""
    if len(set(axes)) != len(axes) and needs_grad(t, complex_ok=True):
        raise NotImplementedError(f"pk.fft.{op} with a repeated axis {list(axes)} has no "
                                  "backward: compute it under pk.no_grad()")
