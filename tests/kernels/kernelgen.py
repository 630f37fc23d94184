"""Random small kernels for differential testing: the Vulkan device against the interpreter.

`KernelGenerator` writes the source of a random, well-typed, well-defined `@pk.kernel` function:
typed locals of every dtype the device has, expressions (arithmetic, comparisons incl. chained,
`and/or/not`, bit operations and shifts, conditional expressions, casts, `abs/min/max`, math
functions), `if/elif/else`, `for ... in range(...)` with 1 to 3 arguments and negative steps,
`while` loops with a counter, `break`/`continue`, augmented assignment and early `return`;
`pk.local` arrays, stored to and swapped at loop-variable indices (`buf[j % L]`, `buf[(j + 1) %
L]`) in loops with run-time bounds; integer arithmetic, `//`, `%` and comparisons that mix
widths and signedness. Some kernels exchange values through `pk.shared` memory across
`pk.barrier()`s with a grid that ends inside the last workgroup (such kernels are not masked:
the invocations past the grid run and take part, and only those inside store), and some read a
variable that an `if` without `else`, an `elif` chain or a loop may leave unassigned, which must
be a compile error naming it on the device and in the interpreter alike (and is not when every
path assigns it). Each local, and each element of each local array, ends up in an output
array; `check` launches the kernel on the device and in the interpreter and `compare` checks
the outputs against each other.

Every choice goes through a `Chooser`, so the same generator serves hypothesis (`HypothesisChooser`:
every choice is a draw, and hypothesis shrinks a failing kernel by shrinking its draws toward
0, the simplest option) and plain seeded exploration (`RandomChooser`, used by
`python tests/kernels/kernelgen.py --count 1000 --seed 7`).

Undefined behaviour is never generated (see ../../pykern/ir/nodes.py and ../../pykern/interpret for
what the IR defines):
- integer `//` and `%` divide by `(d | 1)`, `max(abs(d), 1)` or a non-zero literal;
- shift counts are masked to `0 .. bits - 1` of the shifted type;
- float -> int conversions clamp first, to bounds the float type represents exactly
  (NaN stays NaN through `min`/`max`, numpy's rule, and converts to 0 on both backends);
- integer `**` has an exponent in 0..7; float `**` has a base `abs(x)` or an integral exponent;
- every loop runs a handful of iterations (lavapipe caps an invocation at 65,535);
- array indices are `i` or `(expr) % len(x)`, and `(expr) % L` for a local array of length L;
- no float arguments outside the domain where Vulkan promises any precision (sin/cos on
  [-pi, pi], ...), and f64 gets no transcendental functions (GLSL.std.450 has none).

Floats are compared in two ways. Each float local is *exact* or *approximate*, fixed when it is
declared. Exact ones are only ever assigned expressions of correctly rounded operations (`+ - *`,
`//`, `%`, `abs`, `min`, `max`, `floor`, `ceil`, `trunc`, `round`, `copysign`, conversions): the
device must match the interpreter bit for bit (NaN equal to NaN). Approximate ones may also use
`/`, `**` and the transcendental functions, which have ULP tolerances on the device: they are
compared with a relative tolerance scaled to the magnitudes involved. Integers and bools are
always exact, so a discontinuous operation (comparison, float -> int conversion, floor, `//`,
`%`, `copysign`'s sign, isnan/isinf) only ever takes exact operands: an approximation error can
never flip a branch. `copysign`'s sign is never a NaN either: the sign bit of a NaN that an
operation makes is the device's.

Known bugs (pykern's and lavapipe's) the generator steers around are listed in `KNOWN_BUGS`;
each has a minimal xfail test in test_random_kernels.py. When one is fixed, its xfail test
starts passing (strict xfail: the suite says so) and the workaround here can go.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import math
import os
import random
import re
import sys
import tempfile
import textwrap
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

import pykern as pk

X = TypeVar("X")

# ---------------------------------------------------------------- known bugs worked around

KNOWN_BUGS = {
    "signed zero, inf and nan folding": "test_known_bug_lavapipe_folds_float_zero_constants: "
    "lavapipe folds x * 0.0 to 0.0 (wrong for inf, nan, -x), x + 0.0 to x (wrong for -0.0) and "
    "x / 0.0 to 0.0, even where the module declares SignedZeroInfNanPreserve. Float literals "
    "are never 0, float locals are never assigned a literal, `/` divides by a literal, "
    "abs(x) + 0.5 or an array element/scalar parameter, and exact comparisons treat -0.0 as "
    "0.0. A float that the driver can still prove 0 (say pk.f32(j) of a loop "
    "variable in an unrolled loop) can slip through, rarely",
}


# ---------------------------------------------------------------- dtypes


@dataclass(frozen=True)
class DT:
    """What the generator needs to know of a dtype."""

    name: str  # pykern name: "i32"
    kind: str  # "b", "i", "u", "f"
    bits: int

    @property
    def np(self) -> np.dtype:
        return getattr(pk, self.name).numpy

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    @property
    def signed(self) -> bool:
        return self.kind in "if"

    @property
    def lo(self) -> int:
        return -(1 << (self.bits - 1)) if self.kind == "i" else 0

    @property
    def hi(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.kind == "i" else (1 << self.bits) - 1

    @property
    def pk(self) -> str:
        return f"pk.{self.name}"

    def __repr__(self) -> str:
        return self.name


BOOL = DT("bool_", "b", 8)
I8, I16, I32, I64 = DT("i8", "i", 8), DT("i16", "i", 16), DT("i32", "i", 32), DT("i64", "i", 64)
U8, U16, U32, U64 = DT("u8", "u", 8), DT("u16", "u", 16), DT("u32", "u", 32), DT("u64", "u", 64)
F16, F32, F64 = DT("f16", "f", 16), DT("f32", "f", 32), DT("f64", "f", 64)
ALL_DTYPES = (I32, F32, U32, BOOL, I64, F64, I16, U8, F16, I8, U16, U64)

# device features each dtype needs (for arrays of it and arithmetic on it)
NEEDS = {
    I8: ("int8", "storage8"), U8: ("int8", "storage8"), BOOL: ("storage8",),
    I16: ("int16", "storage16"), U16: ("int16", "storage16"), F16: ("fp16", "storage16"),
    I64: ("int64",), U64: ("int64",), F64: ("fp64",),
}


def device_dtypes(features: object) -> tuple[DT, ...]:
    """The dtypes `features` (a device's `info.features`) support, in ALL_DTYPES's order."""
    return tuple(t for t in ALL_DTYPES
                 if all(getattr(features, f, False) is True for f in NEEDS.get(t, ())))


def arithmetic(t: DT) -> DT:
    """bool takes part in arithmetic as i32 (docs/language.md, Promotion)."""
    return I32 if t.is_bool else t


def promote(a: DT, b: DT) -> DT:
    """The common type of two typed operands, as docs/language.md defines it."""
    if a == b:
        return a
    a, b = arithmetic(a), arithmetic(b)
    if a == b:
        return a
    if a.is_float or b.is_float:
        return max((t for t in (a, b) if t.is_float), key=lambda t: t.bits)
    if a.kind == b.kind:
        return a if a.bits >= b.bits else b
    unsigned, signed = (a, b) if a.kind == "u" else (b, a)
    return unsigned if unsigned.bits >= signed.bits else signed


# float -> int conversions clamp to these first: bounds inside the int type's range that f32 and
# f64 hold exactly (f16 sources use CLAMP_F16)
CLAMP = {I8: (-128, 127), U8: (0, 255), I16: (-32768, 32767), U16: (0, 65535),
         I32: (-2000000000, 2000000000), U32: (0, 4000000000),
         I64: (-4000000000000000000, 4000000000000000000), U64: (0, 18000000000000000000)}
CLAMP_F16 = {I8: (-128, 127), U8: (0, 255), I16: (-32768, 32000), U16: (0, 60000),
             I32: (-60000, 60000), U32: (0, 60000), I64: (-60000, 60000), U64: (0, 60000)}

# float functions by arity; f64 has only the ones GLSL.std.450 defines for it
APPROX_UNARY = ("sqrt", "rsqrt", "exp", "exp2", "log", "log2", "sin", "cos", "tan", "asin",
                "acos", "atan", "sinh", "cosh", "tanh", "erf")
F64_APPROX_UNARY = ("sqrt", "rsqrt")
EXACT_UNARY = ("floor", "ceil", "trunc", "round")


# ---------------------------------------------------------------- choosers


class Chooser:
    """Source of the generator's choices. Subclasses give `integer`; every other choice is
    built on it, with option 0 (the first, simplest) where a shrinker drives values to 0."""

    def integer(self, lo: int, hi: int) -> int:
        raise NotImplementedError

    def pick(self, options: Sequence[X], weights: Sequence[int] | None = None) -> X:
        if not options:
            raise ValueError("nothing to pick from")
        if weights is None:
            return options[self.integer(0, len(options) - 1)]
        r = self.integer(0, sum(weights) - 1)
        for option, w in zip(options, weights):
            if r < w:
                return option
            r -= w
        raise AssertionError("unreachable")

    def chance(self, percent: int) -> bool:
        """True with probability `percent`/100; shrinks to False."""
        return self.integer(0, 99) >= 100 - percent


class RandomChooser(Chooser):
    def __init__(self, seed: int) -> None:
        self.rnd = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rnd.randint(lo, hi)


class HypothesisChooser(Chooser):
    """Choices drawn from a hypothesis `draw` (inside `st.composite` or `st.data()`)."""

    def __init__(self, draw: Callable[[Any], Any]) -> None:
        from hypothesis import strategies as st

        self.draw, self.st = draw, st

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(self.st.integers(lo, hi))


# ---------------------------------------------------------------- the generated kernel


@dataclass
class Var:
    name: str
    type: DT
    exact: bool = True  # floats only: assigned correctly rounded expressions only
    slot: int = -1  # index in its output array
    lo: int | None = None  # loop variables: bounds of the value (None: unknown)
    hi: int | None = None


@dataclass(frozen=True)
class LocalArray:
    """A `pk.local` array of the kernel: its elements are compared like locals."""

    name: str
    type: DT
    length: int

    @property
    def elements(self) -> list[Var]:
        return [Var(f"{self.name}[{q}]", self.type, True, q) for q in range(self.length)]


@dataclass(frozen=True)
class E:
    """A generated expression: its source, its type (None for an untyped Python literal, whose
    type the context decides), and whether it is exact."""

    code: str
    type: DT | None
    exact: bool = True

    @property
    def literal(self) -> bool:
        return self.type is None


@dataclass
class GeneratedKernel:
    name: str
    source: str  # the whole module
    inputs: list[tuple[str, DT]]  # 1-D input arrays, each of length n
    scalars: list[tuple[str, DT]]
    outputs: dict[str, tuple[DT, list[Var]]]  # array name -> dtype and the locals it receives
    n: int  # grid size (and input length)
    approx_rtol: float
    workgroup: int | None = None  # set for kernels with barriers (partial last workgroup)
    expected_error: str | None = None  # a regex: the kernel must not compile, with this error

    def param_names(self) -> list[str]:
        return ([a for a, _ in self.inputs] + [s for s, _ in self.scalars] + list(self.outputs))

    def __repr__(self) -> str:
        return f"<GeneratedKernel {self.name}:\n{self.source}>"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # hypothesis's printer
        p.text(repr(self))


class Budget:
    def __init__(self, statements: int) -> None:
        self.statements = statements


class KernelGenerator:
    """Generates one kernel. `dtypes` are those the device supports."""

    def __init__(self, chooser: Chooser, dtypes: Sequence[DT], name: str = "kern",
                 n: int = 24) -> None:
        self.c = chooser
        self.dtypes = list(dtypes)
        self.name = name
        self.n = n
        self.inputs: list[tuple[str, DT]] = []
        self.scalars: list[tuple[str, DT]] = []
        self.vars: list[Var] = []
        self.loop_vars: list[Var] = []  # in scope (read-only)
        self.local_arrays: list[LocalArray] = []
        self.counters = itertools.count()
        self.budget = Budget(0)
        self.barrier = False  # the kernel has barriers: invocations past the grid run it too

    # ------------------------------------------------------------ types

    def some_type(self, allow_bool: bool = True) -> DT:
        """A dtype, the common 32-bit ones most often (shrinks to i32)."""
        options = [t for t in self.dtypes if allow_bool or not t.is_bool]
        weights = [{"i32": 8, "f32": 8, "u32": 4, "bool_": 3}.get(t.name, 2) for t in options]
        return self.c.pick(options, weights)

    def int_type(self) -> DT:
        return self.c.pick([t for t in self.dtypes if t.is_int],
                           [6 if t == I32 else 2 for t in self.dtypes if t.is_int])

    def float_types(self) -> list[DT]:
        return [t for t in self.dtypes if t.is_float]

    def narrower(self, t: DT) -> list[DT]:
        """Types s != t with promote(t, s) == t: the other operand of a mixed operation."""
        return [s for s in self.dtypes if s != t and promote(t, s) == t]

    # ------------------------------------------------------------ literals

    def literal(self, t: DT, nonzero: bool = False, divisor: bool = False) -> E:
        """A Python number that takes type `t` next to a typed operand of type `t`."""
        c = self.c
        if t.is_bool:
            return E(c.pick(["True", "False"]), None)
        if t.is_int:
            small = [1, 2, 3, 0, 5, 7, 10, 100]
            if t.signed:
                small += [-1, -2, -7]
            edge = [t.hi, t.lo, t.hi - 1, 1 << (t.bits - 2)] + ([t.lo + 1] if t.signed else [])
            v = c.pick([c.pick(small), c.pick(edge)], [5, 1])
            if nonzero and v == 0:
                v = 1
            return E(f"({v})" if v < 0 else str(v), None)
        pool = ["1.0", "0.5", "2.0", "3.0", "1.5", "-1.0", "0.25", "-2.5", "10.0", "0.1", "7",
                "100.0", "-3", "1e3", "0.375", "math.pi", "math.e"]
        pool += ["1e-3", "65536.0", "-1e4"]  # 65536.0 is inf next to an f16 operand
        if divisor:  # at least 0.1 in magnitude, below 1e6 (see `dividend`)
            pool = [p for p in pool if p not in ("1e-3", "65536.0")]
        v = c.pick(pool)
        # never a float zero: drivers fold x * 0.0 and x + 0.0 (see KNOWN_BUGS)
        return E(f"({v})" if v.startswith("-") else v, None)  # math.pi/e: captured constants

    # ------------------------------------------------------------ leaves

    def leaf(self, t: DT, exact: bool, allow_literal: bool = True) -> E:
        """A variable, loop variable, array element, scalar parameter or literal of type `t`."""
        c = self.c
        candidates: list[Callable[[], E]] = []
        weights: list[int] = []
        vs = [v for v in self.vars if v.type == t and (v.exact or not exact)]
        if vs:
            candidates.append(lambda: (lambda v: E(v.name, t, v.exact))(c.pick(vs)))
            weights.append(10)
        lvs = [v for v in self.loop_vars if v.type == t]
        if lvs:
            candidates.append(lambda: E(c.pick(lvs).name, t))
            weights.append(4)
        ins = [a for a, at in self.inputs if at == t]
        if ins:
            candidates.append(lambda: E(f"{c.pick(ins)}[{self.index()}]", t))
            weights.append(5)
        ss = [s for s, st_ in self.scalars if st_ == t]
        if ss:
            candidates.append(lambda: E(c.pick(ss), t))
            weights.append(2)
        las = [a for a in self.local_arrays if a.type == t]
        if las:
            candidates.append(lambda: (lambda a: E(f"{a.name}[{self.local_index(a)}]", t))(
                c.pick(las)))
            weights.append(4)
        if t == I32:
            candidates.append(lambda: E(c.pick(
                ["i", f"len({self.inputs[0][0]})", f"{self.inputs[-1][0]}.shape[0]", "pk.grid(0)",
                 "pk.local_id(0)", "pk.group_id(0)", "pk.group_size(0)", "pk.num_groups(0)"],
                [12, 2, 1, 1, 1, 1, 1, 1]), I32))
            weights.append(2)
        if allow_literal and not t.is_bool:
            candidates.append(lambda: self.literal(t))
            weights.append(3)
        if not candidates or c.chance(10):
            if t.is_float:  # from an input of another type: see `int_operand`
                a, at = c.pick([(a, at) for a, at in self.inputs if at != t] or self.inputs)
                return self.convert(E(f"{a}[{self.index()}]", at), t)
            return self.convert(self.leaf_any(t), t)
        return c.pick(candidates, weights)()

    def runtime_leaf(self, t: DT) -> str:
        """An array element or scalar parameter of type `t` (a cast of one when there is none of
        `t`): a value no compiler can know."""
        c = self.c
        ins = [a for a, at in self.inputs if at == t]
        ss = [s for s, st_ in self.scalars if st_ == t]
        if ins and (not ss or c.chance(70)):
            return f"{c.pick(ins)}[{self.index()}]"
        if ss:
            return c.pick(ss)
        a, at = c.pick(self.inputs)
        return self.convert(E(f"{a}[{self.index()}]", at), t).code

    def leaf_any(self, avoid: DT) -> E:
        """An exact typed leaf of some other type (for a conversion): an input element or an
        exact variable."""
        c = self.c
        exact_vars = [v for v in self.vars if v.exact and v.type != avoid]
        if exact_vars and c.chance(50):
            v = c.pick(exact_vars)
            return E(v.name, v.type)
        a, at = c.pick(self.inputs)
        return E(f"{a}[{self.index()}]", at)

    def index(self) -> str:
        """An array index inside the bounds: `i` mostly, or `(int expr) % len(x)`."""
        c = self.c
        if self.budget.statements <= 0 or not c.chance(20):
            return "i"
        e = self.expr(self.int_type(), True, 1)
        if e.literal:
            return "i"
        bound = str(self.n) if c.chance(50) else f"len({self.inputs[0][0]})"
        return f"({e.code}) % {bound}"

    def local_index(self, a: LocalArray) -> str:
        """An index inside local array `a`: a loop variable that stays inside it (`buf[j]`),
        or else see `local_index_base`."""
        return self.local_index_pair(a, 0)[0]

    def local_index_pair(self, a: LocalArray, gap: int = 1) -> tuple[str, str]:
        """Indices k and k + `gap` inside local array `a`: a loop variable for which both stay
        inside (`buf[j]`, `buf[j + 1]`: the index an induction variable), mostly, else
        `local_index_base()` modulo the length."""
        c = self.c
        direct = [v for v in self.loop_vars if v.lo is not None and v.hi is not None
                  and v.lo >= 0 and v.hi + gap < a.length]
        if direct and c.chance(70):
            v = c.pick(direct)
            return v.name, f"{v.name} + {gap}" if gap else v.name
        base = self.local_index_base()
        return f"{base} % {a.length}", f"({base} + {gap}) % {a.length}"

    def local_index_base(self) -> str:
        """What a local array index is taken modulo its length of (Python's %, never
        negative): a loop variable mostly, else an integer expression."""
        c = self.c
        lvs = [v for v in self.loop_vars if v.type.is_int]
        if lvs and c.chance(75):
            return c.pick(lvs).name
        if self.budget.statements > 0 and c.chance(50):
            return self.typed_expr(self.int_type(), True, 1).code
        return "i"

    # ------------------------------------------------------------ conversions

    def convert(self, e: E, t: DT) -> E:
        """`e` converted to `t` without undefined behaviour."""
        c = self.c
        if e.literal:
            return E(f"{t.pk}({e.code})", t)
        if e.type == t:
            return e
        u = e.type
        assert u is not None
        if t.is_bool:
            return E(f"{c.pick(['bool', 'pk.bool_'])}({e.code})", t, True)
        if u.is_float and t.is_int:
            # the operand must be exact: an approximation error could move it across an integer
            # (f16: bounds within its range, so that the clamp keeps the operand finite)
            lo, hi = (CLAMP_F16 if u == F16 else CLAMP)[t]
            inner = e if e.exact else E(e.code, u, True)  # callers pass exact operands
            spelled = c.pick([t.pk, "int"]) if t == I32 else t.pk
            if t == I32 and c.chance(15):
                fn = c.pick(["math.floor", "math.ceil", "math.trunc", "round"])
                return E(f"{fn}(min(max({inner.code}, {lo}.0), {hi}.0))", I32)
            return E(f"{spelled}(min(max({inner.code}, {lo:.1f}), {hi:.1f}))", t)
        spelled = c.pick([t.pk, "float"]) if t == F32 else t.pk
        return E(f"{spelled}({e.code})", t, e.exact)

    # ------------------------------------------------------------ expressions

    def expr(self, t: DT, exact: bool, depth: int) -> E:
        """An expression of type `t` (or a literal when `t` allows one in context): exact
        means built from correctly rounded operations on exact operands only."""
        c = self.c
        if depth <= 0 or c.chance(25):
            return self.leaf(t, exact)
        builders = self.builders(t, exact)
        build = c.pick([b for b, _ in builders], [w for _, w in builders])
        return build(t, exact, depth - 1)

    def typed_expr(self, t: DT, exact: bool, depth: int) -> E:
        """Like `expr`, but never an untyped literal."""
        e = self.expr(t, exact, depth)
        if e.literal:
            return self.leaf(t, exact, allow_literal=False)
        return e

    def builders(self, t: DT, exact: bool) -> list[tuple[Callable[[DT, bool, int], E], int]]:
        if t.is_bool:
            return [(self.b_compare, 10), (self.b_mixed_compare, 3), (self.b_logical, 5),
                    (self.b_not, 2), (self.b_bitwise, 2), (self.b_predicate, 2),
                    (self.b_cast, 2), (self.ifexp, 2), (self.chained, 3)]
        if t.is_int:
            return [(self.arith, 10), (self.mixed, 5), (self.int_divmod, 4), (self.int_pow, 2),
                    (self.bitwise, 5), (self.shift, 4), (self.unary, 3), (self.absminmax, 4),
                    (self.ifexp, 3), (self.cast_from, 4)]
        out = [(self.arith, 10), (self.mixed, 3), (self.float_divmod, 3), (self.unary, 3),
               (self.absminmax, 4), (self.ifexp, 3), (self.cast_from, 4),
               (self.exact_fn, 3), (self.copysign, 1)]
        if not exact:
            out += [(self.true_div, 5), (self.math_fn, 6), (self.float_pow, 3), (self.fma, 1),
                    (self.int_true_div, 1)]
        return out

    def operand_pair(self, t: DT, exact: bool, depth: int) -> tuple[E, E]:
        """Two operands of type `t`, at most one of them a literal."""
        a = self.expr(t, exact, depth)
        b = self.expr(t, exact, depth) if not a.literal else self.typed_expr(t, exact, depth)
        if self.c.chance(50):
            a, b = b, a
        return a, b

    def arith(self, t: DT, exact: bool, depth: int) -> E:
        a, b = self.operand_pair(t, exact, depth)
        op = self.c.pick(["+", "-", "*"])
        return E(f"({a.code} {op} {b.code})", t, a.exact and b.exact)

    def mixed(self, t: DT, exact: bool, depth: int) -> E:
        """An operation on `t` and a narrower type, promoted to `t`."""
        others = self.narrower(t)
        if not others:
            return self.arith(t, exact, depth)
        c = self.c
        s = c.pick(others)
        if t.is_int and s.is_int and c.chance(40):
            # // and % across widths and signedness (i64 // i32 by a negative divisor, ...)
            op = c.pick(["//", "%"])
            if c.chance(50):
                return E(f"({self.typed_expr(t, True, depth).code} {op} "
                         f"{self.divisor(s, depth, literal=False)})", t)
            return E(f"({self.typed_expr(s, True, depth).code} {op} "
                     f"{self.divisor(t, depth, literal=False)})", t)
        a = self.typed_expr(t, exact, depth)
        # an approximate operand is fine when the other type is a float too: + - * only
        if t.is_float and not s.is_float:
            b = self.int_operand(s)  # see `int_operand`
        else:
            b = self.typed_expr(s, exact or not s.is_float, depth)
        op = c.pick(["+", "-", "*"])
        if c.chance(50):
            a, b = b, a
        return E(f"({a.code} {op} {b.code})", t, a.exact and b.exact)

    def divisor(self, t: DT, depth: int, literal: bool = True) -> str:
        """A non-zero integer expression of type `t` (or, if `literal`, a literal)."""
        c = self.c
        how = c.pick(["or1", "literal", "maxabs"], [5, 3 if literal else 0, 2])
        if how == "literal":
            return self.literal(t, nonzero=True).code
        d = self.typed_expr(t, True, depth)
        if how == "or1":
            return f"({d.code} | 1)"
        return f"max(abs({d.code}), 1)"

    def int_divmod(self, t: DT, exact: bool, depth: int) -> E:
        a = self.typed_expr(t, True, depth)
        op = self.c.pick(["//", "%"])
        return E(f"({a.code} {op} {self.divisor(t, depth)})", t)

    def int_pow(self, t: DT, exact: bool, depth: int) -> E:
        c = self.c
        a = self.typed_expr(t, True, depth)
        if c.chance(50):
            k = c.integer(0, 5)
            return E(c.pick([f"({a.code} ** {k})", f"pow({a.code}, {k})"]), t)
        e = self.typed_expr(t, True, depth)
        return E(f"({a.code} ** ({e.code} & 7))", t)

    def bitwise(self, t: DT, exact: bool, depth: int) -> E:
        a, b = self.operand_pair(t, True, depth)
        return E(f"({a.code} {self.c.pick(['&', '|', '^'])} {b.code})", t)

    def shift(self, t: DT, exact: bool, depth: int) -> E:
        c = self.c
        a = self.typed_expr(t, True, depth)
        op = c.pick(["<<", ">>"])
        if c.chance(40):
            return E(f"({a.code} {op} {c.integer(0, t.bits - 1)})", t)
        count = self.typed_expr(self.int_type(), True, depth)
        return E(f"({a.code} {op} ({count.code} & {t.bits - 1}))", t)

    def unary(self, t: DT, exact: bool, depth: int) -> E:
        a = self.typed_expr(t, exact, depth)
        ops = ["-", "+"] + (["~"] if t.is_int else [])
        return E(f"({self.c.pick(ops)}{a.code})", t, a.exact)

    def absminmax(self, t: DT, exact: bool, depth: int) -> E:
        c = self.c
        what = c.pick(["abs", "min", "max", "clamp"], [3, 3, 3, 1])
        if what == "abs":
            a = self.typed_expr(t, exact, depth)
            return E(f"abs({a.code})", t, a.exact)
        if what == "clamp":
            x = self.typed_expr(t, exact, depth)
            lo, hi = self.expr(t, exact, depth), self.expr(t, exact, depth)
            return E(f"pk.clamp({x.code}, {lo.code}, {hi.code})", t,
                     x.exact and lo.exact and hi.exact)
        args = list(self.operand_pair(t, exact, depth))
        if c.chance(25):
            args.append(self.typed_expr(t, exact, depth))
        return E(f"{what}({', '.join(a.code for a in args)})", t, all(a.exact for a in args))

    def ifexp(self, t: DT, exact: bool, depth: int) -> E:
        cond = self.expr(BOOL, True, depth)
        if cond.literal:
            cond = self.b_compare(BOOL, True, depth)
        a, b = self.operand_pair(t, exact, depth)
        if self.c.chance(20):  # both sides evaluated: all of them are defined everywhere here
            return E(f"pk.select({cond.code}, {a.code}, {b.code})", t, a.exact and b.exact)
        return E(f"({a.code} if {cond.code} else {b.code})", t, a.exact and b.exact)

    def cast_from(self, t: DT, exact: bool, depth: int) -> E:
        s = self.some_type()
        if s == t:
            s = I32 if t != I32 else F32
        if s not in self.dtypes:
            s = I32
        if t.is_float and not s.is_float:
            # int -> float of a run-time value only: see `int_operand`
            return self.convert(self.int_operand(s), t)
        # float -> int needs an exact operand; float -> float and int -> float keep exactness
        src = self.typed_expr(s, exact or t.is_int or t.is_bool, depth)
        return self.convert(src, t)

    def int_operand(self, s: DT) -> E:
        """An int or bool value of type `s` that becomes a float: an array element or scalar
        parameter (converted to `s` where need be), never a local, a loop variable or an
        expression, which the driver may know to be 0 (after unrolling a loop, say): lavapipe
        then folds x * 0.0 to 0.0 even for an infinite x (KNOWN_BUGS["signed zero, inf and nan
        folding"])."""
        return E(self.runtime_leaf(s), s)

    # floats

    def float_divmod(self, t: DT, exact: bool, depth: int) -> E:
        a = self.typed_expr(t, True, depth)
        op = self.c.pick(["//", "%"])
        return E(f"({dividend(a.code, t)} {op} {self.float_divisor(t, depth)})", t)

    def float_divisor(self, t: DT, depth: int) -> str:
        """A divisor for float // and %: a nonzero literal (a literal 0.0 is folded: see
        KNOWN_BUGS["signed zero, inf and nan folding"]), or any run-time value, sometimes
        clamped to [0.25, 1e6] (f16: 100) or its negation."""
        c = self.c
        if c.chance(50):
            return self.literal(t, nonzero=True, divisor=True).code
        d = self.typed_expr(t, True, depth).code
        lo, hi = ("0.25", "100.0") if t == F16 else ("0.25", "1e6")
        clamped = f"min(max({d}, {lo}), {hi})"
        return c.pick([clamped, f"(-{clamped})", d])

    def exact_fn(self, t: DT, exact: bool, depth: int) -> E:
        a = self.typed_expr(t, True, depth)
        fn = self.c.pick(EXACT_UNARY)
        return E(f"pk.{fn}({a.code})", t)

    def copysign(self, t: DT, exact: bool, depth: int) -> E:
        a = self.typed_expr(t, exact, depth)
        b = self.typed_expr(t, True, depth)
        # the sign of a NaN an operation makes is the device's (x86 sets it, NVIDIA does not),
        # so the sign operand is never NaN
        sign = f"pk.select(pk.isnan({b.code}), 1.0, {b.code})"
        return E(f"{self.c.pick(['pk', 'math'])}.copysign({a.code}, {sign})", t, a.exact)

    def true_div(self, t: DT, exact: bool, depth: int) -> E:
        c = self.c
        a = self.typed_expr(t, False, depth)
        how = c.pick(["literal", "plus", "runtime"])
        if how == "literal":
            d = self.literal(t, nonzero=True).code
        elif how == "plus":
            d = f"(abs({self.typed_expr(t, False, depth).code}) + 0.5)"
        else:
            # any value (0, inf, NaN too) but never one known at compile time: see
            # KNOWN_BUGS["signed zero, inf and nan folding"] (x / 0.0 folds to 0.0)
            d = self.runtime_leaf(t)
        return E(f"({a.code} / {d})", t, False)

    def int_true_div(self, t: DT, exact: bool, depth: int) -> E:
        if t != F32:
            return self.true_div(t, exact, depth)
        s = self.int_type()
        a = self.typed_expr(s, True, depth)
        return E(f"({a.code} / {self.divisor(s, depth)})", F32, False)

    def math_fn(self, t: DT, exact: bool, depth: int) -> E:
        c = self.c
        fn = c.pick(F64_APPROX_UNARY if t == F64 else APPROX_UNARY + ("atan2",))
        if fn == "atan2":  # continuous: x >= 0.5
            y = self.typed_expr(t, False, depth)
            x = self.typed_expr(t, False, depth)
            return E(f"{c.pick(['pk', 'math'])}.atan2({y.code}, abs({x.code}) + 0.5)", t, False)
        ns = "math" if fn != "rsqrt" and c.chance(30) else "pk"  # math has all but rsqrt
        if fn in ("asin", "acos"):
            a = self.typed_expr(t, True, depth)  # steep near +-1: only exact arguments
            arg = f"min(max({a.code}, -1.0), 1.0)"
        else:
            a = self.typed_expr(t, False, depth)
            arg = {
                "sqrt": f"abs({a.code})",
                "rsqrt": f"abs({a.code}) + 0.5",
                "exp": f"min(max({a.code}, -8.0), 8.0)",
                "exp2": f"min(max({a.code}, -10.0), 10.0)",
                "log": f"abs({a.code}) + 0.5",
                "log2": f"abs({a.code}) + 0.5",
                "sin": f"min(max({a.code}, -3.0), 3.0)",
                "cos": f"min(max({a.code}, -3.0), 3.0)",
                "tan": f"min(max({a.code}, -1.0), 1.0)",
                "sinh": f"min(max({a.code}, -5.0), 5.0)",
                "cosh": f"min(max({a.code}, -5.0), 5.0)",
                "atan": a.code,
                "tanh": a.code,
                "erf": a.code,
            }[fn]
        return E(f"{ns}.{fn}({arg})", t, False)

    def float_pow(self, t: DT, exact: bool, depth: int) -> E:
        c = self.c
        if t == F64:  # no pow on f64 (GLSL.std.450)
            return self.true_div(t, exact, depth)
        a = self.typed_expr(t, False, depth)
        if c.chance(50):
            k = c.pick(["2", "3", "2.0", "0.5", "-1.0", "1.5"])
            base = a.code if k in ("2", "3", "2.0", "-1.0") else f"abs({a.code})"
            if k == "-1.0":
                base = f"(abs({a.code}) + 0.5)"
            return E(f"({base} ** {k})", t, False)
        b = self.typed_expr(t, False, depth)
        # the base stays away from 0, where a negative exponent makes an approximation error
        # in the base arbitrarily large (0 ** -2 is inf, 1e-20 ** -2 is not)
        base = f"(abs({a.code}) + 0.5)"
        return E(c.pick([f"({base} ** min(max({b.code}, -3.0), 3.0))",
                         f"pk.pow({base}, min(max({b.code}, -3.0), 3.0))"]), t, False)

    def fma(self, t: DT, exact: bool, depth: int) -> E:
        a, b, d = (self.typed_expr(t, False, depth) for _ in range(3))
        return E(f"pk.fma({a.code}, {b.code}, {d.code})", t, False)

    # bools

    def comparable(self, depth: int) -> tuple[E, E]:
        s = self.some_type()
        return self.operand_pair(s, True, depth)

    def b_compare(self, t: DT, exact: bool, depth: int) -> E:
        a, b = self.comparable(depth)
        op = self.c.pick(["<", "<=", ">", ">=", "==", "!="])
        return E(f"({a.code} {op} {b.code})", BOOL)

    def b_mixed_compare(self, t: DT, exact: bool, depth: int) -> E:
        """A comparison of integers of two widths (the narrower one converted)."""
        wide = self.int_type()
        others = [s for s in self.narrower(wide) if s.is_int]
        if not others:
            return self.b_compare(t, exact, depth)
        a = self.typed_expr(wide, True, depth)
        b = self.typed_expr(self.c.pick(others), True, depth)  # a literal would take `wide`
        if self.c.chance(50):
            a, b = b, a
        return E(f"({a.code} {self.c.pick(['<', '<=', '>', '>=', '==', '!='])} {b.code})", BOOL)

    def chained(self, t: DT, exact: bool, depth: int) -> E:
        s = self.some_type(allow_bool=False)
        a = self.typed_expr(s, True, depth)
        b = self.typed_expr(s, True, depth)
        d = self.expr(s, True, depth)
        ops = [self.c.pick(["<", "<=", ">", ">=", "==", "!="]) for _ in range(2)]
        return E(f"({a.code} {ops[0]} {b.code} {ops[1]} {d.code})", BOOL)

    def b_logical(self, t: DT, exact: bool, depth: int) -> E:
        c = self.c
        parts = []
        for _ in range(c.pick([2, 3], [4, 1])):
            if c.chance(20):  # truthiness of a number
                parts.append(self.typed_expr(self.some_type(), True, depth))
            else:
                parts.append(self.typed_expr(BOOL, True, depth))
        op = c.pick([" and ", " or "])
        return E("(" + op.join(p.code for p in parts) + ")", BOOL)

    def b_not(self, t: DT, exact: bool, depth: int) -> E:
        s = BOOL if self.c.chance(80) else self.some_type()
        return E(f"(not {self.typed_expr(s, True, depth).code})", BOOL)

    def b_bitwise(self, t: DT, exact: bool, depth: int) -> E:
        a, b = self.typed_expr(BOOL, True, depth), self.typed_expr(BOOL, True, depth)
        return E(f"({a.code} {self.c.pick(['&', '|', '^'])} {b.code})", BOOL)

    def b_predicate(self, t: DT, exact: bool, depth: int) -> E:
        fts = self.float_types()
        if not fts:
            return self.b_compare(t, exact, depth)
        a = self.typed_expr(self.c.pick(fts), True, depth)
        fn = self.c.pick(["pk.isnan", "pk.isinf", "math.isnan", "math.isinf"])
        return E(f"{fn}({a.code})", BOOL)

    def b_cast(self, t: DT, exact: bool, depth: int) -> E:
        s = self.some_type(allow_bool=False)
        return self.convert(self.typed_expr(s, True, depth), BOOL)

    # ------------------------------------------------------------ statements

    def assign(self, v: Var, depth: int) -> str:
        e = self.expr(v.type, v.exact, depth)
        # a float local with a known value lets drivers fold x * v (see KNOWN_BUGS)
        if e.literal and (v.type.is_float or self.c.chance(70)):
            e = self.typed_expr(v.type, v.exact, depth)
        return f"{v.name} = {e.code}"

    def augassign(self, v: Var, depth: int) -> str:
        c = self.c
        t = v.type
        if t.is_bool:
            b = self.typed_expr(BOOL, True, depth)
            return f"{v.name} {c.pick(['&=', '|=', '^='])} {b.code}"
        if t.is_int:
            kind = c.pick(["arith", "bit", "divmod", "shift", "pow"], [6, 3, 2, 2, 1])
            if kind == "arith":
                return f"{v.name} {c.pick(['+=', '-=', '*='])} {self.expr(t, True, depth).code}"
            if kind == "bit":
                return f"{v.name} {c.pick(['&=', '|=', '^='])} {self.expr(t, True, depth).code}"
            if kind == "divmod":
                return f"{v.name} {c.pick(['//=', '%='])} {self.divisor(t, depth)}"
            if kind == "shift":
                count = self.typed_expr(self.int_type(), True, depth)
                return f"{v.name} {c.pick(['<<=', '>>='])} ({count.code} & {t.bits - 1})"
            return f"{v.name} **= {c.integer(0, 3)}"
        kinds = ["arith", "divmod"] + ([] if v.exact else ["div"])
        kind = c.pick(kinds, [6, 2] + ([] if v.exact else [2]))
        if kind == "arith":
            e = self.expr(t, v.exact, depth)
            return f"{v.name} {c.pick(['+=', '-=', '*='])} {e.code}"
        if kind == "divmod":
            # operands are kept in range: see `dividend`
            a = v.name if v.exact else self.typed_expr(t, True, depth).code
            op = c.pick(["//", "%"])
            return f"{v.name} = {dividend(a, t)} {op} {self.float_divisor(t, depth)}"
        return f"{v.name} /= (abs({self.typed_expr(t, False, depth).code}) + 0.5)"

    def block(self, depth: int, loops: int, in_loop: bool, size: int) -> list[str]:
        """Statements of one block, as lines indented relative to the block."""
        lines: list[str] = []
        count = self.c.integer(1, size)
        for _ in range(count):
            if self.budget.statements <= 0:
                break
            lines += self.statement(depth, loops, in_loop)
        return lines or ["pass"]

    def statement(self, depth: int, loops: int, in_loop: bool) -> list[str]:
        c = self.c
        self.budget.statements -= 1
        kinds = ["assign", "aug", "if", "for", "while", "break", "continue", "return",
                 "store", "swap"]
        arrays = 1 if self.local_arrays else 0
        weights = [10, 5, 4 if depth < 3 else 0, 3 if loops < 2 and depth < 3 else 0,
                   2 if loops < 2 and depth < 3 else 0, 2 if in_loop else 0,
                   2 if in_loop else 0, 1, 4 * arrays, (8 if in_loop else 1) * arrays]
        kind = c.pick(kinds, weights)
        edepth = c.pick([1, 2, 3], [3, 3, 1])
        if kind == "assign":
            return [self.assign(c.pick(self.vars), edepth)]
        if kind == "store":
            a = c.pick(self.local_arrays)
            value = self.typed_expr(a.type, True, edepth)
            return [f"{a.name}[{self.local_index(a)}] = {value.code}"]
        if kind == "swap":
            return self.swap(c.pick(self.local_arrays))
        if kind == "aug":
            return [self.augassign(c.pick(self.vars), edepth)]
        if kind == "if":
            return self.if_stmt(depth, loops, in_loop)
        if kind == "for":
            return self.for_stmt(depth, loops)
        if kind == "while":
            return self.while_stmt(depth, loops)
        if kind in ("break", "continue"):
            if c.chance(25):
                return [kind]  # unconditional: the rest of the body is dead code
            return [f"if {self.condition(2)}:", f"    {kind}"]
        # early return: store what we have, then leave
        return [f"if {self.condition(2)}:"] + indent(self.stores() + ["return"])

    def swap(self, a: LocalArray) -> list[str]:
        """The step of a bubble sort: neighbouring elements of `a` exchanged when out of
        order, `a[k]` stored first, then `a[k + 1]` (the shape lavapipe once miscompiled)."""
        k, k1 = self.local_index_pair(a)
        t = f"t{next(self.counters)}"
        return [f"if {a.name}[{k}] > {a.name}[{k1}]:",
                f"    {t} = {a.name}[{k}]",
                f"    {a.name}[{k}] = {a.name}[{k1}]",
                f"    {a.name}[{k1}] = {t}"]

    def condition(self, depth: int) -> str:
        e = self.expr(BOOL, True, depth)
        if e.literal:
            e = self.b_compare(BOOL, True, depth)
        if self.c.chance(10):  # truthiness of a number as a condition
            return self.typed_expr(self.some_type(), True, depth).code
        return e.code

    def if_stmt(self, depth: int, loops: int, in_loop: bool) -> list[str]:
        c = self.c
        lines = [f"if {self.condition(2)}:"] + indent(self.block(depth + 1, loops, in_loop, 3))
        for _ in range(c.pick([0, 1, 2], [4, 2, 1])):
            lines += [f"elif {self.condition(2)}:"]
            lines += indent(self.block(depth + 1, loops, in_loop, 2))
        if c.chance(50):
            lines += ["else:"] + indent(self.block(depth + 1, loops, in_loop, 2))
        return lines

    def small(self, t: DT, lo: int, hi: int) -> E:
        """An expression of type `t` (or a literal) whose value is in [lo, hi]."""
        c = self.c
        if c.chance(50):
            v = c.integer(lo, hi)
            return E(f"({v})" if v < 0 else str(v), None)
        e = self.typed_expr(t, True, 1)
        m = hi - lo + 1
        if lo == 0:
            return E(f"({e.code} % {m})", t)
        return E(f"({e.code} % {m} {'+' if lo > 0 else '-'} {abs(lo)})", t)

    def for_stmt(self, depth: int, loops: int) -> list[str]:
        c = self.c
        others = [s for s in self.dtypes if s.is_int and s != I32]
        t = c.pick([I32] + others, [8] + [1] * len(others))
        signed = t.signed
        nargs = c.pick([1, 2, 3])
        lo: int | None = None  # bounds of the loop variable, where they are easy to tell
        hi: int | None = None
        if nargs == 1:
            args = [self.small(t, -1 if signed else 0, 5)]
            lo, hi = 0, 4
        elif nargs == 2:
            args = [self.small(t, -3 if signed else 0, 3), self.small(t, -3 if signed else 0, 5)]
            lo, hi = (-3 if signed else 0), 4
        else:
            down = signed and c.chance(50)
            if down:
                args = [self.small(t, -2, 6), self.small(t, -4, 3)]
                step = c.pick(["(-1)", "(-2)", "(-3)", "runtime"])
                if step == "runtime":
                    e = self.typed_expr(t, True, 1)
                    step_e = E(f"(-({e.code} % 3) - 1)", t)
                else:
                    step_e = E(step, None)
            else:
                args = [self.small(t, -3 if signed else 0, 3), self.small(t, 0, 8)]
                step = c.pick(["1", "2", "3", "runtime"])
                if step == "runtime":
                    e = self.typed_expr(t, True, 1)
                    step_e = E(f"({e.code} % 3 + 1)", t)
                else:
                    step_e = E(step, None)
            args.append(step_e)
        vt = t if any(not a.literal for a in args) else I32
        var = Var(f"j{next(self.counters)}", vt, lo=lo, hi=hi)
        header = f"for {var.name} in range({', '.join(a.code for a in args)}):"
        self.loop_vars.append(var)
        body = self.block(depth + 1, loops + 1, True, 3)
        self.loop_vars.pop()
        return [header] + indent(body)

    def while_stmt(self, depth: int, loops: int) -> list[str]:
        c = self.c
        others = [s for s in self.dtypes if s.is_int and s != I32]
        ct = c.pick([I32] + others, [6] + [1] * len(others))
        counter = Var(f"w{next(self.counters)}", ct, lo=1)  # counted up at the top of the body
        init = (f"{counter.name} = 0" if ct == I32 and c.chance(70)
                else f"{counter.name}: {ct.pk} = 0")
        limit = c.integer(0, 5)
        cond = f"{counter.name} < {limit}"
        if c.chance(30):  # a bound known at run time only
            cond = f"{counter.name} < {self.runtime_leaf(I32)} % {limit + 1}"
        if c.chance(40):
            cond += f" {c.pick(['and', 'or'])} {self.condition(2)}"
            if " or " in cond:  # keep it bounded
                cond = f"({cond}) and {counter.name} < {limit + 2}"
        counter.hi = limit + 2
        self.loop_vars.append(counter)
        body = self.block(depth + 1, loops + 1, True, 3)
        self.loop_vars.pop()
        return [init, f"while {cond}:"] + indent([f"{counter.name} += 1"] + body)

    def stores(self) -> list[str]:
        lines = []
        for out, (_, vs) in self.outputs.items():
            for v in vs:
                lines.append(f"{out}[i * {len(vs)} + {v.slot}] = {v.name}")
        if self.barrier:  # not masked: only the invocations inside the grid store
            return ["if pk.global_id(0) < pk.grid(0):"] + indent(lines)
        return lines

    # ------------------------------------------------------------ barriers

    def exchange(self) -> list[str]:
        """Each invocation puts a value in workgroup memory and, after a barrier, takes its
        neighbour's: invocations past the grid (there is no mask in a kernel with barriers) take
        part, so the last, partial workgroup's exchanges come out as the interpreter's."""
        c = self.c
        wg = self.workgroup
        sources = [v for v in self.vars if not v.type.is_bool]
        if not sources or wg is None:
            return []
        lines = ["t = pk.local_id(0)"]
        for k in range(c.integer(1, 2)):
            v = c.pick(sources)
            targets = [w for w in sources if w.type == v.type and (v.exact or not w.exact)]
            w = c.pick(targets)
            buf = f"sh{k}"
            offset = c.integer(1, wg - 1) if wg > 1 else 0
            lines += [f"{buf} = pk.shared({v.type.pk}, {wg})", f"{buf}[t] = {v.name}",
                      "pk.barrier()", f"{w.name} = {buf}[(t + {offset}) % {wg}]",
                      "pk.barrier()"]
        return lines

    # ------------------------------------------------------------ definite assignment

    def maybe_unassigned(self) -> tuple[list[str], str | None]:
        """A new variable assigned under a condition or in a loop, then read: a compile error
        naming it unless every path assigns it (an if with an else that does too). Returns the
        lines and the expected error (a regex) or None."""
        c = self.c
        v = c.pick(self.vars)
        name = f"u{next(self.counters)}"
        cond = f"{self.runtime_leaf(v.type)} == {self.runtime_leaf(v.type)}"
        value = self.expr(v.type, v.exact, 1)
        if value.literal:
            value = self.leaf(v.type, v.exact, allow_literal=False)
        shape = c.pick(["both", "if", "elif", "for", "while"])
        if shape == "both":
            other = self.leaf(v.type, v.exact, allow_literal=False)
            lines = [f"if {cond}:", f"    {name} = {value.code}", "else:",
                     f"    {name} = {other.code}"]
        elif shape == "if":
            lines = [f"if {cond}:", f"    {name} = {value.code}"]
        elif shape == "elif":
            lines = [f"if {cond}:", f"    {name} = {value.code}", f"elif {self.condition(1)}:",
                     "    pass", "else:", f"    {name} = {value.code}"]
        elif shape == "for":
            # a run-time trip count: a loop over constant non-empty bounds would assign it
            lines = [f"for {name}_j in range({self.runtime_leaf(I32)} % 4):",
                     f"    {name} = {value.code}"]
        else:
            lines = [f"{name}_k = 0", f"while {name}_k < {self.small(I32, 0, 3).code}:",
                     f"    {name}_k += 1", f"    {name} = {value.code}"]
        lines.append(f"{v.name} = {name}")
        return lines, None if shape == "both" else f"'{name}' may be unassigned here"

    def declare_local_arrays(self) -> list[str]:
        c = self.c
        lines = []
        for k in range(c.pick([0, 1, 2], [2, 3, 1])):
            a = LocalArray(f"buf{k}", self.some_type(allow_bool=False), c.integer(4, 8))
            self.local_arrays.append(a)
            lines.append(f"{a.name} = pk.local({a.type.pk}, {a.length})")
            for q in range(c.integer(0, 2)):  # some elements start non-zero
                lines.append(f"{a.name}[{q}] = {self.leaf(a.type, True, allow_literal=False).code}")
        return lines

    # ------------------------------------------------------------ the kernel

    def generate(self) -> GeneratedKernel:
        c = self.c
        # inputs and scalars
        for k in range(c.integer(1, 3)):
            t = self.some_type()
            self.inputs.append((f"x{k}", t))
        for k in range(c.pick([0, 1, 2], [3, 2, 1])):
            self.scalars.append((f"s{k}", self.some_type()))
        self.budget = Budget(c.integer(3, 25))
        # kernels with barriers are not masked: invocations past the grid compute the values
        # of the last one, and store nothing
        self.barrier = c.chance(15)
        self.workgroup = c.pick([5, 8, 16, 32]) if self.barrier else None
        # locals, declared up front from the inputs
        lines = ["i = min(pk.global_id(0), pk.grid(0) - 1)" if self.barrier
                 else "i = pk.global_id(0)"]
        for k in range(c.integer(1, 5)):
            t = self.some_type()
            exact = not t.is_float or c.chance(40)
            v = Var(f"v{k}", t, exact)
            init = self.expr(t, v.exact, c.pick([0, 1, 2]))
            if init.literal:  # start from a run-time value: a known one lets drivers fold
                init = self.leaf(t, v.exact, allow_literal=False)
            if c.chance(20):
                lines.append(f"{v.name}: {t.pk} = {init.code}")
            else:
                lines.append(f"{v.name} = {init.code}")
            self.vars.append(v)
        lines += self.declare_local_arrays()
        self.outputs = {}
        by_type: dict[DT, list[Var]] = {}
        for v in self.vars:
            by_type.setdefault(v.type, []).append(v)
        for t, vs in by_type.items():
            for slot, v in enumerate(vs):
                v.slot = slot
            self.outputs[f"o_{t.name}"] = (t, vs)
        for a in self.local_arrays:
            self.outputs[f"o_{a.name}"] = (a.type, a.elements)
        if self.barrier:
            lines += self.exchange()
        expected_error = None
        if c.chance(10):
            unassigned, expected_error = self.maybe_unassigned()
            lines += unassigned
        body = self.block(0, 0, False, 8)
        lines += body + self.stores()
        params = ([f"{a}: {t.pk}[:]" for a, t in self.inputs]
                  + [f"{s}: {t.pk}" for s, t in self.scalars]
                  + [f"{o}: {t.pk}[:]" for o, (t, _) in self.outputs.items()])
        source = "\n".join(["import math", "", "import pykern as pk", "", "",
                             f"def {self.name}({', '.join(params)}):"] + indent(lines)) + "\n"
        return GeneratedKernel(self.name, source, list(self.inputs), list(self.scalars),
                               dict(self.outputs), self.n, approx_rtol=approx_rtol(source),
                               workgroup=self.workgroup, expected_error=expected_error)


def approx_rtol(source: str) -> float:
    """How far a float result computed by rounding ops may be from the interpreter's: f16
    arithmetic is coarse; a power with a computed exponent (up to 3) multiplies the relative
    error of its base by up to 3, so one inside a loop, fed its own result, can grow an
    error of one rounding by 3**5 over five iterations (seen on NVIDIA: 2e-3 after five
    iterations of `v0 = (abs(100 + v0) + 0.5) ** min(max(v0 / ..., -3), 3)`). A quotient is
    within 2.5 ULP on Vulkan (correctly rounded only in strict mode), and one subtracted from a
    value near it inside a loop, fed its own result, loses most of its digits: `v0 *=
    (ceil(x) - v0 / x)` six times gave 41.9896 for 42 on NVIDIA, and one ULP either way on each
    quotient spans 41.984 to 42.016."""
    if "pk.f16" in source:
        return 3e-2
    looped = "while " in source or "for " in source
    compounding = "** min(max(" in source or "pk.pow(" in source or " / " in source
    return 1e-2 if looped and compounding else 2e-4


def dividend(code: str, t: DT) -> str:
    """`code` (of float type `t`) as the dividend of float // and %: any value (inf, NaN and
    large quotients included)."""
    return code


def indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


# ---------------------------------------------------------------- inputs


def input_values(t: DT, n: int, rng: np.random.Generator) -> np.ndarray:
    """`n` values of `t`: small ones, edge values and random ones mixed."""
    if t.is_bool:
        return rng.random(n) < 0.5
    if t.is_int:
        small = rng.integers(-10 if t.signed else 0, 11, n)
        edges = np.array([t.lo, t.hi, t.lo + 1, t.hi - 1, 0, 1, t.hi // 2], dtype=object)
        edge = edges[rng.integers(0, len(edges), n)]
        full = [int(rng.integers(t.lo, t.hi, endpoint=True, dtype=np.int64 if t.bits < 64
                                 or t.signed else np.uint64)) for _ in range(n)]
        which = rng.choice(3, n, p=[0.6, 0.15, 0.25])
        values = [int(s) if w == 0 else int(e) if w == 1 else f
                  for s, e, f, w in zip(small, edge, full, which)]
        return np.array(values, dtype=object).astype(t.np)
    nice = rng.integers(-16, 17, n) / rng.choice([1, 2, 4, 8], n)
    wide = rng.uniform(-100, 100, n)
    logu = np.exp(rng.uniform(math.log(1e-2), math.log(1e4), n)) * rng.choice([-1, 1], n)
    special = rng.choice(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5]), n)
    which = rng.choice(4, n, p=[0.4, 0.25, 0.2, 0.15])
    values = np.choose(which, [nice, wide, logu, special])
    if t == F16:
        values = np.where(which == 2, np.clip(values, -1e3, 1e3), values)
    with np.errstate(over="ignore"):
        return values.astype(t.np)


def scalar_value(t: DT, rng: np.random.Generator) -> bool | int | float:
    v = input_values(t, 1, rng)[0]
    return v.item()


def make_arguments(gk: GeneratedKernel, rng: np.random.Generator) -> dict[str, Any]:
    """Inputs and scalars for one launch (outputs are added by `run`)."""
    args: dict[str, Any] = {}
    for name, t in gk.inputs:
        args[name] = input_values(t, gk.n, rng)
    for name, t in gk.scalars:
        args[name] = scalar_value(t, rng)
    return args


# ---------------------------------------------------------------- running


_module_counter = itertools.count()


def load(gk: GeneratedKernel, directory: str) -> Callable:
    """Writes the kernel's module to `directory` and imports it (pykern reads kernels' source
    with inspect.getsource, so it must live in a real file)."""
    modname = f"_pk_random_{os.getpid()}_{next(_module_counter)}_{gk.name}"
    path = os.path.join(directory, modname + ".py")
    with open(path, "w") as f:
        f.write(gk.source)
    spec = importlib.util.spec_from_file_location(modname, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module  # inspect finds the source through the module
    spec.loader.exec_module(module)
    return getattr(module, gk.name)


SENTINEL = 0x5A


def fresh_outputs(gk: GeneratedKernel) -> dict[str, np.ndarray]:
    outs = {}
    for name, (t, vs) in gk.outputs.items():
        a = np.full(gk.n * len(vs) * t.np.itemsize, SENTINEL, np.uint8).view(t.np)
        if t.is_bool:
            a = np.zeros(gk.n * len(vs), bool)
        outs[name] = a
    return outs


def run(gk: GeneratedKernel, kernel: Any, args: dict[str, Any]) -> dict[str, np.ndarray]:
    """Launches `kernel` (a pk.kernel of the generated function) over the grid with copies of
    `args` and fresh outputs; returns the outputs."""
    outs = fresh_outputs(gk)
    values = {**{k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()},
              **outs}
    with np.errstate(all="ignore"):
        kernel[gk.n](*(values[p] for p in gk.param_names()))
    return outs


# ---------------------------------------------------------------- comparing


def float_scale(gk: GeneratedKernel, args: dict[str, Any], dev: dict, ref: dict, i: int) -> float:
    """A magnitude for approximate comparisons of invocation `i`: the largest finite float
    among the inputs and the invocation's outputs (errors are relative to the operands, and
    cancellation can leave a small result of large ones)."""
    m = 1.0
    for name, t in gk.inputs + gk.scalars:
        if t.is_float:
            a = np.asarray(args[name], np.float64)
            a = a[np.isfinite(a)]
            if a.size:
                m = max(m, float(np.abs(a).max()))
    for name, (t, vs) in gk.outputs.items():
        if t.is_float:
            for outs in (dev, ref):
                a = outs[name][i * len(vs):(i + 1) * len(vs)].astype(np.float64)
                a = a[np.isfinite(a)]
                if a.size:
                    m = max(m, float(np.abs(a).max()))
    return m


def same_exact(d: Any, r: Any, t: DT) -> bool:
    """Equal; for floats NaN equals NaN and -0.0 equals 0.0 (and a zero on the device equals a
    subnormal in the interpreter: flushed): the sign of a zero is not checked,
    for lavapipe folds x * 0.0 and x + 0.0 (KNOWN_BUGS["signed zero, inf and nan folding"]) and
    min/max of 0.0 and -0.0 may return either (GLSL NMin/NMax)."""
    if t.is_float:
        tiny = float(np.finfo(t.np).tiny)
        d, r = float(d), float(r)
        if math.isnan(d) or math.isnan(r):
            return math.isnan(d) and math.isnan(r)
        # a kernel that is not strict may flush subnormal results to zero (NVIDIA's f32 does:
        # docs/testing.md)
        return d == r or (d == 0.0 and 0.0 < abs(r) < tiny)
    return bool(d == r)


def same_approx(d: Any, r: Any, rtol: float, scale: float) -> bool:
    """Within `rtol` of the larger of |d|, |r| and `scale`; non-finite values match each other
    in any combination (an approximation that is 0.0 on one side and tiny on the other turns
    inf * it into nan or +-inf), but never a finite value."""
    d, r = float(d), float(r)
    if not (math.isfinite(d) and math.isfinite(r)):
        return not (math.isfinite(d) or math.isfinite(r))
    return abs(d - r) <= rtol * max(abs(d), abs(r), scale)


def compare(gk: GeneratedKernel, args: dict[str, Any], dev: dict[str, np.ndarray],
            ref: dict[str, np.ndarray]) -> list[str]:
    """Mismatches between the device's outputs and the interpreter's, one line each."""
    bad = []
    for name, (t, vs) in gk.outputs.items():
        for i in range(gk.n):
            scale = None
            for v in vs:
                k = i * len(vs) + v.slot
                d, r = dev[name][k], ref[name][k]
                if t.is_float and not v.exact:
                    if scale is None:
                        scale = float_scale(gk, args, dev, ref, i)
                    ok = same_approx(d, r, gk.approx_rtol, scale)
                else:
                    ok = same_exact(d, r, t)
                if not ok:
                    kind = "exact" if v.exact else f"approx rtol={gk.approx_rtol} scale={scale:g}"
                    bad.append(f"invocation {i}: {v.name} ({t.name}, {kind}): "
                               f"device {d!r}, interpreter {r!r}")
    return bad


def describe_arguments(args: dict[str, Any]) -> str:
    lines = []
    for k, v in args.items():
        if isinstance(v, np.ndarray):
            lines.append(f"  {k} = np.array({v.tolist()!r}, dtype=np.{v.dtype})")
        else:
            lines.append(f"  {k} = {v!r}")
    return "\n".join(lines)


def describe_outputs(outs: dict[str, np.ndarray]) -> str:
    return "\n".join(f"  {k} = {v.tolist()!r}" for k, v in outs.items())


@dataclass
class Outcome:
    gk: GeneratedKernel
    args: dict[str, Any]
    dev: dict[str, np.ndarray] | None = None
    ref: dict[str, np.ndarray] | None = None
    mismatches: list[str] = field(default_factory=list)
    error: str | None = None
    backend: str = ""  # the device `dev` ran on

    @property
    def ok(self) -> bool:
        return not self.mismatches and self.error is None

    def report(self, header: str = "") -> str:
        parts = [header, f"kernel source ({self.gk.name}, grid {self.gk.n}):",
                 textwrap.indent(self.gk.source, "    "), "arguments:",
                 describe_arguments(self.args)]
        if self.error:
            parts += ["error:", textwrap.indent(self.error, "    ")]
        if self.dev is not None:
            parts += [f"device results ({self.backend}):", describe_outputs(self.dev)]
        if self.ref is not None:
            parts += ["interpreter results:", describe_outputs(self.ref)]
        if self.mismatches:
            shown = self.mismatches[:20]
            more = len(self.mismatches) - len(shown)
            parts += ["mismatches:"] + ["  " + m for m in shown] + (
                [f"  ... and {more} more"] if more else [])
        return "\n".join(p for p in parts if p)


def expect_compile_error(gk: GeneratedKernel, kernels: Sequence[Any], args: dict[str, Any]
                         ) -> Outcome:
    """The outcome of a kernel that must not compile: each of `kernels` (device, interpreter)
    must raise pk.CompileError matching `gk.expected_error`, and nothing else."""
    outcome = Outcome(gk, args)
    for kernel in kernels:
        try:
            run(gk, kernel, args)
        except pk.CompileError as e:
            if not re.search(gk.expected_error or "", str(e)):
                outcome.error = f"the wrong compile error, expected {gk.expected_error!r}:\n{e}"
                return outcome
        except Exception:
            outcome.error = traceback.format_exc()
            return outcome
        else:
            outcome.error = f"compiled and ran, but must fail with {gk.expected_error!r}"
            return outcome
    return outcome


def compiled_backends() -> list[int]:
    """The devices `check` runs kernels on, by index: the current one, and the other CPU path
    where the machine has both (the host backend and a Vulkan device such as lavapipe)."""
    current = pk.get_device().info
    indices = [current.index]
    if current.kind == "host":
        vulkan = [d for d in pk.devices() if d.kind != "host"]
        if vulkan:
            indices.append(pk.set_device("vulkan").info.index)
            pk.set_device(current.index)
    else:
        indices += [d.index for d in pk.devices() if d.kind == "host"]
    return indices


def check(gk: GeneratedKernel, directory: str, rng: np.random.Generator, runs: int = 1
          ) -> Outcome:
    """Loads `gk`, runs it in the interpreter and on each of `compiled_backends()` with `runs`
    argument sets, and returns the first failing outcome (or the last passing one)."""
    try:
        fn = load(gk, directory)
    except Exception:
        return Outcome(gk, {}, error=traceback.format_exc())
    workgroup = (gk.workgroup,) if gk.workgroup is not None else None
    device = pk.kernel(fn, workgroup=workgroup)
    interpreter = pk.kernel(fn, workgroup=workgroup, interpret=True)
    outcome = Outcome(gk, {})
    if gk.expected_error is not None:
        return expect_compile_error(gk, (device, interpreter), make_arguments(gk, rng))
    current = pk.get_device().info.index
    try:
        for _ in range(runs):
            args = make_arguments(gk, rng)
            for index in compiled_backends():
                pk.set_device(index)
                outcome = Outcome(gk, args, backend=pk.get_device().info.name)
                try:
                    outcome.ref = run(gk, interpreter, args)
                    outcome.dev = run(gk, device, args)
                except Exception:
                    outcome.error = traceback.format_exc()
                    return outcome
                outcome.mismatches = compare(gk, args, outcome.dev, outcome.ref)
                if not outcome.ok:
                    return outcome
    finally:
        pk.set_device(current)
    return outcome


# ---------------------------------------------------------------- exploring from the shell


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", action="store_true", help="print every kernel")
    parser.add_argument("--stop", action="store_true", help="stop at the first failure")
    opts = parser.parse_args(argv)
    dtypes = device_dtypes(pk.get_device().info.features)
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        for k in range(opts.count):
            seed = opts.seed * 1_000_003 + k
            gk = KernelGenerator(RandomChooser(seed), dtypes, name=f"kern{k}").generate()
            if opts.show:
                print(gk.source)
            outcome = check(gk, d, np.random.default_rng(seed))
            if not outcome.ok:
                failures += 1
                print(outcome.report(f"===== seed {opts.seed} kernel {k} (chooser seed {seed})"))
                if opts.stop:
                    break
    print(f"{failures} failing of {opts.count}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
