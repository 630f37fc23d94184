"""Deeply nested expressions: a 600-term sum compiles and runs on the device and in the
interpreter with numpy's answer (the backends get it in shallow pieces, computed in the same
order and under the same conditions); source nested past the limit is a located CompileError,
never a RecursionError."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

import pykern as pk
from pykern import ir
from pykern.frontend.depth import MAX_IR_DEPTH, MAX_NESTING


def load(tmp_path, source: str, name: str = "k"):
    """The function `name` defined by `source`, written to a file (kernels need one)."""
    path = tmp_path / f"deep_{abs(hash(source))}.py"
    path.write_text("import pykern as pk\n\n" + source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name), str(path)


def operands(e: ir.Node) -> list[ir.Expr]:
    out = []
    for value in vars(e).values():
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, ir.Expr):
                out.append(item)
    return out


def ir_depth(e: ir.Expr) -> int:
    return 1 + max((ir_depth(c) for c in operands(e)), default=0)


def deepest(kernel: ir.Kernel) -> int:
    return max(ir_depth(n) for n in ir.walk(kernel) if isinstance(n, ir.Expr))


def sequential_sum(values: np.ndarray) -> np.float32:
    total = np.float32(values[0])
    for v in values[1:]:
        total = np.float32(total + v)
    return total


@pytest.mark.parametrize("interpret", [False, True], ids=["device", "interpreter"])
def test_a_600_term_sum(tmp_path, interpret):
    terms = " + ".join(f"x[{j}]" for j in range(600))
    fn, _ = load(tmp_path, f"def k(x: pk.f32[:], out: pk.f32[:]):\n    out[0] = {terms}\n")
    x = np.random.default_rng(7).standard_normal(600).astype(np.float32)
    out = np.zeros(1, np.float32)
    limit = sys.getrecursionlimit()
    kernel = pk.kernel(fn, interpret=interpret)
    kernel[1](x, out)
    assert out[0] == sequential_sum(x)  # the same roundings in the same order
    assert deepest(kernel.ir(x, out)) <= MAX_IR_DEPTH
    assert sys.getrecursionlimit() == limit  # raised only while translating


def test_the_order_of_evaluation_is_kept(tmp_path):
    # the atomic runs first, so every load after it sees the incremented counter
    loads = " + ".join(["c[0]"] * 100)
    fn, _ = load(tmp_path, "def k(c: pk.i32[:], out: pk.i32[:]):\n"
                           f"    out[0] = pk.atomic_add(c, 0, 1) + ({loads})\n")
    c, out = np.zeros(1, np.int32), np.zeros(1, np.int32)
    pk.kernel(fn)[1](c, out)
    assert out[0] == 100


def test_pieces_of_a_short_circuit_or_a_branch_run_only_when_python_runs_them(tmp_path):
    # in debug mode an out-of-bounds read is an error: reading x[i + 8] for i >= 2 would be one
    deep = " + ".join(["x[i + 8]"] * 80)
    fn, _ = load(tmp_path, "def k(x: pk.f32[:], out: pk.f32[:]):\n"
                           "    i = pk.global_id(0)\n"
                           f"    if i < 2 and ({deep}) > 0.0:\n"
                           "        out[i] = 1.0\n"
                           f"    out[i] += ({deep}) if i < 2 else -1.0\n"
                           f"    out[i] += 0.0 if i >= 2 or ({deep}) > 0.0 else 5.0\n")
    x = np.arange(10, dtype=np.float32)
    x[8] = -1.0
    out = np.zeros(4, np.float32)
    pk.kernel(fn, debug=True)[4](x, out)
    np.testing.assert_array_equal(out, [-80.0 + 5.0, 1.0 + 9 * 80, -1.0, -1.0])
    out_i = np.zeros(4, np.float32)
    pk.kernel(fn, interpret=True, debug=True)[4](x, out_i)
    np.testing.assert_array_equal(out_i, out)


def test_a_deep_while_condition_is_tested_on_every_iteration(tmp_path):
    deep = " + ".join(["j"] * 50)
    fn, _ = load(tmp_path, "def k(out: pk.i32[:], n: pk.i32):\n"
                           "    j = 0\n"
                           "    steps = 0\n"
                           f"    while ({deep}) < n:\n"
                           "        j += 1\n"
                           "        steps += 1\n"
                           "        if steps > 100:\n"
                           "            break\n"
                           "        if j % 2 == 1:\n"
                           "            continue\n"
                           "    out[0] = steps\n")
    out = np.zeros(1, np.int32)
    pk.kernel(fn)[1](out, 500)
    assert out[0] == 10  # the first j with 50 * j >= 500


def test_nesting_past_the_limit_is_a_located_compile_error(tmp_path):
    terms = " + ".join(["s"] * (2 * MAX_NESTING))  # Python compiles this; pykern refuses it
    fn, path = load(tmp_path, f"def k(out: pk.f32[:], s: pk.f32):\n    out[0] = {terms}\n")
    with pytest.raises(pk.CompileError) as info:
        pk.kernel(fn)[1](np.zeros(1, np.float32), 1.0)
    assert str(info.value).startswith(f"{path}:4:14: expression nested too deeply")
    assert (info.value.line, info.value.col) == (4, 14)


def test_absurd_nesting_is_a_located_compile_error_too(tmp_path):
    # 100,000 terms: Python itself cannot compile that, so the function is compiled from a
    # stub while its file holds the real source, which the frontend then reads
    path = tmp_path / "absurd.py"
    path.write_text("def k(out: pk.f32[:], s: pk.f32):\n    out[0] = " +
                    " + ".join(["s"] * 100_000) + "\n")
    namespace = {"pk": pk}
    exec(compile("def k(out: pk.f32[:], s: pk.f32):\n    pass\n", str(path), "exec"), namespace)
    with pytest.raises(pk.CompileError) as info:
        pk.kernel(namespace["k"])[1](np.zeros(1, np.float32), 1.0)
    if sys.version_info >= (3, 11):  # the parser refuses it: the error names the function
        assert str(info.value).startswith(f"{path}:1:1: cannot compile k: an expression is "
                                          "nested too deeply")
    else:  # 3.10's parser takes it, and the frontend's own limit locates the expression
        assert str(info.value).startswith(f"{path}:2:14: expression nested too deeply")


def test_ir_walk_is_iterative():
    e: ir.Expr = ir.Const(value=0, type=pk.i32)
    for k in range(1, 5001):
        e = ir.BinOp(op=ir.BinOpKind.ADD, lhs=e, rhs=ir.Const(value=k, type=pk.i32),
                     type=pk.i32)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        nodes = list(ir.walk(e))
    finally:
        sys.setrecursionlimit(limit)
    assert len(nodes) == 10_001 and nodes[0] is e  # each node before its children
    assert [n.value for n in nodes if isinstance(n, ir.Const)][:3] == [0, 1, 2]
