"""Which compiled variant a launch selects: variant keys from arguments.

A kernel keeps one variant per key: the workgroup shape, the number of grid dimensions, the
parameter types (a `pk.Array` parameter takes its argument's dtype and ndim), the constexpr
values and strict floating point or not. `variant_key` checks every argument on the way
(`pk.LaunchError`); `fast_signature` is the cheap stand-in the launch fast path looks up
first, without specialising.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from pykern.jit.arguments import constexpr_kind, specialize
from pykern.lang.dtypes import Array, ArrayType, DType, constexpr
from pykern.jit.arrays import ARRAY_TYPES

# workgroup shapes by number of grid dimensions, when the kernel does not name one: 256
# invocations, as NVIDIA launches small workgroups too slowly to fill its memory bus (64-wide
# ones cap a one-element-per-invocation add at 29% of the H200's bandwidth)
DEFAULT_WORKGROUPS = {1: (256, 1, 1), 2: (16, 16, 1), 3: (8, 8, 4)}

Workgroup = tuple[int, int, int]


class VariantKey(NamedTuple):
    """What one compiled variant is specialised on (hashable; its text keys the disk cache)."""

    workgroup: Workgroup
    grid_ndim: int
    types: tuple[tuple[str, DType | ArrayType], ...]  # (parameter, type), constexprs left out
    constants: tuple[tuple[str, str, object], ...]  # (parameter, type name, value)
    strict: bool

    @property
    def ir_key(self) -> tuple:
        """The part the typed IR depends on: strict and default variants share their IR."""
        return self[:4]

    @property
    def constant_values(self) -> dict[str, object]:
        return {name: value for name, _, value in self.constants}


def normalize_workgroup(workgroup: tuple[int, ...] | None) -> Workgroup | None:
    """A kernel's `workgroup=` padded to three positive ints (None: the default per grid)."""
    if workgroup is None:
        return None
    padded = tuple(workgroup) + (1,) * (3 - len(workgroup))
    if len(padded) != 3 or not all(isinstance(w, int) and w >= 1 for w in padded):
        raise ValueError(f"workgroup must be 1 to 3 positive ints, got {padded!r}")
    return padded  # type: ignore[return-value]


def workgroup_for(workgroup: Workgroup | None, grid_ndim: int) -> Workgroup:
    """The kernel's workgroup, or the default for a grid of `grid_ndim` dimensions."""
    return workgroup or DEFAULT_WORKGROUPS[grid_ndim]  # type: ignore[return-value]


def variant_key(kernel_name: str, params: Mapping[str, object], args: tuple,
                workgroup: Workgroup | None, grid_ndim: int, strict: bool) -> VariantKey:
    """The key of the variant `args` select (checked against `params`, the annotations)."""
    types, constants = specialize(kernel_name, params, args)  # type: ignore[arg-type]
    return VariantKey(workgroup_for(workgroup, grid_ndim), grid_ndim, tuple(types.items()),
                      tuple((k, constexpr_kind(v), v) for k, v in constants.items()), strict)


def fast_signature(specs: tuple, args: tuple) -> tuple | None:
    """A cheap key for the variant `args` select — the dtype and ndim of tensors passed for
    `pk.Array` parameters, the values of constexpr ones — or None when only the thorough
    path (`variant_key`) can tell (numpy arrays for generic parameters, odd values)."""
    sig = []
    for spec, a in zip(specs, args):
        if spec is constexpr:
            if type(a) not in (int, float, bool, str, DType) and \
                    getattr(a, "is_pykern_func", False) is not True:
                return None  # a tuple, say: the thorough path
            sig.append((type(a), a))  # the type too: 1, 1.0 and True are equal keys
        elif spec is Array:
            if type(a) not in ARRAY_TYPES:
                return None
            sig.append((a.dtype, len(a.shape)))
    return tuple(sig)
