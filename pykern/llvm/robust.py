"""Robust buffer access on the host: outside debug mode no array access touches memory outside
the array's own storage, as on a Vulkan device with robust buffer access.

An access runs only where the element's address `offset + sum(index[k] * stride[k])` lies in
`[0, length)` of the array's buffer (a parameter's buffer as the launch bound it, a
`pk.shared` or `pk.local` array's stack memory): elsewhere a store is dropped, an atomic does
nothing, and a load or an atomic gives 0. That is the interpreter's rule too (an address
inside the buffer is allowed), so a kernel that reads a view's parent buffer past the view's
own shape reads the same elements everywhere.

The check costs a compare and a branch per access, and the branch keeps LLVM from
vectorising the loop around it. So the accesses whose indices the analysis bounded
(`pykern.llvm.bound_analysis`) run unchecked where their proof holds (`pykern.llvm.proofs`):
the bounds, evaluated with the launch's numbers (in the second version of a kernel, with the
workgroup's too: `pykern.llvm.module`), lie inside the shapes, and the arrays' views lie
inside their buffers (`view_inside_buffer`). Where it does not, a copy of the body in which
every access is checked runs. The accesses the analysis could not bound are checked in both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from llvmlite import ir as ll

from pykern.llvm import arrays
from pykern.llvm.emitter import ArrayView, Emitter
from pykern.llvm.types import I64


def guarded_access(em: Emitter, view: ArrayView, indices: Sequence[ll.Value],
                   access: Callable[[ll.Value], ll.Value | None]) -> ll.Value | None:
    """`access(pointer)` (a load, store or atomic) on element `indices` of `view`, run only
    where the element lies inside the buffer; its value, 0 where it did not run (None for a
    store)."""
    bld = em.builder
    address = arrays.element_address(em, view, list(indices))
    # unsigned: a negative address is a huge one, outside every buffer
    inside = bld.icmp_unsigned("<", address, view.length)
    return em.either(inside, lambda: access(arrays.pointer_at(em, view, address)),
                     lambda: None, "in_buffer")


# a stride this large (in elements) with more than one index along it puts the view's far end
# past any buffer the host allocates: such a view is not proved inside (it is checked instead)
LARGEST_STRIDE = 1 << 28


def view_inside_buffer(em: Emitter, view: ArrayView) -> ll.Value:
    """i1: every element of `view` (offset, shape, strides) lies inside its buffer, so an
    access whose indices are inside the shape is inside the buffer. An empty view is inside
    (no index is inside its shape). In i64 without wrapping: each dimension's reach (size - 1
    times a stride below LARGEST_STRIDE) stays below 2**59, and four of them and the offset
    (below 2**62 where the check passes) sum below 2**63. (Selects, not LLVM's min/max
    intrinsics: this runs in a function compiled without optimisation, whose fast instruction
    selector takes those only slowly.)"""
    bld = em.builder
    zero = ll.Constant(I64, 0)
    i1 = ll.IntType(1)

    def pick(take_first: ll.Value, first: ll.Value, second: ll.Value) -> ll.Value:
        return bld.select(take_first, first, second)

    empty: ll.Value = ll.Constant(i1, 0)
    small = bld.icmp_unsigned("<", view.offset, ll.Constant(I64, 1 << 62))
    low = high = view.offset
    for size, stride in zip(view.shape, view.strides, strict=True):
        empty = bld.or_(empty, bld.icmp_signed("<=", size, ll.Constant(size.type, 0)))
        last = bld.sub(bld.zext(size, I64), ll.Constant(I64, 1))
        # a dimension of one element never moves along its stride, whatever it is
        moves = bld.icmp_signed(">", last, zero)
        fits = bld.and_(bld.icmp_signed("<", stride, ll.Constant(I64, LARGEST_STRIDE)),
                        bld.icmp_signed(">", stride, ll.Constant(I64, -LARGEST_STRIDE)))
        small = bld.and_(small, bld.or_(bld.not_(moves), fits))
        reach = pick(moves, bld.mul(last, stride), zero)
        negative = bld.icmp_signed("<", reach, zero)
        low = bld.add(low, pick(negative, reach, zero))
        high = bld.add(high, pick(negative, zero, reach))
    inside = bld.and_(bld.icmp_signed(">=", low, zero), bld.icmp_signed("<", high, view.length))
    return bld.or_(empty, bld.and_(small, inside))
