"""The ATen names of pykern's op registry on "pykern": every ATen operator an op declares
(`Aliases.aten`) is one of PyTorch's and runs on the device, and the elementwise ops' entries,
which the ATen table derives from the registry, give the CPU's values through the ATen
operator itself."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import pykern as pk  # noqa: E402
import pykern.torch  # noqa: E402,F401
from pykern.ops import all_ops  # noqa: E402
from pykern.torch.from_registry import out_overload  # noqa: E402
from pykern.torch.table import FROM_REGISTRY, TABLE  # noqa: E402

aten = torch.ops.aten
_REGISTERED = {e.overload for e in TABLE}
_COMPOSITE = ("CompositeImplicitAutograd", "CompositeExplicitAutograd")


def _overload(alias: str) -> torch._ops.OpOverload:
    name, _, overload = alias.removeprefix("aten::").partition(".")
    return getattr(getattr(aten, name), overload or "default")


ALIASES = sorted({(op.name, alias) for op in all_ops() for alias in op.aliases.aten})


@pytest.mark.parametrize("op_name,alias", ALIASES, ids=[a for _, a in ALIASES])
def test_every_aten_alias_of_the_registry_runs_on_pykern(op_name, alias):
    """The alias names an ATen overload, and "pykern" runs it: a kernel of its own, one for
    its `out=` overload (a structured operator), or PyTorch's composite kernel, which runs
    other ATen operators."""
    overload = _overload(alias)  # AttributeError: not an ATen operator
    name = overload.name()
    if torch._C._dispatch_has_kernel_for_dispatch_key(name, "PrivateUse1"):
        return
    out = out_overload(alias)
    if out is not None and out in _REGISTERED:
        return
    assert any(torch._C._dispatch_has_kernel_for_dispatch_key(name, key) for key in _COMPOSITE), \
        f"{op_name}: {alias} has no pykern kernel"


def test_the_registry_gives_the_elementwise_entries():
    ops = {e.pk for e in FROM_REGISTRY}
    assert {"pk.exp", "pk.add", "pk.equal", "pk.bitwise_and", "pk.logical_not"} <= ops
    assert len(FROM_REGISTRY) > 60


def _integer_only(op_name: str) -> bool:
    try:
        pk.ops.get(op_name).plan(pk.f32)  # type: ignore[attr-defined]
    except TypeError:
        return True
    return False


def _functional(entry_overload: str) -> list[tuple[str, str]]:
    """The registry's (op, functional alias) pairs whose `out=` overload is this entry."""
    return [(op, alias) for op, alias in ALIASES if out_overload(alias) == entry_overload]


CASES = sorted({pair for e in FROM_REGISTRY for pair in _functional(e.overload)})


def _argument(kind: str, integer: bool, domain: tuple[float, float],
              g: torch.Generator) -> object:
    if kind == "Scalar" or kind == "number":
        return 2 if integer else 1.5
    if integer:
        return torch.randint(0, 6, (3, 5), generator=g, dtype=torch.int32)
    lo, hi = domain
    return torch.rand((3, 5), generator=g) * (hi - lo) + lo


@pytest.mark.parametrize("op_name,alias", CASES, ids=[a for _, a in CASES])
def test_elementwise_ops_through_their_aten_names(op_name, alias):
    """Each derived entry, called through the ATen operator the op declares (float32 in the
    op's sample domain, integers for the bitwise ops), gives the CPU's values."""
    overload = _overload(alias)
    integer = _integer_only(op_name)
    domain = (pk.ops.get(op_name).samples or {}).get("domain", (-2.0, 2.0))
    g = torch.Generator().manual_seed(len(alias))
    args = [_argument(str(a.type), integer, domain, g)
            for a in overload._schema.arguments if not a.kwarg_only]
    expected = overload(*args)
    actual = overload(*[a.to("pykern") if isinstance(a, torch.Tensor) else a for a in args])
    assert actual.device.type == "pykern" and actual.dtype == expected.dtype
    torch.testing.assert_close(actual.cpu(), expected, rtol=1e-4, atol=1e-5, equal_nan=True)
