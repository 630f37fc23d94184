"""`--only host`: the host backend (`pk.set_device("host")`) against numpy, lavapipe, Numba's
parallel `@njit` and Taichi's CPU backend, in one process, with the issue's targets.

Each array case (benchmarks/host_cases.py) makes its inputs once and runs them on the host
device and on lavapipe (switched with `pk.set_device`; lavapipe takes smaller reductions and a
smaller matmul, benchmarks/host_plan.py), then as numpy, Numba and Taichi write it. Then the
compile latency of a 20-line kernel (benchmarks/host_compile.py) and the MLP training example
on both devices and in numpy (benchmarks/host_train.py). Every result is checked (WRONG fails
the run, benchmarks/host_measure.py), and each target of the issue is a row of its own with
the ratio, the target and whether it is met (benchmarks/host_targets.py). The device that was
current before is current again at the end.
"""

from __future__ import annotations

import gc
from typing import Any

import pykern as pk

from . import host_compile, host_train
from .host_cases import HostCase, host_cases
from .host_measure import Expected, add_row, expected, shape_label, time_device, time_wall
from .host_peers import CpuPeers, find_cpu_peers
from .host_plan import HOST_FULL
from .host_targets import check_targets
from .peers import Peers
from .plan import Plan
from .results import Results

HOST_METHOD = "host timer (wall)"
LAVAPIPE_METHOD = "gpu timestamps"


def run(plan: Plan, results: Results, peers: Peers) -> None:
    hp = plan.host
    before = pk.get_device()
    devices = pykern_devices(results)
    cpu = find_cpu_peers(results, wanted=peers.wanted, taichi_vulkan=peers.taichi is not None)
    if cpu.versions:
        print(f"  cpu peers: {', '.join(f'{k} {v}' for k, v in cpu.versions.items())}",
              flush=True)
    try:
        for case in host_cases():
            results.attempt(f"host {case.name}",
                            lambda c=case: _run_case(hp, results, devices, cpu, c))
            gc.collect()  # the inputs of a large case go before the next one's
        results.attempt("host compile", lambda: host_compile.run(hp, results, devices))
        results.attempt("host train", lambda: host_train.run(hp, results, devices))
    finally:
        cpu.close()
        pk.set_device(before.info.index)
    check_targets(results, quick=hp != HOST_FULL)


def pykern_devices(results: Results) -> dict[str, Any]:
    """{"host": its device index, "lavapipe": the first Vulkan CPU device's} (lavapipe left
    out with a note where there is none)."""
    infos = pk.devices()
    found = {"host": next(i.index for i in infos if i.kind == "host")}
    lavapipe = [i for i in infos if i.kind == "cpu"]
    if lavapipe:
        found["lavapipe"] = lavapipe[0].index
    else:
        results.note("host: no Vulkan CPU device (lavapipe): its rows are left out")
    return found


def _run_case(hp: Any, results: Results, devices: dict[str, int], cpu: CpuPeers,
              case: HostCase) -> None:
    label = case.label(hp)
    shape = case.shape(hp, False)
    inputs = case.make(shape)
    want = expected(case, inputs)
    for name, index in devices.items():
        device = pk.set_device(index)
        small = case.shape(hp, name == "lavapipe")
        arrays, wanted = (inputs, want) if small == shape else \
            _smaller(case, small)
        suffix = "" if small == shape else f" {shape_label(small)}"
        tensors = [pk.asarray(a) for a in arrays]
        for kind, prepare in case.pykern.items():
            impl = f"pykern {name} {kind}{suffix}"
            try:
                timing = time_device(device, prepare(tensors), hp)
                got = timing[2].numpy()
            except Exception as e:  # noqa: BLE001 - one failing op must not lose the others
                results.fail(f"{impl} {label} FAILED: {type(e).__name__}: {str(e)[:300]}")
                continue
            add_row(results, case, label, impl, f"{name} {kind}", timing, got, wanted, small,
                    HOST_METHOD if name == "host" else LAVAPIPE_METHOD, exact=case.exact)
        del tensors
    _peers(hp, results, cpu, case, label, inputs, want, shape)


def _smaller(case: HostCase, shape: tuple[int, ...]) -> tuple[list, Expected]:
    arrays = case.make(shape)
    return arrays, expected(case, arrays)


def _peers(hp: Any, results: Results, cpu: CpuPeers, case: HostCase, label: str,
           inputs: list, want: Expected, shape: tuple[int, ...]) -> None:
    timing = time_wall(case.numpy(inputs), hp)
    add_row(results, case, label, "numpy", "numpy", timing, timing[2], want, shape,
            "wall clock")
    if cpu.numba is not None:
        def numba() -> None:
            timing = time_wall(case.numba(cpu.numba)(inputs), hp)
            add_row(results, case, label, "numba prange", "numba", timing, timing[2], want,
                    shape, "wall clock")
        results.attempt(f"numba on {label}", numba)
    if cpu.taichi is not None:
        results.attempt(f"taichi cpu on {label}",
                        lambda: _taichi(hp, results, cpu.taichi, case, label, inputs, want,
                                        shape))


def _taichi(hp: Any, results: Results, tc: Any, case: HostCase, label: str, inputs: list,
            want: Expected, shape: tuple[int, ...]) -> None:
    fields = tc.Fields(inputs, case.out_shape(shape))
    run = case.taichi(tc)

    def work() -> Any:
        out = run(fields.fields)
        tc.ti.sync()
        return out

    try:
        timing = time_wall(work, hp)
        add_row(results, case, label, "taichi cpu", "taichi", timing, timing[2].to_numpy(),
                want, shape, "wall clock")
    finally:
        fields.destroy()
