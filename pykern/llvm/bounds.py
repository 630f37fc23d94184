"""Symbolic bounds of integer values, the domain of `pykern.llvm.bound_analysis`.

A value's `Bounds` are affine forms that bound it from below and from above: the value is at
least every lower form and at most every upper form. A form is a constant plus a sum of
constant multiples of atoms; an atom is a value that the workgroup's prologue can bound by
numbers (`pykern.llvm.proofs`):

- a uniform value, the same for the whole workgroup: a scalar parameter, an array's
  dimension, the grid, the workgroup id (exactly known there);
- a local id (0 to the workgroup's size - 1);
- a loop's variable (between the numbers its bounds' forms give);
- a derived value, made of other bounds by an operation that is not affine (a product of two
  values that are not constants, a floor division, a minimum, a choice between two values):
  its numbers are computed from its operands' numbers.

Keeping forms symbolic lets bounds cancel: in `for j in range(j0, min(j0 + 256, n))`,
`j - j0` is at most 255, whatever `j0` is, which numbers alone would not show. The numbers of
a form are exact integers (i128 in the prologue): every value of a typed kernel is modelled as
the mathematical integer it would be without wrapping, so a value computed by an operation
that can wrap carries a requirement that its numbers fit its type (`Fits`): a proof that uses
it holds only where they do.

Forms are kept few (`MAX_FORMS` per side, the ones with fewest atoms) and their coefficients
small (`MAX_COEFFICIENT`): dropping a lower or upper bound is always sound, it only weakens.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

MAX_FORMS = 10
MAX_COEFFICIENT = 1 << 31
MAX_CONSTANT = 1 << 62

# the kinds of atoms
UNIFORM, LOCAL, LOOP, DERIVED = "uniform", "local", "loop", "derived"


@dataclass(eq=False)
class Atom:
    """One value a form is made of; interned by `Atoms`, so compared by identity. `key` says
    what it is (for the prologue); `order` sorts forms' terms deterministically."""

    kind: str
    key: tuple
    order: int


@dataclass(frozen=True)
class Affine:
    """`const + sum(coefficient * atom)`, the terms sorted by their atoms' order."""

    const: int
    terms: tuple[tuple[Atom, int], ...] = ()

    def shifted(self, amount: int) -> Affine | None:
        """This form plus a constant (None where the constant grows too large)."""
        return _checked(Affine(self.const + amount, self.terms))

    def scaled(self, factor: int) -> Affine | None:
        """This form times a constant (None where a number grows too large)."""
        if factor == 0:
            return Affine(0)
        return _checked(Affine(self.const * factor,
                               tuple((a, c * factor) for a, c in self.terms)))

    def plus(self, other: Affine) -> Affine | None:
        """The sum of two forms, terms of one atom added (those that cancel dropped)."""
        coefficients: dict[Atom, int] = {}
        for atom, c in itertools.chain(self.terms, other.terms):
            coefficients[atom] = coefficients.get(atom, 0) + c
        terms = tuple(sorted(((a, c) for a, c in coefficients.items() if c),
                             key=lambda t: t[0].order))
        return _checked(Affine(self.const + other.const, terms))

    @property
    def rank(self) -> tuple:
        """Fewer atoms first: the forms most likely to have cancelled, so the tightest."""
        return (len(self.terms), tuple(a.order for a, _ in self.terms),
                tuple(c for _, c in self.terms), self.const)


def _checked(form: Affine) -> Affine | None:
    """`form`, or None where a constant grew past what the prologue's i128 sums hold."""
    if abs(form.const) > MAX_CONSTANT or any(abs(c) > MAX_COEFFICIENT for _, c in form.terms):
        return None
    return form


@dataclass(frozen=True)
class Fits:
    """A requirement: the numbers of the value bounded by `lower`/`upper` lie within `low` and
    `high` (either None: no limit on that side)."""

    lower: tuple[Affine, ...]
    upper: tuple[Affine, ...]
    low: int | None
    high: int | None


@dataclass(frozen=True)
class Bounds:
    """Lower and upper forms of a value (either side may be empty: unknown), and what must
    hold for them to be right (`Fits` requirements of the operations that made it)."""

    lower: tuple[Affine, ...]
    upper: tuple[Affine, ...]
    requires: frozenset[Fits] = field(default_factory=frozenset)

    @property
    def known(self) -> bool:
        """Whether the value is bounded on both sides."""
        return bool(self.lower) and bool(self.upper)

    def with_requirement(self, low: int | None, high: int | None) -> Bounds:
        """These bounds, required to lie within [low, high]."""
        need = Fits(self.lower, self.upper, low, high)
        return Bounds(self.lower, self.upper, self.requires | {need})

    def widened(self, lower: Iterable[Affine], upper: Iterable[Affine],
                requires: frozenset[Fits] = frozenset()) -> Bounds:
        """These bounds with more forms (from a fact that holds where the value is used)."""
        return Bounds(_lowest((*self.lower, *lower)), _highest((*self.upper, *upper)),
                      self.requires | requires)


def _lowest(forms: Iterable[Affine | None]) -> tuple[Affine, ...]:
    """Lower forms worth keeping: of forms that differ by a constant only the greatest (the
    others bound less), then at most MAX_FORMS, those with fewest atoms first."""
    return _few(forms, max)


def _highest(forms: Iterable[Affine | None]) -> tuple[Affine, ...]:
    """Upper forms worth keeping (as `_lowest`: of forms that differ by a constant, the
    least)."""
    return _few(forms, min)


def _few(forms: Iterable[Affine | None], best: Callable[..., int]) -> tuple[Affine, ...]:
    by_terms: dict[tuple, int] = {}
    for f in forms:
        if f is not None:
            known = by_terms.get(f.terms)
            by_terms[f.terms] = f.const if known is None else best(known, f.const)
    unique = [Affine(const, terms) for terms, const in by_terms.items()]
    return tuple(sorted(unique, key=lambda f: f.rank)[:MAX_FORMS])


def constant(value: int) -> Bounds:
    """The bounds of a number: itself."""
    form = Affine(value)
    return Bounds((form,), (form,))


def of_atom(atom: Atom) -> Bounds:
    """The bounds of an atom's value: itself."""
    form = Affine(0, ((atom, 1),))
    return Bounds((form,), (form,))


def add(a: Bounds, b: Bounds) -> Bounds:
    """The bounds of a sum: each lower (upper) form of `a` plus each of `b`."""
    return Bounds(_lowest(x.plus(y) for x in a.lower for y in b.lower),
                  _highest(x.plus(y) for x in a.upper for y in b.upper), a.requires | b.requires)


def negate(a: Bounds) -> Bounds:
    """The bounds of -a: its upper forms negated are lower ones, and the other way."""
    return Bounds(_lowest(f.scaled(-1) for f in a.upper), _highest(f.scaled(-1) for f in a.lower),
                  a.requires)


def subtract(a: Bounds, b: Bounds) -> Bounds:
    """The bounds of a - b."""
    return add(a, negate(b))


def scale(a: Bounds, factor: int) -> Bounds:
    """The bounds of a constant multiple."""
    if factor < 0:
        return scale(negate(a), -factor)
    return Bounds(_lowest(f.scaled(factor) for f in a.lower),
                  _highest(f.scaled(factor) for f in a.upper), a.requires)


def shift(a: Bounds, amount: int) -> Bounds:
    """The bounds of a + amount."""
    return Bounds(_lowest(f.shifted(amount) for f in a.lower),
                  _highest(f.shifted(amount) for f in a.upper), a.requires)


def constant_value(a: Bounds) -> int | None:
    """The value where the bounds say it exactly (a constant), else None."""
    for low in a.lower:
        if not low.terms and any(not high.terms and high.const == low.const
                                 for high in a.upper):
            return low.const
    return None


def upper_of_minimum(a: Bounds, b: Bounds) -> tuple[Affine, ...]:
    """Upper forms of min(a, b): every upper form of either bounds it."""
    return _highest((*a.upper, *b.upper))


def lower_of_maximum(a: Bounds, b: Bounds) -> tuple[Affine, ...]:
    """Lower forms of max(a, b): every lower form of either bounds it."""
    return _lowest((*a.lower, *b.lower))


@dataclass
class Atoms:
    """The atoms of one analysis, interned by key (the same value is the same atom, so its
    forms cancel) and numbered in the order they were made."""

    made: dict[tuple, Atom] = field(default_factory=dict)
    _group: dict[int, bool] = field(default_factory=dict)

    def get(self, kind: str, key: tuple) -> Atom:
        """The atom of `kind` and `key`, made on first use."""
        atom = self.made.get((kind, key))
        if atom is None:
            atom = self.made[(kind, key)] = Atom(kind, key, len(self.made))
        return atom

    def names_group(self, form: Affine) -> bool:
        """Whether `form`'s numbers depend on the workgroup's id (else on the launch only)."""
        return any(self._atom_names_group(atom) for atom, _ in form.terms)

    def _atom_names_group(self, atom: Atom) -> bool:
        known = self._group.get(atom.order)
        if known is None:
            if atom.kind in (UNIFORM, LOCAL):
                known = atom.key[0] == "group"
            else:
                known = any(self.names_group(f) for f in forms_of(atom))
            self._group[atom.order] = known
        return known


def forms_of(atom: Atom) -> tuple[Affine, ...]:
    """The forms a loop variable's or a derived value's numbers are computed from."""
    if atom.kind == LOOP:
        return (*atom.key[1], *atom.key[2])
    return tuple(f for lower, upper in atom.key[1:] for f in (*lower, *upper))
