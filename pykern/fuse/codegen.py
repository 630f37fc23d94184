"""pykern source text for one fused kernel: the values of a group of same-shaped nodes.

The kernel reads each input once per element, computes every node of the group's graph in
order (one local per node, a comment naming the op), and stores each output. It indexes its
arrays as the generic elementwise kernels do (`pykern.tensor.core.strided.plan` decides which form
a launch gets): flat (`x[i]`, contiguous operands collapse to this), over a 2-D grid of rows
(host device), or through one 4-D unravelled index. One source text is made per form, so the
text of a contiguous call is just loads, arithmetic and stores.

Scalars (the call's Python numbers and the function's literals) are kernel arguments, not
literals in the text: the compiled kernel does not depend on their values, and no literal
zero reaches a driver that folds `x * 0.0`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pykern.fuse.nodes import Apply, Constant, Input, Node
from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType

# the type a scalar argument of each dtype travels in (push constants of 8 and 16 bits need
# device features; the value is rounded to its dtype on the host, so nothing changes)
_SCALAR_CARRIER = {dt.f16: dt.f32, dt.bf16: dt.f32, dt.i8: dt.i32, dt.i16: dt.i32,
                   dt.u8: dt.u32, dt.u16: dt.u32}


# result dtypes whose element functions return exactly that type when their operands have it
_PLAIN = (dt.f32, dt.i32, dt.bool_)


def scalar_carrier(d: DType) -> DType:
    """The dtype of the kernel argument that carries a scalar of dtype `d`."""
    return _SCALAR_CARRIER.get(d, d)


@dataclass
class Group:
    """The nodes one kernel computes, in order: its `inputs` (distinct Input nodes), its
    `constants`, the `outputs` it stores and every node between (`order`, dependencies
    first)."""

    outputs: list[Node]
    inputs: list[Input] = field(default_factory=list)
    constants: list[Constant] = field(default_factory=list)
    order: list[Node] = field(default_factory=list)
    # id(an Input node) -> the first Input node of the same tensor, which the text reads
    alias: dict[int, Node] = field(default_factory=dict)
    # the compiled kernel of each indexing form, kept with the group by pykern.fuse.fused
    kernels: dict[int, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        seen: set[int] = set()
        for out in self.outputs:
            self._visit(out, seen)

    def _visit(self, node: Node, seen: set[int]) -> None:
        stack: list[tuple[Node, bool]] = [(node, False)]
        while stack:  # iterative: a long chain of ops must not hit the recursion limit
            n, expanded = stack.pop()
            if id(n) in seen:
                continue
            if expanded or not isinstance(n, Apply):
                seen.add(id(n))
                self._add(n)
                continue
            stack.append((n, True))
            stack.extend((o, False) for o in reversed(n.operands))

    def canonical(self, n: Node) -> Node:
        """The node whose local holds `n`'s value (another Input of the same tensor)."""
        return self.alias.get(id(n), n)

    def _add(self, n: Node) -> None:
        if isinstance(n, Input):
            same = next((i for i in self.inputs if same_input(i, n)), None)
            if same is not None:
                self.alias[id(n)] = same
                return
            self.inputs.append(n)
        elif isinstance(n, Constant):
            self.constants.append(n)
        self.order.append(n)


def same_input(a: Input, b: Input) -> bool:
    """Whether two Input nodes read the same tensor (one argument, or one captured tensor)."""
    if a.captured is not None or b.captured is not None:
        return a.captured is b.captured
    return a.index == b.index


def kernel_source(name: str, group: Group, nd: int, func_names: dict[int, str]) -> str:
    """The text of `group`'s kernel for indexing form `nd` (strided.plan's: 1 flat, 2 rows, 4
    unravelled; on a GPU the spread pass gives the flat form several elements per
    invocation); `func_names` maps id(element function) to the name the text calls it by."""
    names, types, scalars = scalar_params(group)
    params = [f"x{k}: pk.Array" for k in range(len(group.inputs))]
    params += [f"out{k}: pk.Array" for k in range(len(group.outputs))]
    index = {1: "i", 2: "r0, r1, r2, i", 4: "idx"}[nd]
    body = ["i = pk.global_id(0)"]
    if nd == 2:
        body.append("r0, r1, r2 = pk.unravel(pk.global_id(1), "
                    "(out0.shape[0], out0.shape[1], out0.shape[2]))")
    elif nd == 4:
        body.append("idx = pk.unravel(i, out0.shape)")
    body += _element_at(group, index, names, types, func_names)
    return function_text(name, params + scalars, f"Fused by @pk.fuse: {describe(group)}.", body)


def _element_at(group: Group, index: str, names: dict[int, str], types: dict[int, DType],
                func_names: dict[int, str], suffix: str = "") -> list[str]:
    """Loads, computing and stores of every output at element `index`."""
    loads, computes = element_lines(group, index, names, types, func_names, suffix)
    return loads + computes + _stores(group, index, names)


def _stores(group: Group, index: str, names: dict[int, str]) -> list[str]:
    return [f"out{k}[{index}] = {names[id(group.canonical(out))]}"
            for k, out in enumerate(group.outputs)]


def scalar_params(group: Group) -> tuple[dict[int, str], dict[int, DType], list[str]]:
    """The names and types of the group's constants, and their parameter declarations."""
    names: dict[int, str] = {}
    types: dict[int, DType] = {}
    params = []
    for k, c in enumerate(group.constants):
        names[id(c)] = f"c{k}"
        types[id(c)] = scalar_carrier(c.dtype)
        params.append(f"c{k}: pk.{types[id(c)].name}")
    return names, types, params


def element_lines(group: Group, index: str, names: dict[int, str], types: dict[int, DType],
                  func_names: dict[int, str], suffix: str = "") -> tuple[list[str], list[str]]:
    """The statements computing every node of `group` at element `index`: the loads, then
    the rest (each value in a local `v<k><suffix>`, whose name and type go into `names` and
    `types`)."""
    loads, computes = [], []
    count = 0
    for n in group.order:
        if isinstance(n, Constant):
            continue
        var = names[id(n)] = f"v{count}{suffix}"
        count += 1
        types[id(n)] = n.dtype
        if isinstance(n, Input):
            loads.append(f"{var} = x{group.inputs.index(n)}[{index}]")
            continue
        assert isinstance(n, Apply), n
        computes.append(f"{var} = {_apply_text(n, group, names, types, func_names)}  # {n.name}")
    return loads, computes


def function_text(name: str, params: list[str], doc: str, body: list[str],
                  decorator: str = "@pk.kernel") -> str:
    """A kernel's text: the decorator, the def line, the docstring and the body."""
    lines = [decorator]
    lines += [f"def {name}({', '.join(params)}):", f'    """{doc}"""']
    lines += [f"    {line}" for line in body]
    return "\n".join(lines) + "\n"


def describe(group: Group) -> str:
    """The ops of `group`, in order, for the kernel's docstring."""
    return ", ".join(_ops(group)) or "a copy"


def _apply_text(n: Apply, group: Group, names: dict[int, str], types: dict[int, DType],
                func_names: dict[int, str]) -> str:
    if n.fn is None:
        return f"pk.{n.dtype.name}({n.fill!r})"
    args = []
    for operand, convert in zip(n.operands, n.converts):
        operand = group.canonical(operand)
        text = names[id(operand)]
        args.append(text if types[id(operand)] == convert else f"pk.{convert.name}({text})")
    call = f"{func_names[id(n.fn)]}({', '.join(args)})"
    if n.dtype in _PLAIN and all(c == n.dtype for c in n.converts):
        return call  # computed and stored in one of the types literals cannot widen
    return f"pk.{n.dtype.name}({call})"


def _ops(group: Group) -> list[str]:
    seen: list[str] = []
    for n in group.order:
        if isinstance(n, Apply) and n.name not in seen:
            seen.append(n.name)
    return seen
