"""The issue's targets for the host backend, each checked against the rows of the `host`
benchmark and added as a row of the group `target`: the ratio (or the time), the target, and
`met` or by how much it is missed. A target whose rows are missing (no lavapipe here, a case
that failed) is noted instead.

A ratio is pykern's rate over the other's (for ms figures, the other's time over pykern's), so
above 1 means pykern is ahead. At `--quick` sizes the verdicts say little about the targets,
which are stated for the full sizes.
"""

from __future__ import annotations

from dataclasses import dataclass

from .host_measure import GROUP
from .results import Results, Row

TARGET_GROUP = "target"


@dataclass(frozen=True)
class Target:
    case: str  # the case's name (`add`, `sum rows`, `compile`, ...)
    mine: str  # the `who` of pykern's row
    theirs: str | None  # the `who` of the row compared with; None for a bound on the value
    at_least: float | None = None  # for the ratio
    at_most: float | None = None  # for the value itself (ms)


def _vector(name: str) -> list[Target]:
    return [Target(name, f"host {kind}", theirs, at_least=bound)
            for kind in ("op", "kernel")
            for theirs, bound in (("numpy", 0.5), (f"lavapipe {kind}", 10.0))]


TARGETS = (
    *_vector("add"), *_vector("saxpy"),
    *(Target(name, "host op", "numpy", at_least=0.5)
      for name in ("sum rows", "sum cols", "softmax", "layer_norm")),
    Target("matmul", "host op", "numpy", at_least=0.25),
    Target("compile", "host cold", None, at_most=50.0),
    Target("compile", "host warm", None, at_most=2.0),
    Target("train", "host", "lavapipe", at_least=5.0),
    # the small MLP step against numpy's hand-written one: compiled faster, eager within 2x
    Target("train", "host", "numpy", at_least=1.0),
    Target("train", "host eager", "numpy", at_least=0.5),
)


def check_targets(results: Results, quick: bool) -> None:
    """Adds a `target` row for each target whose rows were measured; `quick`: at other sizes
    than the full plan's (noted)."""
    rows = {(r.extra.get("case"), r.extra.get("who")): r for r in results.rows
            if r.group == GROUP}
    if quick:
        results.note("host: --quick sizes; the targets are stated for the full sizes")
    for target in TARGETS:
        mine = rows.get((target.case, target.mine))
        theirs = rows.get((target.case, target.theirs)) if target.theirs else None
        if mine is None or (target.theirs is not None and theirs is None):
            results.note(f"host: target {target.case} {target.mine}"
                         f"{'/' + target.theirs if target.theirs else ''} not measured")
            continue
        results.add(_row(target, mine, theirs))


def _row(target: Target, mine: Row, theirs: Row | None) -> Row:
    extra: dict[str, object] = {"case": target.case, "mine": target.mine,
                                "theirs": target.theirs}
    if theirs is None:
        value, bound = mine.value, float(target.at_most)  # type: ignore[arg-type]
        met = value <= bound
        verdict = f"target <= {bound:g} {mine.unit}: " + (
            "met" if met else f"MISS by {value / bound:.1f}x")
        extra.update(target_at_most=bound, met=met)
        return Row(TARGET_GROUP, mine.case, f"{target.mine}", value, mine.unit, False, verdict,
                   extra)
    if mine.higher_is_better:
        ratio = mine.value / theirs.value if theirs.value > 0 else float("inf")
    else:
        ratio = theirs.value / mine.value if mine.value > 0 else float("inf")
    bound = float(target.at_least)  # type: ignore[arg-type]
    met = ratio >= bound
    verdict = f"target >= {bound:g}x: " + ("met" if met else f"MISS by {bound / ratio:.1f}x")
    extra.update(target_at_least=bound, met=met, ratio=ratio)
    return Row(TARGET_GROUP, mine.case, f"{target.mine} / {target.theirs}", ratio, "x", True,
               verdict, extra)
