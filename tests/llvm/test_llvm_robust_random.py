"""Random index expressions on the host device: each kernel reads `x[E2]` and adds it to
`y[E1]` atomically, with E1 and E2 random integer expressions (+ - * // % min max, negation,
conditional expressions) of the invocation's id, a loop's variable and two scalars, inside a
random loop and guard; each runs with several scalars and grids, so that the workgroup proofs
(`pykern.llvm.proofs`) hold for some workgroups and not for others. Every result is compared
with a Python model of the rule: an element address outside the buffer is not touched and
reads 0. A proof that held where an access went outside would show here as a wrong count, a
changed neighbour or a crash.
"""

from __future__ import annotations

import importlib.util
import random
import sys

import numpy as np
import pytest

import pykern as pk

KERNELS = 30
SEED = 20261207


@pytest.fixture(autouse=True)
def host():
    previous = pk.get_device()
    device = pk.set_device("host")
    yield device
    pk.set_device(previous.info.index)


def wrap(v: int) -> int:
    return (v + (1 << 31)) % (1 << 32) - (1 << 31)


class Expr:
    """A random expression as kernel source and as a Python function of its variables."""

    def __init__(self, source: str, value):
        self.source, self.value = source, value


def expression(rng: random.Random, names: list[str], depth: int) -> Expr:
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.3:
            c = rng.randint(-6, 6)
            return Expr(f"({c})", lambda env, c=c: c)
        name = rng.choice(names)
        return Expr(name, lambda env, name=name: env[name])
    kind = rng.choice(["+", "-", "*", "//", "%", "min", "max", "neg", "if"])
    a = expression(rng, names, depth - 1)
    if kind == "neg":
        return Expr(f"(-{a.source})", lambda env: wrap(-a.value(env)))
    if kind in ("*", "//", "%"):
        c = rng.choice([1, 2, 3, 4, 5, 7, 16, 1000, -3]) if kind == "*" else rng.randint(1, 9)
        ops = {"*": lambda u: wrap(u * c), "//": lambda u: u // c, "%": lambda u: u % c}
        op = ops[kind]
        return Expr(f"({a.source} {kind} {c})", lambda env: op(a.value(env)))
    b = expression(rng, names, depth - 1)
    if kind == "+":
        return Expr(f"({a.source} + {b.source})", lambda env: wrap(a.value(env) + b.value(env)))
    if kind == "-":
        return Expr(f"({a.source} - {b.source})", lambda env: wrap(a.value(env) - b.value(env)))
    if kind in ("min", "max"):
        f = min if kind == "min" else max
        return Expr(f"{kind}({a.source}, {b.source})",
                    lambda env: f(a.value(env), b.value(env)))
    c = expression(rng, names, depth - 1)
    return Expr(f"({b.source} if {a.source} < {c.source} else {a.source})",
                lambda env: b.value(env) if a.value(env) < c.value(env) else a.value(env))


class Generated:
    def __init__(self, rng: random.Random, index: int):
        ids = ["i", "a", "b"]
        lo, hi = expression(rng, ids, 1), expression(rng, ids, 2)
        # at most 12 iterations per invocation, bounded by a min as kernels often are
        self.lo = lo
        self.hi = Expr(f"min({hi.source}, {lo.source} + 12)",
                       lambda env: min(hi.value(env), wrap(lo.value(env) + 12)))
        self.guard = rng.choice([None, "if", "return"])
        self.g1, self.g2 = expression(rng, ids + ["k"], 1), expression(rng, ids + ["k"], 2)
        self.e1, self.e2 = expression(rng, ids + ["k"], 3), expression(rng, ids + ["k"], 3)
        self.name = f"random_access_{index}"
        access = f"pk.atomic_add(y, {self.e1.source}, x[{self.e2.source}] + 1)"
        lines = ["import pykern as pk", "", "", "@pk.kernel",
                 f"def {self.name}(x: pk.i32[:], y: pk.i32[:], a: int, b: int):",
                 "    i = pk.global_id(0)",
                 f"    for k in range({self.lo.source}, {self.hi.source}):"]
        if self.guard == "if":
            lines += [f"        if {self.g1.source} < {self.g2.source}:", f"            {access}"]
        elif self.guard == "return":
            lines += [f"        if {self.g1.source} >= {self.g2.source}:", "            return",
                      f"        {access}"]
        else:
            lines += [f"        {access}"]
        self.source = "\n".join(lines) + "\n"

    def expected(self, grid: int, a: int, b: int, xs: np.ndarray, ny: int) -> np.ndarray:
        y = [0] * ny
        for i in range(grid):
            env = {"i": i, "a": a, "b": b}
            for k in range(self.lo.value(env), self.hi.value(env)):
                env["k"] = k
                g = self.guard is None or (self.g1.value(env) < self.g2.value(env))
                if self.guard == "return" and not g:
                    break
                if not g:
                    continue
                src, dst = self.e2.value(env), self.e1.value(env)
                value = int(xs[src]) if 0 <= src < len(xs) else 0
                if 0 <= dst < ny:
                    y[dst] = wrap(y[dst] + value + 1)
        return np.array(y, np.int32)


def load(gen: Generated, directory) -> object:
    path = directory / f"{gen.name}.py"
    path.write_text(gen.source)
    spec = importlib.util.spec_from_file_location(f"_pk_{gen.name}_{id(directory)}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # inspect finds the source through the module
    spec.loader.exec_module(module)
    return getattr(module, gen.name)


@pytest.mark.parametrize("index", range(KERNELS))
def test_random_indices_stay_inside_their_buffers(tmp_path, index):
    rng = random.Random(SEED + index)
    gen = Generated(rng, index)
    kernel = load(gen, tmp_path)
    for _ in range(4):
        grid, nx, ny = rng.choice([1, 7, 64, 300]), rng.randint(1, 80), rng.randint(1, 80)
        a, b = rng.randint(-12, 40), rng.randint(-12, 40)
        xs = np.arange(1, nx + 1, dtype=np.int32)
        before = pk.full((64,), -7, dtype=pk.i32)
        y = pk.zeros(ny, dtype=pk.i32)
        after = pk.full((64,), -7, dtype=pk.i32)
        kernel[grid](pk.asarray(xs), y, a, b)
        expected = gen.expected(grid, a, b, xs, ny)
        assert np.array_equal(y.numpy(), expected), \
            f"{gen.source}\ngrid={grid} a={a} b={b} nx={nx} ny={ny}"
        assert np.all(before.numpy() == -7) and np.all(after.numpy() == -7)
