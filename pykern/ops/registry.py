"""The registry of ops: every op of the library declared once, as an `Op`.

An op's declaration holds what the rest of the library derives from it: its name and aliases
(numpy's, the array API's, PyTorch's and the ATen operators the PyTorch device maps), the
namespaces that export it (`pk`, `array_api`, `linalg`, `fft`, `nn.functional`), its type rule
in words, its implementations in the order they are tried with the predicate that says where
each applies, its backward, its autocast policy, its doc line and how the test matrix makes its
sample inputs. The registry imports nothing of the op library: the op modules register their
declarations (`register`) and bind their public functions (`bind`), and everything else reads
them here — `pykern/__init__.py` and the array API namespace export `exported("pk")`, the kernel
names that are tensor functions come from `builtin`, the autograd wrapper from `backward`, the
op table of docs/tensor.md and the test matrix from the whole registry.

    op = get("cumsum")
    op.function          # pk.cumsum
    op.backward          # the rule that records its gradient
    op.implementations   # which kernel runs where
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

KINDS = ("unary", "binary", "ternary", "cast", "reduction", "scan", "sort", "index", "shape",
         "creation", "random", "gemm", "conv", "pool", "nn", "complex", "linalg", "fft", "loss")
"""The kinds of op: what sample inputs the test matrix gives an op without samples of its own,
and how docs/tensor.md groups the op table."""

GRAD_RULES = ("formula", "rule", "composite", "inline", "linear", "none", "refused")
"""How an op differentiates: `formula`, an elementwise formula per input (`Op.backward`);
`rule`, a function that runs the forward cut from the graph and records the backward;
`composite`, a composition of differentiable ops that runs while recorded (the forward itself,
or with a `backward`, the composition run instead when an input requires grad); `inline`, the
forward records its backward itself where a part of its result has one (topk's values, not its
indices); `linear`, a layout or linear map that the engine sends back (views, casts,
transforms); `none`, no float result (comparisons, integer ops, indices) so nothing to
differentiate; `refused`, a float result without a backward yet: asking for one is a
NotImplementedError, never a silent zero."""


@dataclass(frozen=True)
class Aliases:
    """The op's names elsewhere: numpy's (`np.<name>`, the first the usual one), the array
    API standard's, PyTorch's (`torch.<name>`) and the ATen operators (`aten::add.Tensor`) the
    PyTorch device maps onto this op. Empty where that library has no such function."""

    numpy: tuple[str, ...] = ()
    array_api: str | None = None
    torch: tuple[str, ...] = ()
    aten: tuple[str, ...] = ()


NO_ALIASES = Aliases()


@dataclass(frozen=True)
class Impl:
    """One implementation of an op: `name` (its kernel or path), `applies(info, *operands)`
    whether it runs on the device `info` describes (the first that applies runs), a doc line,
    and `kernel`, what the op's code runs when it is chosen (a kernel factory, a launcher, or
    the parameter that selects a kernel's form; None where the name says enough). The
    declaration lists them so that a reader, the docs and the tests see every kernel an op may
    run and where; the op's code asks `Op.choose`."""

    name: str
    applies: Callable[..., bool]
    doc: str = ""
    kernel: Any = None


def choose(implementations: tuple[Impl, ...], info: Any, *operands: Any, op: str = "") -> Impl:
    """The first of `implementations` that applies to `operands` on the device `info`
    describes: the one mechanism of kernel choice (`Op.choose`; an op that tries a kernel and
    falls back where the operands' layout turns out not to fit it chooses again among the
    rest)."""
    for impl in implementations:
        if impl.applies(info, *operands):
            return impl
    raise LookupError(f"{op or 'an op'}: no implementation applies")  # the last is portable


def always(info: Any = None, *operands: Any) -> bool:
    """The predicate of an implementation that applies everywhere (the portable one)."""
    return True


class Op:
    """One op of the library (see the module docstring). Compared by identity: dispatch plans
    key on the op object. Kinds of op with data of their own (the elementwise ops' element
    functions and type rules) are subclasses."""

    def __init__(self, name: str, doc: str, kind: str, *, exports: tuple[str, ...] = ("pk",),
                 aliases: Aliases = NO_ALIASES, types: str = "",
                 implementations: tuple[Impl, ...] = (), grad: str = "none",
                 backward: Any = None, complex_grad: bool = False, autocast: str = "none",
                 builtin: Any = None, samples: Any = None, reference: Any = None,
                 function: Callable[..., Any] | None = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"op {name}: unknown kind {kind!r} (one of {KINDS})")
        if grad not in GRAD_RULES:
            raise ValueError(f"op {name}: unknown grad {grad!r} (one of {GRAD_RULES})")
        if autocast not in AUTOCAST:
            raise ValueError(f"op {name}: unknown autocast policy {autocast!r} (one of "
                             f"{AUTOCAST})")
        self.name, self.doc, self.kind = name, doc, kind
        self.exports, self.aliases, self.types = exports, aliases, types
        self.implementations = implementations
        self.grad, self.backward, self.complex_grad = grad, backward, complex_grad
        self.autocast, self.builtin = autocast, builtin
        self.samples, self.reference = samples, reference
        self.function = function

    def choose(self, info: Any, *operands: Any) -> Impl:
        """The first implementation that applies to `operands` on the device `info`
        describes."""
        return choose(self.implementations, info, *operands, op=self.name)

    def __repr__(self) -> str:
        return f"<op {self.name}>"


AUTOCAST = ("none", "lower", "lower_f32_result")
"""Autocast policies (`pk.autocast`): `none`, the op runs in the dtype it is given; `lower`,
f32 operands are converted to the autocast dtype and so is the result (conv2d, attention);
`lower_f32_result`, the same with an f32 result (matmul)."""


_OPS: dict[str, Op] = {}


def register(op: Op) -> Op:
    """Adds `op` to the registry (once per name) and returns it."""
    if op.name in _OPS and _OPS[op.name] is not op:
        raise ValueError(f"op {op.name} is declared twice")
    _OPS[op.name] = op
    return op


def bind(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """Makes `function` the public function of the op `name` (declared before) and returns
    it, so that a module writes `cumsum = bind("cumsum", _cumsum)`."""
    _OPS[name].function = function
    return function


def get(name: str) -> Op:
    """The op declared as `name` (KeyError naming it otherwise)."""
    try:
        return _OPS[name]
    except KeyError:
        raise KeyError(f"no op {name!r} is declared in pykern.ops") from None


def all_ops() -> Iterator[Op]:
    """Every declared op, in the order declared."""
    return iter(tuple(_OPS.values()))


def exported(namespace: str) -> dict[str, Callable[..., Any]]:
    """name -> public function of every op `namespace` exports (`pk`, `array_api`, `linalg`,
    `fft`, `random`, `nn.functional`): under the array API its standard name, in `pk` the
    kernel-language builtin of the op's name where there is one (`pk.exp` runs the op on
    tensors; `pk.where` is the function, `pk.select` the builtin), and the
    ops of a sub-namespace (`linalg.det`) by their own name there."""
    found: dict[str, Callable[..., Any]] = {}
    for op in _OPS.values():
        if namespace not in op.exports or op.function is None:
            continue
        name = (op.aliases.array_api or op.name) if namespace == "array_api" else op.name
        builtin = op.builtin if namespace == "pk" else None
        found[name.rpartition(".")[2]] = builtin if getattr(builtin, "name", None) == name \
            else op.function
    return found


def by_alias(library: str, name: str) -> Op | None:
    """The op that `library` ('numpy', 'array_api', 'torch' or 'aten') calls `name`."""
    for op in _OPS.values():
        value = getattr(op.aliases, library)
        if name == value or (isinstance(value, tuple) and name in value):
            return op
    return None


def unregister(name: str) -> None:
    """Removes the op `name` (for tests that declare an op of their own)."""
    _OPS.pop(name, None)
