"""The op library's edge: every public op — `pk.*`, the array API namespace, `pk.linalg`,
`pk.fft`, `pk.Tensor`'s methods and operators, numpy's functions and ufuncs on tensors — is
wrapped once, here, so that it

- runs on the device of its tensor operands (`runtime.selection.running_on`), whatever the
  current device is: buffers, constants and launches of the op all land there. Only creation
  functions (no tensor operands) use the current device, or the one `device=` names;
- refuses operands on two devices with a `pk.LaunchError` that names both devices and the
  user's operands (not a kernel's parameters);
- answers `dim=` for a function that takes `axis=` with a TypeError that says so.

Ops called from inside another op are the library's own functions, not these wrappers: they run
on the device the outer op chose.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any

from pykern.errors import LaunchError
from pykern.runtime.selection import device_for, get_device, running_on

# the tensor class, registered by pykern.tensor.core.tensor (which imports this module first)
TENSOR_TYPES: list[type] = []

_WRAPPED: dict[Callable, Callable] = {}  # each function's one wrapper (pk.add is xp.add)

# Tensor methods that start no op (host reads, autograd bookkeeping, protocol answers)
METHODS_LEFT_ALONE = frozenset({
    "__init__", "__repr__", "__str__", "__format__", "__len__", "__bool__", "__int__",
    "__float__", "__complex__", "__index__", "__dlpack__", "__dlpack_device__", "__reduce__",
    "__array__", "__array_namespace__", "numpy", "tolist", "item", "numel", "to", "to_device",
    "requires_grad_", "__iter__", "__contains__", "__hash__", "detach"})

_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
            "pow": "**", "matmul": "@", "and": "&", "or": "|", "xor": "^", "lshift": "<<",
            "rshift": ">>", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">",
            "ge": ">="}


def follows_operands(fn: Callable) -> Callable:
    """`fn` wrapped to run on its tensor operands' device (see the module's docstring); the
    same wrapper for the same function, and a wrapper is returned as it is."""
    if getattr(fn, "__follows_operands__", False):
        return fn
    wrapper = _WRAPPED.get(fn)
    if wrapper is None:
        wrapper = _WRAPPED[fn] = _wrap(fn)
    return wrapper


def _wrap(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def on_operands_device(*args: Any, **kwargs: Any) -> Any:
        if not kwargs and len(args) == 2:  # a binary op's common case, asked cheaply
            a, b = args
            tensor = TENSOR_TYPES[0]
            if type(a) is tensor and type(b) is tensor:
                device = a.buffer.device
                if b.buffer.device is device and device is get_device():
                    return fn(*args)
        if kwargs:
            if "dim" in kwargs:
                _check_dim(fn, kwargs)
            chosen = kwargs.get("device")
            if chosen is not None and "device" in _parameters(fn):
                with running_on(device_for(chosen)):
                    return fn(*args, **kwargs)
        device = _operands_device(args, kwargs)
        if device is None or device is get_device():
            return fn(*args, **kwargs)
        if device is _MIXED:
            raise _mixed_error(fn, args, kwargs)
        with running_on(device):
            return fn(*args, **kwargs)

    on_operands_device.__follows_operands__ = True  # type: ignore[attr-defined]
    return on_operands_device


_MIXED = object()  # operands on more than one device


def _operands_device(args: tuple, kwargs: dict) -> Any:
    """The one device of the tensors among `args` and `kwargs` (inside lists, tuples and
    dicts too, two levels deep: np.concatenate([a, b]) reaches __array_function__ as
    `args=([a, b],)`), None where there are none, `_MIXED` where they differ."""
    found = None
    for value in _tensors(args, 3) if not kwargs else _tensors((*args, kwargs), 3):
        device = value.buffer.device
        if found is None:
            found = device
        elif device is not found:
            return _MIXED
    return found


def _tensors(values: Iterable, depth: int) -> Iterable[Any]:
    tensor = TENSOR_TYPES[0]
    for value in values:
        if isinstance(value, tensor):
            yield value
        elif depth > 1 and isinstance(value, (list, tuple)):
            yield from _tensors(value, depth - 1)
        elif depth > 1 and isinstance(value, dict):
            yield from _tensors(value.values(), depth - 1)


@functools.lru_cache(maxsize=None)
def _parameters(fn: Callable) -> tuple[str, ...]:
    try:
        return tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return ()


def _check_dim(fn: Callable, kwargs: dict) -> None:
    """PyTorch's `dim=` given to a function that takes numpy's `axis=`: a TypeError naming
    `axis=` (instead of Python's bare "unexpected keyword argument")."""
    names = _parameters(fn)
    if "axis" in names and "dim" not in names:
        name = _label(fn)
        raise TypeError(f"{name}() got an unexpected keyword argument 'dim': pykern calls it "
                        f"axis=, as numpy and the array API do ({name}(..., "
                        f"axis={kwargs['dim']!r}))")


def _label(fn: Callable) -> str:
    """How errors name `fn`: `pk.Tensor.sum`, `pk.add` (a function of the library)."""
    qualname = getattr(fn, "__qualname__", getattr(fn, "__name__", repr(fn)))
    return f"pk.{qualname}"


def _mixed_error(fn: Callable, args: tuple, kwargs: dict) -> LaunchError:
    """The error for operands on two devices: both devices, and which operand is on each."""
    named = list(_named_tensors(fn, args, kwargs))
    first_name, first = named[0]
    other_name, other = next((n, t) for n, t in named if t.buffer.device is not
                             first.buffer.device)
    where = _operator_label(fn) or _label(fn)
    return LaunchError(
        f"{where}: its tensors are on two devices: {first_name} on "
        f"{_describe(first.buffer.device)}, {other_name} on {_describe(other.buffer.device)}. "
        f"An op runs on the device of its tensors: move one to the other's device first, "
        f"e.g. {_short(other_name)}.to({first.buffer.device.info.index})")


def _short(name: str) -> str:
    """The operand's name as code: `b` of "b (the right operand)", `t` for the tensor itself."""
    short = name.split(" (")[0]
    return "t" if short == "the tensor" else short


def _operator_label(fn: Callable) -> str:
    name = getattr(fn, "__name__", "")
    core = name.strip("_")
    reflected = core.startswith("r") and core[1:] in _SYMBOLS
    symbol = _SYMBOLS.get(core[1:] if reflected else core.lstrip("i"))
    if not (name.startswith("__") and symbol):
        return ""
    return f"a {symbol} b"


def _named_tensors(fn: Callable, args: tuple, kwargs: dict) -> Iterable[tuple[str, Any]]:
    """(name, tensor) for each tensor operand: its parameter's name (with an index inside a
    sequence), or for an operator the left or right operand."""
    label = _operator_label(fn)
    if label:
        left_first = not getattr(fn, "__name__", "").startswith("__r")
        sides = ("a (the left operand)", "b (the right operand)")
        for i, value in enumerate(args[:2]):
            if isinstance(value, TENSOR_TYPES[0]):
                yield sides[i if left_first else 1 - i], value
        return
    try:
        bound = inspect.signature(fn).bind_partial(*args, **kwargs).arguments
    except (TypeError, ValueError):
        bound = {f"argument {i + 1}": a for i, a in enumerate(args)} | kwargs
    for name, value in bound.items():
        shown = "the tensor" if name == "self" else name
        yield from _with_paths(shown, value, 3)


def _with_paths(name: str, value: object, depth: int) -> Iterable[tuple[str, Any]]:
    if isinstance(value, TENSOR_TYPES[0]):
        yield name, value
    elif depth > 1 and isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _with_paths(f"{name}[{i}]", item, depth - 1)
    elif depth > 1 and isinstance(value, dict):
        for key, item in value.items():
            yield from _with_paths(f"{name}[{key!r}]", item, depth - 1)


def _describe(device: Any) -> str:
    info = device.info
    return f"device [{info.index}] {info.name} ({info.kind})"


def wrap_methods(cls: type) -> None:
    """Wraps every public method and operator `cls` and its bases define (but
    METHODS_LEFT_ALONE), on `cls`."""
    found: dict[str, Any] = {}
    for klass in reversed(cls.__mro__[:-1]):  # a subclass's method hides its base's
        found.update(vars(klass))
    for name, value in found.items():
        if not inspect.isfunction(value) or name in METHODS_LEFT_ALONE:
            continue
        if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
            continue
        setattr(cls, name, follows_operands(value))


def wrap_functions(namespace: dict, names: Iterable[str]) -> None:
    """Replaces each plain function of `namespace` (a module's globals) named in `names` with
    its wrapper."""
    for name in names:
        value = namespace.get(name)
        if inspect.isfunction(value):
            namespace[name] = follows_operands(value)
