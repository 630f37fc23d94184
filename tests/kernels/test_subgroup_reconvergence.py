"""Subgroup operations in divergent control flow: after an `if` or a loop the whole subgroup
takes part again (it reconverges), in the interpreter as on the host backend and on Vulkan
devices. Each kernel runs in the interpreter, on the current device and, where the machine
has both, on the other CPU path (the host backend and lavapipe)."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk


def branches_and_loops(out: pk.i32[:]):
    lane = pk.subgroup_lane()
    a = 0
    if lane < 3:
        a = pk.subgroup_add(1)  # the three lanes that took the branch
    b = pk.subgroup_add(1)  # all eight again
    c = 0
    for _j in range(lane % 4):  # per-lane trip counts: 6, then 4, then 2 lanes
        c += pk.subgroup_add(1)
    d = pk.subgroup_add(1)
    out[pk.global_id(0)] = a * 1000000 + b * 10000 + c * 100 + d


@pk.func
def count_to(n):
    t = 0
    for _j in range(n):
        t += pk.subgroup_add(1)
    return t


def nested_through_a_function(out: pk.i32[:]):
    lane = pk.subgroup_lane()
    total = 0
    for r in range(2):
        if lane % 2 == r:
            total += count_to(lane // 2 + 1) * 100
        k = 0
        while pk.subgroup_any(k < lane % 3):  # the loop runs while any lane wants it to
            k += 1
        total += pk.subgroup_max(lane + r) * 10 + k
    out[pk.global_id(0)] = total


def expected_branches_and_loops() -> list[int]:
    lanes = range(8)
    a = [3 if lane < 3 else 0 for lane in lanes]
    c = [sum(sum(1 for m in lanes if m % 4 > j) for j in range(lane % 4)) for lane in lanes]
    return [a[k] * 1000000 + 8 * 10000 + c[k] * 100 + 8 for k in lanes]


def run_everywhere(fn) -> dict[str, np.ndarray]:
    """`fn` over one subgroup of 8 in the interpreter and on each compiled backend."""
    results = {}
    out = np.zeros(8, np.int32)
    pk.kernel(fn, workgroup=(8,), interpret=True)[8](out)
    results["interpreter"] = out
    current = pk.get_device()
    others = [d.index for d in pk.devices() if (d.kind == "host") != (current.info.kind == "host")]
    try:
        for index in [current.info.index, *others[:1]]:
            device = pk.set_device(index)
            if device.info.features.subgroup_size != 8:
                continue  # the expected values are for subgroups of 8
            out = np.zeros(8, np.int32)
            pk.kernel(fn, workgroup=(8,))[8](out)
            results[device.info.name] = out
    finally:
        pk.set_device(current.info.index)
    return results


@pytest.mark.parametrize("fn", [branches_and_loops, nested_through_a_function],
                         ids=lambda f: f.__name__)
def test_subgroups_reconverge_the_same_everywhere(fn):
    results = run_everywhere(fn)
    assert len(results) >= 2, results
    reference = results["interpreter"]
    if fn is branches_and_loops:
        assert reference.tolist() == expected_branches_and_loops()
    for name, got in results.items():
        np.testing.assert_array_equal(got, reference, err_msg=name)
