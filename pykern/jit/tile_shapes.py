"""Whether the device multiplies the tiles a kernel uses: every `pk.coop_mma` must be one of
the device's (M, N, K, A/B dtype, C dtype) combinations (`pk.devices()[i].coop_shapes`), and
every other tile must fit one of them in its use (an A tile M x K of the A dtype, ...).

Checked when a kernel is compiled for a device, after its features (a device without
cooperative matrices fails there first); the interpreter takes any shape.
"""

from __future__ import annotations

from collections.abc import Iterable

from pykern import ir
from pykern.frontend.source import KernelSource
from pykern.lang.coop import ACCUMULATOR, MATRIX_A, CoopType


def _name(dtype: object) -> str:
    return getattr(dtype, "name", str(dtype))


def _shape_text(m: int, n: int, k: int, a: object, c: object) -> str:
    return f"{m}x{n}x{k} {_name(a)}->{_name(c)}"


def _fits(t: CoopType, shapes: Iterable[tuple]) -> bool:
    """`t` is the A, B or accumulator tile of one of `shapes`."""
    for m, n, k, a, c in shapes:
        if t.use is MATRIX_A:
            ok = (t.rows, t.cols, t.dtype.name) == (m, k, _name(a))
        elif t.use is ACCUMULATOR:
            ok = (t.rows, t.cols, t.dtype.name) == (m, n, _name(c))
        else:
            ok = (t.rows, t.cols, t.dtype.name) == (k, n, _name(a))
        if ok:
            return True
    return False


def check_tile_shapes(source: KernelSource, kernel_ir: ir.Kernel, device_name: str,
                      shapes: tuple[tuple, ...]) -> None:
    """A CompileError at the first tile or multiply-add the device cannot do."""
    offered = ", ".join(_shape_text(*s) for s in shapes) or "none"
    for node in ir.walk(kernel_ir):
        if isinstance(node, ir.CoopMma):
            a, c = node.a.type, node.c.type
            want = (a.rows, c.cols, a.cols, a.dtype.name, c.dtype.name)  # type: ignore[union-attr]
            if not any((m, n, k, _name(x), _name(y)) == want for m, n, k, x, y in shapes):
                raise source.error(node.loc, f"{device_name} has no {_shape_text(*want)} "
                                             f"cooperative matrix multiply; it has: {offered}")
        t = getattr(node, "type", None)
        if isinstance(t, CoopType) and not _fits(t, shapes):
            raise source.error(node.loc, f"{device_name} has no cooperative matrices of which a "
                                         f"{t.name} is an operand; it has: {offered}")
