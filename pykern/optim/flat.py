"""`FlatStore`: the parameters of one dtype, moved into one flat buffer, with their state.

Why flat: a Vulkan kernel binds a fixed set of buffers, so one launch can update many
parameters only if they live in one buffer. At construction the optimizer copies each
parameter's values into its segment of the store's `values` tensor and re-points the
parameter (the same Python object, same shape and dtype) at that segment, row-major; what
the optimizer's kernels write there is what the parameter holds. Segments start on multiples
of `CHUNK` elements, so that the chunk table (`chunks`) names each element's parameter.

Gradients are allocated by autograd, one buffer each, so before a step they are gathered into
the store's flat `grads` tensor: a buffer copy per gradient (an assignment for one of another
dtype or a strided one), none for a gradient that is already the matching view of `grads`
(as after `zero_grad(set_to_none=False)` when the gradient was accumulated in place). The
state (momentum buffers, exp_avg, exp_avg_sq, and master weights of f16/bf16 parameters) is
flat too, in the compute dtype, created on first use.

Complex parameters are treated as their (real, imaginary) pairs, as PyTorch's optimizers
treat them (`view_as_real`): the kernels run over the real "lanes" of a complex store, two per
element (`lane_values`, `lane_grads`, and the chunk tables count lanes), the state is real and
flat, and a parameter's state tensor is its segment seen as complex, in the parameter's shape.

A parameter whose storage was replaced since (re-pointed by another optimizer, or given a new
buffer) is copied back in at the next step, so the store never updates stale memory.
"""

from __future__ import annotations

import numpy as np

import pykern as pk
from pykern.autograd.version import bump
from pykern.lang.dtypes import DType
from pykern.optim import kernels as ks
from pykern.optim.kernels import CHUNK, compute_dtype, has_master
from pykern.tensor.core.tensor import Tensor, contiguous_strides
from pykern.tensor.core.promotion import complex_of


class FlatStore:
    """The parameters `params` (all of dtype `dtype`; the optimizer's numbers for them are
    `indices`) in flat device buffers."""

    def __init__(self, dtype: DType, params: list[Tensor], indices: list[int]) -> None:
        self.dtype = dtype
        self.indices = indices
        # the kernels' element dtype: a complex store's real and imaginary parts are lanes
        self.lane_dtype = dtype.real_dtype if dtype.is_complex else dtype
        self.lanes_per_element = 2 if dtype.is_complex else 1
        self.compute = compute_dtype(self.lane_dtype)
        self.params = params
        self.starts: list[int] = []
        total = 0
        for p in params:
            self.starts.append(total)
            total += -(-p.size // CHUNK) * CHUNK
        self.total = total
        self.lanes = total * self.lanes_per_element
        self.values = pk.zeros((total,), dtype)
        for k in range(len(params)):
            self._move_in(k)
        self.master = None
        if has_master(self.lane_dtype):
            self.master = self.values.astype(self.compute)
        self.grads = pk.zeros((total,), dtype)
        self.lane_values = self._lanes(self.values)
        self.lane_grads = self._lanes(self.grads)
        self.chunks = self._chunk_table()
        self.unused = pk.zeros((1,), self.compute)  # bound where a kernel's buffer is not used
        self._state: dict[str, Tensor] = {}
        self._hyper: Tensor | None = None

    def hyper(self, columns: int) -> Tensor:
        """The hyperparameter table the step kernel reads (a row per parameter, `columns`
        wide, in the compute dtype): made once, its rows written before each step."""
        t = self._hyper
        if t is None or t.shape[1] != columns:
            # uninitialised: nothing to launch (inside a recording, nothing to record)
            t = self._hyper = pk.empty((max(len(self.params), 1), columns), self.compute)
        return t

    def _chunk_table(self) -> Tensor:
        """Each lane chunk's row: its segment, and how many of its lanes are the segment's
        (the rest is padding)."""
        n = self.lanes_per_element
        table = np.zeros((max(self.lanes // CHUNK, 1), 2), np.int32)
        for k, (p, start) in enumerate(zip(self.params, self.starts)):
            first, end = n * start, n * (start + p.size)
            rows = table[first // CHUNK:-(-end // CHUNK)]
            rows[:, ks.SEGMENT] = k
            rows[:, ks.LANES] = np.clip(end - np.arange(first, first + len(rows) * CHUNK, CHUNK),
                                        0, CHUNK)
        return pk.asarray(table)

    def _lanes(self, flat: Tensor) -> Tensor:
        """The flat tensor `flat` as the kernels see it: its real lanes for a complex store."""
        if not flat.dtype.is_complex:
            return flat
        return Tensor(flat.buffer, (self.lanes,), flat.dtype.real_dtype, None, 2 * flat.offset)

    # ------------------------------------------------------------ the parameters

    def segment(self, flat: Tensor, k: int) -> Tensor:
        """Parameter `k`'s segment of the flat tensor `flat`, in the parameter's shape (of a
        complex store's real state: seen as complex)."""
        p = self.params[k]
        if self.dtype.is_complex and not flat.dtype.is_complex:

            return Tensor(flat.buffer, p.shape, complex_of(flat.dtype), None, self.starts[k])
        return Tensor(flat.buffer, p.shape, flat.dtype, None, self.starts[k])

    def holds(self, k: int) -> bool:
        """Whether parameter `k` still lives in its segment of `values`."""
        p = self.params[k]
        return (p.buffer is self.values.buffer and p.offset == self.starts[k]
                and p.is_contiguous)

    def _move_in(self, k: int) -> None:
        """Copies parameter `k`'s values into its segment and re-points it there."""
        p = self.params[k]
        seg = self.segment(self.values, k)
        if p.size:
            seg[...] = p
        # re-pointed in place, so every reference to the parameter sees the flat storage
        p.buffer = self.values.buffer
        p.offset = self.starts[k]
        p._strides = contiguous_strides(p.shape)

    def rebind(self) -> None:
        """Moves back in the parameters whose storage was replaced since the last step."""
        for k in range(len(self.params)):
            if not self.holds(k):
                self._move_in(k)

    # ------------------------------------------------------------ gradients and state

    def gather(self, grads: list[Tensor | None]) -> list[bool]:
        """Copies the gradients into the flat `grads`; returns which parameters have one."""
        flat = self.grads.buffer
        device = flat.device
        size = self.dtype.itemsize
        copied = False
        for k, g in enumerate(grads):
            if g is None:
                continue
            p = self.params[k]
            if not isinstance(g, Tensor):
                raise TypeError(f"the gradient of a parameter of shape {p.shape} is a "
                                f"{type(g).__name__}, not a pk.Tensor")
            if g.shape != p.shape:
                raise ValueError(f"the gradient of a parameter of shape {p.shape} has shape "
                                 f"{g.shape}")
            if not p.size or (g.buffer is flat and g.offset == self.starts[k]
                              and g.is_contiguous and g.dtype == self.dtype):
                continue  # nothing to copy, or in place already
            if (g.dtype == self.dtype and not self.dtype.is_complex and g.is_contiguous
                    and g.buffer.device is device):
                # the common gradient, a tensor of its own: its bytes (one version bump of
                # the flat buffer for all, below)
                device.copy_buffer(g.buffer, g.offset * size, flat, self.starts[k] * size,
                                   p.size * size)
                copied = True
            else:  # converted, strided, complex or elsewhere: the assignment (it bumps)
                self.segment(self.grads, k)[...] = g
        if copied:
            bump(self.grads)  # as an assignment would: autograd's version counter
        return [g is not None for g in grads]

    def state(self, name: str) -> Tensor:
        """The flat state tensor `name` (compute dtype), zeros when first asked for."""
        t = self._state.get(name)
        if t is None:
            t = self._state[name] = pk.zeros((self.lanes,), self.compute)
        return t

    def has_state(self, name: str) -> bool:
        return name in self._state

    def master_or_unused(self) -> Tensor:
        return self.unused if self.master is None else self.master
