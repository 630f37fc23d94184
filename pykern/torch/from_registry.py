"""The ATen entries that pykern's op registry gives: every elementwise op (a row of pykern's
unary or binary table) declares the ATen operators it is (`Aliases.aten`: "aten::exp",
"aten::add.Tensor"), and each of those with an `out=` overload becomes an entry of the ATen
table here, run by the op's public function (`pk.exp`, `pk.add`; for the fused backward
formulas, which pk does not export, the op's own: `gelu_backward`, `silu_backward`).

What the registry cannot say is PyTorch's side of the contract, so it is listed here: where an
ATen operator means something pykern's op does not (`ADAPTED`), and which ops PyTorch computes
in float32 for 16-bit floats because they take several steps (`COMPOUND`). Whether integer
operands are computed as floats follows the op's own type rule (a float result for an integer
operand: computed in the default float dtype, as PyTorch's INT_TO_FLOAT operators).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch

import pykern as pk
from pykern.ops import Op
from pykern.torch import elementwise as ew
from pykern.torch import fresh_results

aten = torch.ops.aten

# ATen operators whose meaning differs from the pykern op's: the pykern function wrapped
ADAPTED: dict[str, Callable[[Callable[..., object]], Callable[..., object]]] = {
    # Vulkan allows these 4096 ULP: computed in float64 where the device has it
    "asin": ew.precise, "acos": ew.precise, "atan": ew.precise, "atan2": ew.precise,
    "sign": lambda fn: ew.sign,  # PyTorch's sign of a bool is the bool; numpy refuses one
    "gelu_backward": ew.gelu_backward,  # pykern's fused one is the erf form only
}

# ops of several steps: PyTorch computes them in float32 for 16-bit floats (`ew.opmath`)
COMPOUND = frozenset({"hypot", "logaddexp"})


def out_overload(alias: str) -> str | None:
    """ATen's `out=` overload of the functional overload `alias` ("aten::add.Tensor" ->
    "add.out", "aten::eq.Scalar" -> "eq.Scalar_out"): the overload with the same arguments
    and an output; None where there is none, or no such operator."""
    name, _, overload = alias.removeprefix("aten::").partition(".")
    packet = getattr(aten, name, None)
    if packet is None or not hasattr(packet, overload or "default"):
        return None  # not an ATen operator of this PyTorch (tests/torch checks pykern's)
    functional = getattr(packet, overload or "default")._schema
    wanted = [(a.name, str(a.type)) for a in functional.arguments]
    for candidate in packet.overloads():
        arguments = getattr(packet, candidate)._schema.arguments
        if any(a.is_out for a in arguments) and \
                [(a.name, str(a.type)) for a in arguments if not a.is_out] == wanted:
            return f"{name}.{candidate}"
    return None


def _computes_in_float(op: Op) -> bool:
    """Whether the op gives a float result for integer operands (its type rule)."""
    return op.plan(pk.i32).result.is_float  # type: ignore[attr-defined]


def _adapter(op: Op, overload: str) -> Callable[..., object]:
    """The ATen kernel of `overload` (an `out=` overload of `op`)."""
    name, _, variant = overload.partition(".")
    fn = ew.function_of(op)
    if name in ADAPTED:
        fn = ADAPTED[name](fn)
    rule = "float" if _computes_in_float(op) else "promote"
    arguments = getattr(getattr(aten, name), variant)._schema.arguments
    if op.kind == "unary":
        impl = ew.unary(fn, rule)
    elif any(a.name == "alpha" for a in arguments):
        impl = ew.binary_alpha(fn)
    else:
        impl = ew.binary(fn, rule, steps=op.name in COMPOUND)
    output = next(a.name for a in arguments if a.is_out)
    return impl if output == "out" else _renamed_output(impl, output)


def _renamed_output(impl: Callable[..., object], output: str) -> Callable[..., object]:
    """`impl` for an overload whose output argument is called `output` ("grad_input")."""
    def kernel(*args: object, **kwargs: object) -> object:
        return impl(*args, out=kwargs.pop(output), **kwargs)
    return kernel


def entries(taken: dict[str, Callable[..., object]]
            ) -> Iterator[tuple[str, str, Callable[..., object]]]:
    """(ATen overload, "pk.<op>", kernel) for every `out=` overload of an elementwise op's
    ATen aliases, but those in `taken` (overload -> kernel: listed by hand, with an adapter of
    their own), and for the functional aliases themselves (`fresh_results`), which run the
    `out=` overload's kernel where their fast path does not apply."""
    seen: set[str] = set()
    for op in ew.elementwise_ops():
        for alias in op.aliases.aten:
            overload = out_overload(alias)
            if overload is None or torch._C._dispatch_has_kernel_for_dispatch_key(
                    f"aten::{overload}", "CompositeImplicitAutograd"):
                continue  # PyTorch decomposes it before it reaches a device (square.out)
            if overload in seen:
                continue
            seen.add(overload)
            out_kernel = taken.get(overload)
            if out_kernel is None:
                out_kernel = _adapter(op, overload)
                yield overload, f"pk.{op.name}", out_kernel
            name = alias.removeprefix("aten::")
            if name not in taken and name not in seen and not _is_out(name) and \
                    _takes_floats(op) and not \
                    torch._C._dispatch_has_kernel_for_dispatch_key(
                        f"aten::{name}", "CompositeImplicitAutograd"):
                seen.add(name)
                yield _functional(op, name, out_kernel)


def _is_out(name: str) -> bool:
    packet, _, variant = name.partition(".")
    return any(a.is_out for a in getattr(getattr(aten, packet), variant or "default")
               ._schema.arguments)


def _takes_floats(op: Op) -> bool:
    """Whether the op runs on float32 (the bitwise ops do not: no fast path to give them)."""
    try:
        op.plan(pk.f32)  # type: ignore[attr-defined]
    except TypeError:
        return False
    return True


def _functional(op: Op, name: str, out_kernel: Callable[..., object]
                ) -> tuple[str, str, Callable[..., object]]:
    packet, _, variant = name.partition(".")
    overload = getattr(getattr(aten, packet), variant or "default")
    fn = ew.function_of(op)
    if packet in ADAPTED:
        fn = ADAPTED[packet](fn)
    tests = op.plan(pk.f32).result == pk.bool_  # type: ignore[attr-defined]
    rule = "float" if _computes_in_float(op) else "promote"
    return (name, f"pk.{op.name}", fresh_results.functional(
        fn, out_kernel, overload, rule, tests, op.name in COMPOUND))
