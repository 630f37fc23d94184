"""The `ops` benchmark as one line per case: pykern, torch, their ratio and the checked error.

Built from the pykern rows the benchmark added (their `extra` carries torch's figure, the ratio
and the check), so the same table comes out of a finished run, printed or written into
docs/performance.md (benchmarks/ops_docs.py).
"""

from __future__ import annotations

from .results import Results, Row, format_value

HEADER = ("| op | case | pykern | torch | ratio | max rel. error | bound | check |\n"
          "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")


def ops_rows(results: Results) -> list[Row]:
    """The pykern rows of the ops benchmark, in the order they ran."""
    return [r for r in results.rows if r.is_pykern and "max_rel_error" in r.extra]


def case_line(row: Row) -> str:
    """`  matmul 4096^3 f16   pykern 21.5 TFLOP/s  torch 729 TFLOP/s  ratio 0.03  ...`"""
    x = row.extra
    torch = "-" if x["torch"] is None else format_value(_with(row, x["torch"]))
    ratio = "-" if x["ratio"] is None else f"{x['ratio']:.2f}"
    return (f"  {row.group:<10} {row.case:<30} pykern {format_value(row):>15}  torch "
            f"{torch:>15}  ratio {ratio:>5}  max rel err {x['max_rel_error']:.1e} "
            f"(bound {bound_text(x['bound'])}) {x['status']}")


def ops_table(results: Results) -> str:
    """A markdown table of the ops cases (ratio: pykern / torch, above 1: pykern ahead)."""
    lines = [HEADER]
    for row in ops_rows(results):
        x = row.extra
        torch = "" if x["torch"] is None else format_value(_with(row, x["torch"]))
        ratio = "" if x["ratio"] is None else f"{x['ratio']:.2f}"
        status = "ok" if x["status"] == "ok" else "**WRONG**"
        lines.append(f"| {row.group} | {row.case} | {format_value(row)} | {torch} | {ratio} "
                     f"| {x['max_rel_error']:.1e} | {bound_text(x['bound'])} | {status} |")
    return "\n".join(lines)


def bound_text(bound: float) -> str:
    """`9.8e-04`, or `exact` for a bound of 0."""
    return "exact" if bound == 0 else f"{bound:.1e}"


def _with(row: Row, value: object) -> Row:
    """`row` with another value, for formatting a peer's figure in the same unit."""
    return Row(row.group, row.case, row.impl, float(value), row.unit,  # type: ignore[arg-type]
               row.higher_is_better, row.method)
