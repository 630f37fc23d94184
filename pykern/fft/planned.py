"""The transforms through the op library's replayed plans (`pykern.tensor.core.dispatch`): a plan of
pk.fft is several launches (the four-step's passes, Bluestein's, the real transforms' extra
pass), views and temporaries, all fixed by the input's dtype, shape and strides and by the
call's parameters. The first call with a signature runs the plan's Python and notes its
launches; later calls launch them again on fresh buffers, without the Python between them."""

from __future__ import annotations

from collections.abc import Callable, Hashable

from pykern.tensor.core.dispatch import dispatch
from pykern.tensor.core.tensor import Tensor


def planned(op: str, x: Tensor, params: tuple[Hashable, ...], run: Callable[[], Tensor]
            ) -> Tensor:
    """`run()`, the transform `op` of `x` with `params` (everything besides x's signature
    that its launches depend on: lengths, axes, norm), replayed from its plan when one
    exists."""
    return dispatch(("pk.fft", op, *params), (x,), run)
