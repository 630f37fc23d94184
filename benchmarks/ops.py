"""GEMM-class and bandwidth-bound tensor ops (`--only ops`): pykern against torch, GPU time on
both sides, every pykern result checked against a float64 reference.

Each case (benchmarks/ops_gemm.py, ops_bandwidth.py) makes its inputs on the host, copies them
to both libraries and calls the op as a user does (`pk.matmul(a, b)` on Tensors,
`torch.matmul(a, b)`). pykern is timed with GPU timestamps around the calls (benchmarks/clock.py),
torch on CUDA with CUDA events; each side first runs one call to learn how many fit the plan's
time budget. The result of pykern's last timed call is compared with the reference: one out of
its dtype's bound (benchmarks/ops_check.py) is reported as WRONG and makes the run exit with 1.
A dtype this pykern or this device lacks skips its cases with a note.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator, Sequence

import pykern as pk

from . import ops_torch
from .clock import gpu_per_call, reps_for
from .ops_bandwidth import bandwidth_cases
from .ops_case import OpCase, to_pykern, to_torch, unusable
from .ops_check import Check
from .ops_gemm import gemm_cases
from .ops_plan import OpsPlan
from .ops_table import case_line, ops_table
from .peers import Peers
from .plan import Plan
from .results import Results, Row

GROUPS = ("matmul", "attention", "attention backward", "conv2d", "softmax", "layer_norm",
          "sum rows", "sum cols", "transpose")


def cases(plan: OpsPlan) -> Iterator[OpCase]:
    """Every case of the plan, in the order they run: GEMM-class first, bandwidth-bound next."""
    yield from gemm_cases(plan)
    yield from bandwidth_cases(plan)


ONLY_GROUPS: set[str] = set()  # `--ops-groups`: the groups of GROUPS to run (empty: all)
WARM_UP_S = 1.0  # device time spent untimed before the first figure
_warm = False


def run(plan: Plan, results: Results, peers: Peers) -> None:
    """Runs every case of `plan.ops`, adds its rows to `results` and prints the table."""
    if peers.torch is None or peers.ops_device is None:
        results.note("ops: no torch CUDA device to compare with; pykern figures only")
    skipped: dict[str, str | None] = {}
    for case in cases(plan.ops):
        if ONLY_GROUPS and case.group not in ONLY_GROUPS:
            continue
        if case.dtype not in skipped:
            skipped[case.dtype] = unusable(case.dtype)
            if skipped[case.dtype]:
                results.note(f"ops: {case.dtype} cases skipped: {skipped[case.dtype]}")
        if not skipped[case.dtype]:
            _run_case(plan.ops, results, peers, case)
            gc.collect()  # the inputs and results of a large case go before the next one's
    print("\n" + ops_table(results), flush=True)


def _run_case(plan: OpsPlan, results: Results, peers: Peers, case: OpCase) -> None:
    """pykern's figure and check, then torch's figure, then the case's line."""
    host = case.inputs()
    mine = _pykern(plan, results, case, host)
    if mine is None:
        return
    torch, device = peers.torch, peers.ops_device
    if torch is not None and device is not None:
        results.attempt(f"torch {device} on {case.group} {case.case}",
                        lambda: _torch(plan, results, case, host, torch, device, mine))
    print(case_line(mine), flush=True)


def _pykern(plan: OpsPlan, results: Results, case: OpCase,
            host: Sequence[object]) -> Row | None:
    """Times and checks pykern's op; the row it added, or None if the op failed."""
    try:
        tensors = [to_pykern(x, case.dtype) for x in host]
        work = lambda: case.pykern(tensors)  # noqa: E731
        first, _ = gpu_per_call(pk.get_device(), work, 1)
        global _warm
        if not _warm:  # an idle GPU runs its first second or so at lower clocks
            # by the clock: a fast case's capped repetitions would not fill WARM_UP_S
            warm_until = time.perf_counter() + WARM_UP_S
            while time.perf_counter() < warm_until:
                gpu_per_call(pk.get_device(), work, reps_for(first, 0.05, plan.most_reps))
            _warm = True
        reps = reps_for(first, plan.budget_s, plan.most_reps)
        seconds, result = gpu_per_call(pk.get_device(), work, reps)
        check = case.check(host, result)
    except pk.CompileError as e:
        if "lacks" not in str(e):
            raise
        results.note(f"ops: {case.group} {case.case} skipped: {str(e).splitlines()[0]}")
        return None
    except Exception as e:  # noqa: BLE001 - one case failing must not lose the others
        results.fail(f"pykern {case.group} {case.case} FAILED: {type(e).__name__}: "
                     f"{str(e).strip()[:300]}")
        return None
    row = results.add(Row(case.group, case.case, "pykern", case.rate(seconds), case.unit, True,
                          "gpu timestamps", _extra(case, check, seconds, reps)))
    if not check.ok:
        results.fail(f"pykern {case.group} {case.case} WRONG: max relative error "
                     f"{check.error:.3g} over the bound {check.bound:.3g} ({check.checked})")
    return row


def _extra(case: OpCase, check: Check, seconds: float, reps: int) -> dict[str, object]:
    return {"dtype": case.dtype, "ms_per_call": seconds * 1e3, "reps": reps,
            "max_rel_error": check.error, "bound": check.bound, "checked": check.checked,
            "status": "ok" if check.ok else "WRONG", "torch": None, "ratio": None}


def _torch(plan: OpsPlan, results: Results, case: OpCase, host: Sequence[object], torch: object,
           device: str, mine: Row) -> None:
    """Times torch's op on `device` and records the ratio in pykern's row."""
    if case.torch is None:
        raise NotImplementedError(f"no torch counterpart of {case.group}")
    with ops_torch.like_for_like(torch) as settings:
        try:
            tensors = [to_torch(torch, x, case.dtype, device) for x in host]
            work = lambda: case.torch(torch, tensors)  # noqa: E731
            first, _, method = ops_torch.per_call(torch, device, work, 1)
            reps = reps_for(first, plan.budget_s, plan.most_reps)
            seconds, _, method = ops_torch.per_call(torch, device, work, reps)
        finally:
            tensors = work = None  # noqa: F841 - released before the cache is emptied
            ops_torch.release(torch, device)
    theirs = results.add(Row(case.group, case.case, f"torch {device}", case.rate(seconds),
                             case.unit, True, method,
                             {"ms_per_call": seconds * 1e3, "reps": reps, "settings": settings}))
    mine.extra["torch"] = theirs.value
    mine.extra["ratio"] = mine.value / theirs.value if theirs.value > 0 else None
