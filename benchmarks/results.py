"""Benchmark figures (`Row`), the table they print as, and the JSON file they are saved to."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

PYKERN = "pykern"


@dataclass
class Row:
    """One measured figure.

    `group` is the benchmark (`add`, `launch`, ...), `case` what it was run on (`n=2^26`, ...),
    `impl` who ran it (`pykern add_x4`, `numpy`, `torch cuda`, ...). `method` says how it was
    timed: `gpu timestamps`, `cuda events` or `wall clock`.
    """

    group: str
    case: str
    impl: str
    value: float
    unit: str
    higher_is_better: bool
    method: str
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def is_pykern(self) -> bool:
        return self.impl.startswith(PYKERN)


@dataclass
class Results:
    """Every row of a run, plus notes (a peer that is missing or failed, and why) and
    failures (a result that is wrong: the run exits with 1)."""

    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        print(f"  {row.group:<10} {row.case:<22} {row.impl:<28} {format_value(row)}", flush=True)
        return row

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(f"  note: {text}", flush=True)

    def fail(self, text: str) -> None:
        """Records a wrong or failed pykern result: noted, and the run exits non-zero."""
        self.failures.append(text)
        self.note(text)

    def attempt(self, what: str, work: Callable[[], object]) -> None:
        """Runs `work` (one peer's measurements); a failure becomes a note naming `what`."""
        try:
            work()
        except Exception as e:  # noqa: BLE001 - a peer failing must not stop the others
            self.note(f"{what} failed: {type(e).__name__}: {str(e).strip()[:200]}")

    def ratio(self, row: Row) -> float | None:
        """How many times better the best pykern row of the same group and case is than `row`
        (above 1: pykern is ahead), or None for pykern's own rows."""
        if row.is_pykern:
            return None
        mine = [r for r in self.rows if r.group == row.group and r.case == row.case
                and r.is_pykern and r.unit == row.unit]
        if not mine or row.value <= 0:
            return None
        if row.higher_is_better:
            best = max(r.value for r in mine)
            return best / row.value
        best = min(r.value for r in mine)
        return row.value / best if best > 0 else None

    def table(self) -> str:
        """The rows grouped by benchmark and case, with the ratio column."""
        lines = [f"{'benchmark':<10} {'case':<22} {'implementation':<28} {'value':>16} "
                 f"{'pykern ×':>9}  method"]
        lines.append("-" * len(lines[0]) + "-" * 16)
        previous = None
        order: dict[tuple[str, str], int] = {}
        for row in self.rows:  # benchmarks in the order they first ran, peers next to pykern
            order.setdefault((row.group, row.case), len(order))
        rows = sorted(self.rows, key=lambda r: order[(r.group, r.case)])
        for row in rows:
            if previous is not None and (row.group, row.case) != previous:
                lines.append("")
            previous = (row.group, row.case)
            ratio = self.ratio(row)
            lines.append(
                f"{row.group:<10} {row.case:<22} {row.impl:<28} {format_value(row):>16} "
                f"{'' if ratio is None else f'{ratio:.2f}':>9}  {row.method}"
            )
        lines.append("")
        lines.append("pykern ×: how many times better the best pykern figure of the same "
                     "benchmark and case is (above 1: pykern ahead).")
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)

    def save(self, path: Path, meta: dict[str, object]) -> None:
        data = {**meta, "rows": [asdict(r) | {"ratio": self.ratio(r)} for r in self.rows],
                "notes": self.notes, "failures": self.failures}
        path.write_text(json.dumps(data, indent=1, default=str))


def format_value(row: Row) -> str:
    value = row.value
    if value >= 100:
        text = f"{value:,.0f}"
    elif value >= 1:
        text = f"{value:.2f}"
    else:
        text = f"{value:.3g}"
    return f"{text} {row.unit}"


def power_of_two(n: int) -> str:
    """`2^26` for 67108864, else the number with separators."""
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else f"{n:,}"
