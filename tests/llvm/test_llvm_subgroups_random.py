"""Random subgroup kernels (tests/kernels/kernelgen.py generates none): each is written to a
module, run on the host, and compared bit for bit with

- the Vulkan device (lavapipe's subgroups are the host's size, 1-D workgroups): random nests
  of divergent `if`s, `for` and `while` loops with `break`, `continue`, `return` and
  barriers around integer reductions, prefix sums and votes (some in conditional
  expressions and on the right of `or`) (where a GPU's results are
  defined; the interpreter does not reconverge after divergent code, so it is no reference
  here);
- the interpreter: straight-line exchanges of every operation on every dtype, then one
  divergent `if` of them (shuffles from inactive lanes included, which the interpreter and
  the host define as the invocation's own value).

    PYKERN_FUZZ_EXAMPLES=500 pytest tests/llvm/test_llvm_subgroups_random.py
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import sys
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from subgroup_diff import compare, interpreted, on_device, on_host

import pykern as pk
from pykern.lang import dtypes as dt

EXAMPLES = int(os.environ.get("PYKERN_FUZZ_EXAMPLES", "25"))
_modules = itertools.count()
fuzz = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="pykern-subgroups-") as d:
        yield d


def load(source: str, directory: str, workgroup: int) -> pk.Kernel:
    """The kernel `k` of `source`, written to a module in `directory` (pykern reads a kernel's
    source from its file)."""
    name = f"_pk_subgroups_{os.getpid()}_{next(_modules)}"
    path = os.path.join(directory, name + ".py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return pk.kernel(module.k, workgroup=(workgroup,))


class Body:
    """The lines of a kernel body being drawn, and how many output columns they write."""

    def __init__(self, draw: st.DrawFn, barriers: bool) -> None:
        self.draw, self.barriers = draw, barriers
        self.lines: list[str] = []
        self.columns = 0

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def column(self) -> int:
        self.columns += 1
        return self.columns - 1

    def condition(self) -> str:
        m, r = self.draw(st.integers(2, 5)), self.draw(st.integers(0, 4))
        return self.draw(st.sampled_from([
            f"s % {m} == {r % m}", f"(pk.subgroup_lane() + {r}) % {m} != 0",
            f"pk.subgroup_any(s % {m} == {r % m})", f"v % {m} == {r % m}"]))


EXCHANGES = ("pk.subgroup_add(v)", "pk.subgroup_min(v)", "pk.subgroup_max(v)",
             "pk.subgroup_prefix_add(v)", "pk.subgroup_add(v) % 5 + pk.subgroup_max(v) % 3",
             "pk.subgroup_add(v) if s % 3 == 0 else pk.subgroup_min(v)",
             "v if s % 2 == 0 or pk.subgroup_any(v % 3 == 0) else pk.subgroup_max(v)")


def statements(body: Body, indent: int, depth: int, loop: str) -> None:
    """1 to 3 statements; `loop` names the innermost loop's kind ('' outside loops)."""
    draw = body.draw
    for _ in range(draw(st.integers(1, 3))):
        kinds = ["exchange", "exchange", "vote", "update"]
        if depth < 2:
            kinds += ["if", "for", "while"]
        if loop:
            kinds += ["break"] + (["continue"] if loop == "for" else [])
        if not body.barriers:
            kinds.append("return")
        elif depth == 0:
            kinds.append("barrier")
        kind = draw(st.sampled_from(kinds))
        if kind == "exchange":
            body.emit(indent, f"out[i, {body.column()}] = {draw(st.sampled_from(EXCHANGES))}")
        elif kind == "vote":
            word = draw(st.sampled_from(["any", "all"]))
            body.emit(indent, f"if pk.subgroup_{word}({body.condition()}):")
            body.emit(indent + 1, f"out[i, {body.column()}] = v")
        elif kind == "update":
            body.emit(indent, draw(st.sampled_from([
                "v += pk.subgroup_prefix_add(v) % 7 + 1", "v = pk.subgroup_prefix_add(v)",
                "v = pk.subgroup_min(v) + pk.subgroup_lane()"])))
        elif kind == "if":
            body.emit(indent, f"if {body.condition()}:")
            statements(body, indent + 1, depth + 1, loop)
            if draw(st.booleans()):
                body.emit(indent, "else:")
                statements(body, indent + 1, depth + 1, loop)
        elif kind == "for":
            bound = draw(st.sampled_from(["s % 4", "3", "pk.subgroup_lane() % 3"]))
            body.emit(indent, f"for j{depth} in range({bound}):")
            statements(body, indent + 1, depth + 1, "for")
        elif kind == "while":
            body.emit(indent, f"w{depth} = 0")
            body.emit(indent, f"while w{depth} < s % 3 + {draw(st.integers(0, 2))}:")
            body.emit(indent + 1, f"w{depth} += 1")
            statements(body, indent + 1, depth + 1, "while")
        elif kind in ("break", "continue", "return"):
            body.emit(indent, f"if {body.condition()}:")
            body.emit(indent + 1, kind)
        else:
            body.emit(indent, "pk.barrier()")


@st.composite
def divergent_kernels(draw: st.DrawFn) -> tuple[str, dt.DType, int, int, int]:
    t = draw(st.sampled_from([dt.i32, dt.u32, dt.i64]))
    body = Body(draw, barriers=draw(st.booleans()))
    statements(body, 1, 0, "")
    source = "\n".join([
        "import pykern as pk", "",
        f"def k(x: pk.{t.name}[:], sel: pk.i32[:], out: pk.{t.name}[:, :]):",
        "    i = pk.global_id(0)", "    v = x[i]", "    s = sel[i]", *body.lines, ""])
    return source, t, max(body.columns, 1), draw(st.integers(1, 40)), draw(st.integers(1, 90))


@fuzz
@given(case=divergent_kernels(), args_seed=st.integers(0, 2**32 - 1))
def test_random_divergent_subgroup_kernels_host_matches_device(case, args_seed, workdir):
    source, t, columns, workgroup, grid = case
    kernel = load(source, workdir, workgroup)
    rng = np.random.default_rng(args_seed)
    n = -(-grid // workgroup) * workgroup  # kernels with barriers run whole workgroups
    info = np.iinfo(t.numpy)
    x = rng.integers(info.min, info.max, n, dtype=t.numpy, endpoint=True)
    args = (x, rng.integers(0, 100, n).astype(np.int32), np.zeros((n, columns), t.numpy))
    compare(on_host(kernel, grid, *args), on_device(kernel, grid, *args),
            f"host vs device for workgroup {workgroup}, grid {grid}:\n{source}")


SHUFFLES = ("pk.subgroup_shuffle(v, lanes[i])", "pk.subgroup_shuffle_xor(v, {c})",
            "pk.subgroup_shuffle_xor(v, lanes[i])", "pk.subgroup_broadcast(v, {c})")
ARITHMETIC = ("pk.subgroup_add(v)", "pk.subgroup_min(v)", "pk.subgroup_max(v)",
              "pk.subgroup_prefix_add(v)")


@st.composite
def straight_kernels(draw: st.DrawFn) -> tuple[str, dt.DType, int, int, int]:
    t = draw(st.sampled_from(dt.ALL_DTYPES))
    ops = SHUFFLES + (("pk.subgroup_any(v)", "pk.subgroup_all(v)") if t == dt.bool_
                      else ARITHMETIC)
    lines, columns = [], 0
    for part, indent in (("top", 1), ("if", 2)):
        if part == "if":
            lines.append("    if sel[i] % 3 != 0:")
        for _ in range(draw(st.integers(1, 4))):
            op = draw(st.sampled_from(ops)).format(c=draw(st.integers(0, 9)))
            lines.append("    " * indent + f"out[i, {columns}] = {op}")
            columns += 1
    source = "\n".join([
        "import pykern as pk", "",
        f"def k(x: pk.{t.name}[:], sel: pk.i32[:], lanes: pk.i32[:], out: pk.{t.name}[:, :]):",
        "    i = pk.global_id(0)", "    v = x[i]", *lines, ""])
    return source, t, columns, draw(st.integers(1, 40)), draw(st.integers(1, 90))


@fuzz
@given(case=straight_kernels(), args_seed=st.integers(0, 2**32 - 1))
def test_random_subgroup_kernels_host_matches_interpreter(case, args_seed, workdir):
    from test_llvm_subgroups import values  # one source of values per dtype

    source, t, columns, workgroup, grid = case
    kernel = load(source, workdir, workgroup)
    rng = np.random.default_rng(args_seed)
    args = (values(t, max(grid, 5))[:grid], rng.integers(0, 100, grid).astype(np.int32),
            rng.integers(-2, 10, grid).astype(np.int32), np.zeros((grid, columns), t.numpy))
    compare(on_host(kernel, grid, *args), interpreted(kernel, grid, *args),
            f"host vs interpreter for workgroup {workgroup}, grid {grid}:\n{source}")
