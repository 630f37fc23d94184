"""`Optimizer`: what the optimizers share — parameter groups, the flat stores, `zero_grad`,
`step` (one fused kernel launch per store) and the state dict.

Parameters are grouped as in PyTorch (`param_groups`, a list of dicts holding `params` and
the hyperparameters, which may be changed between steps). Across all groups, the parameters
of one dtype share one `FlatStore`, so a step is one kernel launch per dtype; each parameter's
row of the hyperparameter table carries its own group's values. (A dtype whose parameters
pass the device's buffer limit gets several stores, and a launch each.) Keys of a group other
than the hyperparameters are kept, as PyTorch keeps them (an LR scheduler's `initial_lr`).

A subclass names its update rule (`rule`, a factory of `pykern.optim.rules`), the state
tensors it keeps in the kernel's state slots (`state_names`, PyTorch's names), whether its
state counts steps, and a parameter's row: the columns that take a group's hyperparameter as it
is (`_copied`) or 1 - it (`_complements`), and `_row` for the others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

import pykern as pk

from pykern.autograd.version import bump
from pykern.jit import compiling
from pykern.lang.dtypes import DType
from pykern.optim import kernels as ks
from pykern.optim.flat import FlatStore
from pykern.optim.grads import get_grad, set_grad
from pykern.optim.no_grad import enable_grad, no_grad
from pykern.optim.params import check_distinct, groups_of
from pykern.tensor.core.tensor import Tensor


class Optimizer:
    """The base of the `pk.optim` optimizers; subclasses give the rule and its row."""

    name = "Optimizer"
    # the update rule's factory: a `@pk.func` of `pykern.optim.rules` for the state slots in
    # use (a bool per slot)
    rule: Callable[[tuple[bool, ...]], pk.Func]
    state_names: tuple[str, ...] = ()  # the state tensors in the kernel's slots, in order
    counts_steps = True  # whether the state has PyTorch's "step"
    row_columns = ks.FIRST_RULE_COLUMN

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.param_groups: list[dict[str, Any]] = groups_of(params, defaults, self.name)
        for group in self.param_groups:
            self._check_group(group)
        self._params: list[Tensor] = [p for g in self.param_groups for p in g["params"]]
        check_distinct(self._params, self.name)
        self._steps = [0] * len(self._params)
        self._build_stores()

    def _build_stores(self) -> None:
        """Moves every parameter into the flat stores (one per dtype, see `_store_layout`)."""
        with no_grad():  # copying the parameters in is no operation of the model's
            self._stores = [FlatStore(d, [self._params[i] for i in ids], ids)
                            for d, ids in _store_layout(self._params, store_limit())]
        # parameter index -> (its store, its segment there)
        self._place = {i: (store, k) for store in self._stores
                       for k, i in enumerate(store.indices)}
        self._group_of = [gi for gi, g in enumerate(self.param_groups) for _ in g["params"]]

    def _follow_dtypes(self) -> None:
        """Rebuilds the stores when a parameter was converted to another dtype since they were
        built (`model.to(dtype)` after the optimizer was made): its store would otherwise
        re-point it at memory of the old dtype, read as the new one. The state is carried
        over, converted to the new compute dtype; a master weight of a converted parameter is
        dropped (the parameter's converted value is the weight now)."""
        if all(self._params[i].dtype == store.dtype for i, (store, _) in self._place.items()):
            return
        kept = {i: entry for i in range(len(self._params)) if (entry := self._param_state(i))}
        for i, entry in kept.items():
            if self._params[i].dtype != self._place[i][0].dtype:
                entry.pop("master_param", None)
        self._build_stores()
        self._load_state(kept)

    def __repr__(self) -> str:
        groups = ", ".join(f"{len(g['params'])} parameters" for g in self.param_groups)
        return f"pk.optim.{self.name}({groups})"

    # ------------------------------------------------------------ the public API

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clears the gradients: `p.grad = None` (PyTorch's default), or with
        `set_to_none=False` zeros in place of each existing gradient (as views of the
        optimizer's flat gradient buffer, one fill launch per dtype)."""
        if set_to_none:
            for p in self._params:
                set_grad(p, None)
            return
        with no_grad():
            self._follow_dtypes()
        for store in self._stores:
            have = [get_grad(store.params[k]) is not None for k in range(len(store.params))]
            if any(have):
                with no_grad():
                    store.grads[...] = 0
            for k, p in enumerate(store.params):
                if have[k]:
                    set_grad(p, store.segment(store.grads, k))

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient (those whose `.grad` is None
        are skipped, their state untouched): one kernel launch per parameter dtype (per
        flat store: see `store_limit`), after
        copying the gradients into the flat gradient buffer. `closure`, when given, is called
        first and its result (the loss) returned."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            self._follow_dtypes()
            for store in self._stores:
                if store.total:
                    self._step_store(store)
        return loss

    def _step_store(self, store: FlatStore) -> None:
        indices = store.indices
        store.rebind()
        active = store.gather([get_grad(self._params[i]) for i in indices])
        if not any(active):
            return
        hyper = store.hyper(self.row_columns)
        self._advance(store, active, hyper)
        # a pk.compile replay repeats the host's part of the step: the counts, the rows
        compiling.on_replay(lambda: self._advance(store, active, hyper))
        self._launch(store, hyper)
        bump(store.values)  # the parameters were written: autograd's version counter

    def _advance(self, store: FlatStore, active: list[bool], hyper: Tensor) -> None:
        """The host's part of a step of `store`: the step counts of the parameters with a
        gradient (`active`), their rows written into `hyper` in queue order (the launch
        after reads them; the one before has read the previous rows), the bookkeeping
        after. The rows are host data, as PyTorch's scalars are: a learning rate changed
        between steps (a scheduler) takes effect at the next one."""
        indices = store.indices
        for i, on in zip(indices, active):
            self._steps[i] += on
        rows = np.empty((len(indices), self.row_columns))
        made: dict[tuple, np.ndarray] = {}  # parameters with equal keys share their row
        for k, (i, on) in enumerate(zip(indices, active)):
            key = self._row_key(i, on)
            row = made.get(key)
            if row is None:
                row = made[key] = self._full_row(i, on)
            rows[k] = row
        compiling.write_unrecorded(hyper.buffer, rows.astype(store.compute.numpy))
        self._after_step(indices, active)

    def _row_key(self, index: int, active: bool) -> tuple:
        """What parameter `index`'s row depends on (its group, its step count, whether it has
        a gradient): parameters with equal keys have equal rows."""
        return (self._group_of[index], self._steps[index], active)

    def _full_row(self, index: int, active: bool) -> np.ndarray:
        """Parameter `index`'s row: the shared columns, then the rule's."""
        g = self._group(index)
        row = np.zeros(self.row_columns)
        row[ks.ACTIVE] = active
        row[ks.MAXIMIZE] = bool(g.get("maximize", False))
        row[ks.WEIGHT_DECAY] = self._l2_weight_decay(g)
        for column, key in self._copied.items():
            row[column] = g[key]
        for column, key in self._complements.items():
            row[column] = 1 - g[key]
        self._row(index, row)
        return row

    def _launch(self, store: FlatStore, hyper: Tensor) -> None:
        """The step kernel over `store`, each state slot bound to its buffer where a
        parameter of the store uses it, else to the placeholder."""
        uses = [any(self._uses(name, i) for i in store.indices) for name in self.state_names]
        uses += [False] * (ks.STATE_SLOTS - len(uses))
        slots = [store.state(name) if used else store.unused
                 for name, used in zip(self.state_names, uses)]
        slots += [store.unused] * (ks.STATE_SLOTS - len(slots))
        rule = self.rule(tuple(uses))
        host = pk.get_device().info.kind == "host"
        kernel = ks.step_kernel(store.lane_dtype, rule, host)
        kernel[store.lanes // ks.CHUNK if host else store.lanes](
            store.lane_values, store.lane_grads, store.master_or_unused(), *slots,
            store.chunks, hyper)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Adds a parameter group (a dict with "params" and any hyperparameters; the
        optimizer's defaults fill the rest), as when unfreezing layers while fine-tuning.

        The new parameters join the flat stores of their dtypes, so a step stays one launch
        per dtype: the stores are rebuilt around all parameters, and the state of the old
        ones (step counts, moment buffers, master weights) is carried over unchanged."""
        if not isinstance(param_group, dict):
            raise TypeError(f"{self.name}.add_param_group: param_group must be a dict, not a "
                            f"{type(param_group).__name__}")
        group = groups_of([param_group], self.defaults, self.name)[0]
        self._check_group(group)
        check_distinct(self._params + group["params"], self.name)
        # the state tensors are views that keep the old stores' buffers alive
        kept = {i: entry for i in range(len(self._params)) if (entry := self._param_state(i))}
        self.param_groups.append(group)
        self._params += group["params"]
        self._steps += [0] * len(group["params"])
        self._build_stores()
        with no_grad():
            self._load_state(kept)

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's layout: {"state": {index: {name: tensor}}, "param_groups": [{..., "params":
        [indices]}]}, parameters numbered in group order. The state tensors are views of the
        optimizer's own buffers (as PyTorch's are its live tensors): the next step changes
        them, so copy them to keep a snapshot."""
        state: dict[int, dict[str, Any]] = {}
        for i in range(len(self._params)):
            entry = self._param_state(i)
            if entry:
                state[i] = entry
        groups, start = [], 0
        for g in self.param_groups:
            n = len(g["params"])
            groups.append({**{k: v for k, v in g.items() if k != "params"},
                           "params": list(range(start, start + n))})
            start += n
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restores what `state_dict()` gave (from this optimizer or one built over parameters of
        the same shapes, in the same groups): hyperparameters, step counts and state."""
        groups = state_dict.get("param_groups") if isinstance(state_dict, dict) else None
        if not isinstance(groups, list) or not isinstance(state_dict.get("state"), dict):
            raise ValueError(f"{self.name}.load_state_dict: state_dict must be a dict with "
                             "'state' and 'param_groups'")
        if len(groups) != len(self.param_groups):
            raise ValueError(f"{self.name}.load_state_dict: the state dict has {len(groups)} "
                             f"parameter groups, the optimizer {len(self.param_groups)}")
        for saved, group in zip(groups, self.param_groups):
            if len(saved.get("params", ())) != len(group["params"]):
                raise ValueError(f"{self.name}.load_state_dict: a parameter group of "
                                 f"{len(saved.get('params', ()))} parameters does not match "
                                 f"one of {len(group['params'])}")
        for saved, group in zip(groups, self.param_groups):
            new = {**group, **{k: v for k, v in saved.items() if k != "params"}}
            self._check_group(new)
            group.update({k: v for k, v in new.items() if k != "params"})
        with no_grad():
            self._load_state(state_dict["state"])

    def _load_state(self, saved: dict[Any, Any]) -> None:
        self._clear_state()
        saved_state = {int(k): v for k, v in saved.items()}
        for i, entry in saved_state.items():
            if not 0 <= i < len(self._params):
                raise ValueError(f"{self.name}.load_state_dict: state for parameter {i}, the "
                                 f"optimizer has {len(self._params)}")
            self._load_param_state(i, entry)

    # ------------------------------------------------------------ the state of a parameter

    def _has_state(self, index: int) -> bool:
        """Whether parameter `index` has state (PyTorch creates it at its first step)."""
        return self._steps[index] > 0

    def _uses(self, name: str, index: int) -> bool:
        """Whether parameter `index` keeps the state tensor `name` (amsgrad's maximum,
        RMSprop's momentum buffer... depend on the group's settings)."""
        return True

    def _param_state(self, index: int) -> dict[str, Any]:
        """PyTorch's state entry of parameter `index`: "step" (a 0-d f32 tensor) where the
        optimizer counts steps, its state tensors (views of the flat buffers, in the
        parameter's shape), and for f16/bf16 parameters the f32 "master_param"."""
        if not self._has_state(index):
            return {}
        store, k = self._where(index)
        state: dict[str, Any] = {}
        if self.counts_steps:
            state["step"] = pk.asarray(np.float32(self._steps[index]))
        for name in self.state_names:
            if self._uses(name, index):
                state[name] = store.segment(store.state(name), k)
        if store.master is not None:
            state["master_param"] = store.segment(store.master, k)
        return state

    def _load_param_state(self, index: int, entry: dict[str, Any]) -> None:
        store, _ = self._where(index)
        if self.counts_steps:
            step = entry.get("step", 0)
            self._steps[index] = int(float(step.item() if isinstance(step, Tensor) else step))
        for name in self.state_names:
            if entry.get(name) is not None:
                self._load_tensor(index, store.state(name), entry[name], name)
        if store.master is not None and "master_param" in entry:
            self._load_tensor(index, store.master, entry["master_param"], "master_param")

    def _clear_state(self) -> None:
        """Forgets every parameter's state (before a load): no steps, state buffers zero."""
        self._steps = [0] * len(self._params)
        for store in self._stores:
            for name in self.state_names:
                if store.has_state(name):
                    store.state(name)[...] = 0

    # ------------------------------------------------------------ for the subclasses

    def _check_group(self, group: dict[str, Any]) -> None:
        raise NotImplementedError

    def _l2_weight_decay(self, group: dict[str, Any]) -> float:
        """The weight decay added to the gradient (every optimizer but AdamW's)."""
        return group.get("weight_decay", 0.0)

    # the rule's columns that hold a group's hyperparameter as it is, and those that hold
    # 1 - the hyperparameter (a weight of a running average): column -> key
    _copied: dict[int, str] = {}
    _complements: dict[int, str] = {}

    def _row(self, index: int, row: np.ndarray) -> None:
        """Fills parameter `index`'s columns of the rule (float64) that `_copied` and
        `_complements` do not."""

    def _after_step(self, indices: list[int], active: list[bool]) -> None:
        """Bookkeeping once the step of a store was launched."""

    def _where(self, index: int) -> tuple[FlatStore, int]:
        """The store holding parameter `index`, and its segment number there."""
        return self._place[index]

    def _group(self, index: int) -> dict[str, Any]:
        return self.param_groups[self._group_of[index]]

    def _load_tensor(self, index: int, flat: Tensor, value: object, what: str) -> None:
        """Copies a saved state tensor `value` into parameter `index`'s segment of `flat`."""
        store, k = self._where(index)
        seg = store.segment(flat, k)
        shape = tuple(getattr(value, "shape", ()))
        if shape != seg.shape:
            raise ValueError(f"{self.name}.load_state_dict: {what} of parameter {index} has "
                             f"shape {shape}, the parameter {seg.shape}")
        if seg.size:
            seg[...] = value if isinstance(value, Tensor) else pk.asarray(np.asarray(value))


# ---------------------------------------------------------------- the flat stores


def store_limit() -> int:
    """The most bytes one flat buffer may hold: the device's maxStorageBufferRange (128 MiB on
    lavapipe), and below 2**31 elements of 4 bytes so that i32 indices reach every one."""
    return min(pk.get_device().limits.max_storage_buffer_range, 2**31 - 1)


def _store_layout(params: list[Tensor], limit: int) -> list[tuple[DType, list[int]]]:
    """The parameters (as indices) of each flat store: one store per dtype, split where the
    largest of its buffers (the values, or state in the compute dtype) would pass `limit`."""
    stores: list[tuple[DType, list[int]]] = []
    filling: dict[DType, list[int]] = {}  # the store of each dtype that is being filled
    filled: dict[DType, int] = {}  # and its bytes so far
    for index, p in enumerate(params):
        width = max(p.dtype.itemsize, ks.compute_dtype(p.dtype).itemsize)
        nbytes = -(-p.size // ks.CHUNK) * ks.CHUNK * width
        if nbytes > limit:
            raise ValueError(f"a parameter of shape {p.shape} ({nbytes:,} bytes with its "
                             f"state) exceeds the device's buffer limit of {limit:,} bytes")
        if p.dtype not in filling or filled[p.dtype] + nbytes > limit:
            filling[p.dtype], filled[p.dtype] = [], 0
            stores.append((p.dtype, filling[p.dtype]))
        filling[p.dtype].append(index)
        filled[p.dtype] += nbytes
    return stores
