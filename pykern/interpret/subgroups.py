"""Subgroup operations, computed by the runner for the invocations of one subgroup that reached
the same operation (the active ones), in lane order.

Each entry takes the operation's site (its type), the lanes and the argument tuples of the
active invocations, and the subgroup size; it returns one result per active invocation.
Where the GPU's result is undefined this defines one: a shuffle or broadcast from an inactive
or out-of-range lane gives the invocation's own value (as NVIDIA's shfl does); reductions
add in lane order, each step rounded (a GPU adds in a tree: floats may differ in the last
bits); min/max of floats ignore NaNs (GLSL's NMin/NMax; the kernel `min`/`max`
propagate them).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.ir import SubgroupOp as S
from pykern.interpret import helpers
from pykern.interpret.names import SubgroupSite

Args = list[tuple]
Exchange = Callable[[DType, list[int], Args, int], list]


def wrap_int(value: int, t: DType) -> int:
    """`value` reduced to int type `t` in two's complement."""
    value &= (1 << t.bits) - 1
    if t.kind == dt.INT and value >> (t.bits - 1):
        value -= 1 << t.bits
    return value


def _add(t: DType, a: object, b: object) -> object:
    total = a + b  # type: ignore[operator]
    return wrap_int(total, t) if t.is_int else total


def _reduction(pair: Callable[[DType, object, object], object]) -> Exchange:
    def exchange(t: DType, lanes: list[int], args: Args, size: int) -> list:
        total = reduce(lambda a, b: pair(t, a, b), [a[0] for a in args])
        return [total] * len(args)
    return exchange


def _min(t: DType, a: object, b: object) -> object:
    return helpers.fmin(a, b) if t.is_float else min(a, b)  # type: ignore[type-var]


def _max(t: DType, a: object, b: object) -> object:
    return helpers.fmax(a, b) if t.is_float else max(a, b)  # type: ignore[type-var]


def _any(t: DType, lanes: list[int], args: Args, size: int) -> list:
    return [any(bool(a[0]) for a in args)] * len(args)


def _all(t: DType, lanes: list[int], args: Args, size: int) -> list:
    return [all(bool(a[0]) for a in args)] * len(args)


def _from_lane(source: Callable[[int, tuple], int]) -> Exchange:
    """Each invocation gets `x` of lane `source(its lane, its args)`."""
    def exchange(t: DType, lanes: list[int], args: Args, size: int) -> list:
        values = {lane: a[0] for lane, a in zip(lanes, args, strict=True)}
        return [values.get(source(lane, a), a[0]) for lane, a in zip(lanes, args, strict=True)]
    return exchange


def _prefix_add(t: DType, lanes: list[int], args: Args, size: int) -> list:
    out = []
    total = t.numpy.type(0) if t.is_float else 0
    for a in args:
        out.append(total)
        total = _add(t, total, a[0])
    return out


EXCHANGES: dict[S, Exchange] = {
    S.ADD: _reduction(_add),
    S.MIN: _reduction(_min),
    S.MAX: _reduction(_max),
    S.ANY: _any,
    S.ALL: _all,
    S.BROADCAST: _from_lane(lambda lane, a: a[1]),
    S.SHUFFLE: _from_lane(lambda lane, a: a[1]),
    S.SHUFFLE_XOR: _from_lane(lambda lane, a: lane ^ a[1]),
    S.PREFIX_ADD: _prefix_add,
}


def exchange(site: SubgroupSite, lanes: list[int], args: Args, size: int) -> list:
    """The results of the subgroup operation at `site` for the active lanes `lanes`."""
    if site.op is None:  # a tile load or store: the subgroup only meets
        return [None] * len(args)
    return EXCHANGES[site.op](site.type, lanes, args, size)  # type: ignore[arg-type]
