"""`pk.nn.Module`: the base of every layer. Attributes that are Parameters or Modules are
registered, in assignment order, so that `named_parameters()` and `state_dict()` give
PyTorch's dotted names ("0.weight", "encoder.layers.1.bias") in PyTorch's order. Buffers
(`register_buffer`: state that is not trained, as BatchNorm's running statistics) are kept
beside the parameters; the persistent ones are in `state_dict()`, after the module's own
parameters and before its children's, as in PyTorch."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import pykern as pk
from pykern.jit import compiling
from pykern.lang import dtypes as dt
from pykern.nn.parameter import Parameter
from pykern.tensor.elementwise.functions import as_tensor, assign
from pykern.tensor.core.tensor import Tensor
from pykern.tensor.core.strided import has_internal_overlap


class IncompatibleKeys(NamedTuple):
    """What `load_state_dict(strict=False)` did not match."""

    missing_keys: list[str]
    unexpected_keys: list[str]


class Module:
    """Subclass it, assign Parameters and sub-Modules as attributes in `__init__` (after
    `super().__init__()`) and define `forward`; call the module to run `forward`."""

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # ------------------------------------------------------------ registration

    def __setattr__(self, name: str, value: object) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, (Parameter, Module)) and params is None:
            raise AttributeError(f"cannot assign {type(value).__name__} {name!r} before "
                                 f"Module.__init__() is called")
        if isinstance(value, Parameter):
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            self.add_module(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} as parameter {name!r} "
                                f"(pk.nn.Parameter or None expected)")
            params[name] = None
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} as child module "
                                f"{name!r} (pk.nn.Module or None expected)")
            self._modules[name] = None
        elif params is not None and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign {type(value).__name__} as buffer {name!r} "
                                f"(pk.Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails: parameters and children live in the dicts
        for table in ("_parameters", "_buffers", "_modules"):
            entries = self.__dict__.get(table)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                del table[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Adds (or with None, reserves) the parameter `name`."""
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot register {type(param).__name__} as parameter {name!r} "
                            f"(pk.nn.Parameter or None expected)")
        self._check_name(name)
        self._forget(name)
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Adds the child module `name`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a pk.nn.Module")
        self._check_name(name)
        self._forget(name)
        self._modules[name] = module

    register_module = add_module

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True
                        ) -> None:
        """Adds the buffer `name`: a tensor that belongs to the module's state but is not a
        parameter (no gradient, no optimizer), as BatchNorm's running mean. A persistent
        buffer is in `state_dict()`; a non-persistent one is not. `to(dtype)` converts float
        buffers with the parameters. Assigning `self.name = tensor` later replaces it."""
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot register {type(tensor).__name__} as buffer {name!r} "
                            f"(pk.Tensor or None expected)")
        if isinstance(tensor, Parameter):
            raise TypeError(f"cannot register the Parameter {name!r} as a buffer (use "
                            f"register_parameter)")
        self._check_name(name)
        self._forget(name)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent_buffers_set.add(name)

    def _forget(self, name: str) -> None:
        """Removes `name` from every table (before it is registered anew)."""
        self.__dict__.pop(name, None)
        for table in (self._parameters, self._buffers, self._modules):
            table.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    @staticmethod
    def _check_name(name: str) -> None:
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"a parameter or module name must be a non-empty string without "
                           f"'.', got {name!r}")

    # ------------------------------------------------------------ running

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} defines no forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if compiling.ACTIVE[0] is not None:
            compiling.note_module(self)  # a pk.compile replay checks `training` is the same
        return self.forward(*args, **kwargs)

    # ------------------------------------------------------------ traversal

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """The direct sub-modules with their names, in registration order."""
        seen: set[int] = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """This module ("") and every module under it, depth first, each once."""
        seen: set[int] = set()
        stack: list[tuple[str, Module]] = [(prefix, self)]
        while stack:
            name, m = stack.pop()
            if id(m) in seen:
                continue
            seen.add(id(m))
            yield name, m
            subs = [(f"{name}.{n}" if name else n, c) for n, c in m._modules.items()
                    if c is not None]
            stack.extend(reversed(subs))

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_parameters(self, prefix: str = "", recurse: bool = True
                         ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs, each parameter once, in registration order."""
        return self._named_members("_parameters", prefix, recurse)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True
                      ) -> Iterator[tuple[str, Tensor]]:
        """(dotted name, buffer) pairs, persistent or not, each buffer once."""
        return self._named_members("_buffers", prefix, recurse)

    def _named_members(self, table: str, prefix: str, recurse: bool
                       ) -> Iterator[tuple[str, Any]]:
        """(dotted name, member) pairs of the modules' `table` (`_parameters` or
        `_buffers`), each member once, in registration order."""
        seen: set[int] = set()
        mods = self.named_modules(prefix) if recurse else iter([(prefix, self)])
        for mname, m in mods:
            for name, member in getattr(m, table).items():
                if member is not None and id(member) not in seen:
                    seen.add(id(member))
                    yield (f"{mname}.{name}" if mname else name), member

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn: Callable[[Module], object]) -> Module:
        """Calls fn on every sub-module, then on this one; returns this module."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------ modes and gradients

    def train(self, mode: bool = True) -> Module:
        """Sets training mode (what Dropout looks at) here and below; returns this module."""
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self) -> Module:
        """train(False)."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clears every parameter's .grad: to None, or with set_to_none=False to zeros written
        in place, as PyTorch (a reference to the gradient, such as an optimizer's flat
        buffer, sees them)."""
        for p in self.parameters():
            if compiling.ACTIVE[0] is not None:
                compiling.note_grad_set(p)  # (see set_grad in pykern.optim.grads)
            if set_to_none:
                p.grad = None
            elif p.grad is not None and has_internal_overlap(p.grad):
                p.grad = pk.zeros_like(p.grad)  # a broadcast view: no element of its own
            elif p.grad is not None:
                with pk.no_grad():
                    p.grad[...] = 0

    # ------------------------------------------------------------ state

    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> OrderedDict[str, Tensor]:
        """Every parameter and persistent buffer under its dotted name, module by module (its
        parameters, then its buffers, then its children), as PyTorch orders them; a tensor
        shared by two modules appears under both names. The values share the tensors'
        memory, detached unless keep_vars."""
        out: OrderedDict[str, Tensor] = OrderedDict()
        for name, t in self._named_state(prefix):
            out[name] = t if keep_vars else t.detach()
        return out

    def _named_state(self, prefix: str) -> Iterator[tuple[str, Tensor]]:
        for pname, p in self._parameters.items():
            if p is not None:
                yield prefix + pname, p
        for bname, b in self._buffers.items():
            if b is not None and bname not in self._non_persistent_buffers_set:
                yield prefix + bname, b
        for mname, m in self._modules.items():
            if m is not None:
                yield from m._named_state(f"{prefix}{mname}.")

    def load_state_dict(self, state_dict: dict[str, object], strict: bool = True
                        ) -> IncompatibleKeys:
        """Copies the values of `state_dict` (tensors or arrays) into the parameters and
        persistent buffers of the same names, converted to their dtypes. Shapes must match;
        with strict (the default) the keys must match exactly. Nothing is copied when an
        error is raised."""
        own = dict(self._named_state(""))
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        if strict and unexpected:
            errors.append("Unexpected key(s) in state_dict: " + ", ".join(map(repr, unexpected)))
        if strict and missing:
            errors.append("Missing key(s) in state_dict: " + ", ".join(map(repr, missing)))
        values = {}
        for key, t in own.items():
            if key not in state_dict:
                continue
            v = as_tensor(state_dict[key], f"load_state_dict: {key!r}")
            if v.shape != t.shape:
                errors.append(f"size mismatch for {key!r}: copying a value of shape {v.shape}, "
                              f"the model's tensor has shape {t.shape}")
            values[key] = v
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        with pk.no_grad():
            for key, v in values.items():
                assign(own[key].detach(), v)
        return IncompatibleKeys(missing, unexpected)

    def to(self, *args: object, device: object = None, dtype: object = None) -> Module:
        """Moves every parameter, its .grad and every buffer to `device` (an entry of
        `pk.devices()`, an index or a name as `pk.set_device` takes) and/or converts the float
        ones to the float `dtype`, in place; returns this module: `m.to("host")`,
        `m.to(pk.f64)`, `m.to(1, pk.f32)`. The Parameter objects stay the same (an optimiser
        made before keeps working), as in PyTorch."""
        for arg in args:  # positional: each a dtype or a device, told apart by what it names
            if _is_dtype(arg):
                dtype = arg
            else:
                device = arg
        d = None if dtype is None else dt.as_dtype(dtype)
        if d is not None and not d.is_float:
            raise TypeError(f"Module.to: only float dtypes are allowed, got {d.name}")

        def convert(t: Tensor) -> Tensor:
            t = t.detach() if device is None else t.detach().to(device)
            return t.astype(d) if d is not None and t.dtype.is_float and t.dtype != d else t

        for p in self.parameters():
            moved = convert(p)
            if moved.buffer is not p.buffer or moved.dtype != p.dtype:
                _rebind(p, moved)
            if p.grad is not None:
                p.grad = convert(p.grad)
        for m in self.modules():  # buffers: float ones converted, integer ones kept
            for name, b in m._buffers.items():
                moved = None if b is None else convert(b)
                if moved is not None and (moved.buffer is not b.buffer or moved.dtype != b.dtype):
                    m._buffers[name] = moved
        return self

    def float(self) -> Module:
        return self.to(dt.f32)

    def double(self) -> Module:
        return self.to(dt.f64)

    def half(self) -> Module:
        return self.to(dt.f16)

    # ------------------------------------------------------------ printing

    def extra_repr(self) -> str:
        """The text inside this module's parentheses in repr (a layer's settings)."""
        return ""

    def __repr__(self) -> str:
        lines = [f"({name}): " + repr(m).replace("\n", "\n  ")
                 for name, m in self._modules.items()]
        extra = self.extra_repr()
        if not lines:
            return f"{type(self).__name__}({extra})"
        body = "\n  ".join(([extra] if extra else []) + lines)
        return f"{type(self).__name__}(\n  {body}\n)"


def _is_dtype(value: object) -> bool:
    """Whether a positional argument of `Module.to` names a dtype (else it names a device)."""
    try:
        dt.as_dtype(value)
    except (TypeError, KeyError, ValueError):
        return False
    return not isinstance(value, int)


def _rebind(p: Parameter, data: Tensor) -> None:
    """Points the Parameter `p` at `data`'s memory (a leaf still: it has no grad_fn)."""
    p.buffer, p.shape, p.dtype = data.buffer, data.shape, data.dtype
    p._strides, p.offset = data.element_strides, data.offset
