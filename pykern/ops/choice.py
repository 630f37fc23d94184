"""Kernel choice as data: what an op's kernels need to know of a device, read from its
`DeviceInfo` (never from its name), and the configurations they take per device, looked up in a
table keyed by device properties, with a heuristic for the devices the table does not name.

An op declares its implementations in order with the predicate that says where each applies
(`Impl(name, applies)`, see `pykern.ops.registry`); the predicates here are the common ones.
Sizes that depend on the device (tile shapes, workgroups per compute unit, how far to split a
product's K) come from `config(op, info)`: the first entry of `TUNING[op]` whose `match` the
device satisfies, else the op's heuristic. A sweep that measures candidates on a device adds
an entry keyed by its vendor and device id (a JSON table in pykern/ops/tuning/, which also
records the driver it was measured with); until then the heuristics hold.

    cfg = config("matmul", info)      # {'split_below_waves': 1.0, ...}
    units = compute_units(info)       # SMs, CUs or cores; an estimate where the driver is silent
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# an estimate of a GPU's compute units where its driver does not say (VK_NV_shader_sm_builtins,
# VK_AMD_shader_core_properties and VK_ARM_shader_core_properties do): a mid-sized GPU's
UNKNOWN_GPU_UNITS = 64


def compute_units(info: Any) -> int:
    """The device's compute units (SMs, CUs, shader cores; CPU cores for the host and CPU
    Vulkan devices), as its driver reports them, else an estimate."""
    units = getattr(info.limits, "compute_units", None)
    if units:
        return int(units)
    if info.kind in ("host", "cpu"):
        return os.cpu_count() or 1
    return UNKNOWN_GPU_UNITS


def on_host(info: Any, *operands: Any) -> bool:
    """The host device (native code through LLVM): kernels written for its vectorisers."""
    return info.kind == "host"


def on_cpu(info: Any, *operands: Any) -> bool:
    """A CPU: the host device or a Vulkan CPU implementation (lavapipe), where barriers and
    shared memory cost more than they save."""
    return info.kind in ("cpu", "host")


def on_gpu(info: Any, *operands: Any) -> bool:
    """A GPU (anything but a CPU)."""
    return not on_cpu(info)


def subgroup_lanes(info: Any) -> int:
    """The invocations of a subgroup on the device (the size a compute pipeline gets)."""
    return int(info.features.subgroup_size)


@dataclass(frozen=True)
class Entry:
    """A configuration for the devices whose properties match: `match` maps a property
    (vendor_id, device_id, driver, kind, or a limit or feature name) to the value it must have
    (a callable is a test of the value); `config` overrides the heuristic's values."""

    match: Mapping[str, Any]
    config: Mapping[str, Any]
    note: str = ""

    def fits(self, info: Any) -> bool:
        for key, want in self.match.items():
            try:
                have = _property(info, key)
            except KeyError:  # a description without it (a test's stand-in): no match
                return False
            if not (want(have) if callable(want) else have == want):
                return False
        return True


def _property(info: Any, key: str) -> Any:
    """A property of the device by name: of the info itself, its limits or its features."""
    for holder in (info, getattr(info, "limits", None), getattr(info, "features", None)):
        if holder is not None and hasattr(holder, key):
            return getattr(holder, key)
    raise KeyError(f"a device has no property {key!r}")


@dataclass
class Tuning:
    """An op's configurations: `heuristic(info)` gives the values for any device, `entries`
    override them for the devices they match (the first that matches)."""

    heuristic: Callable[[Any], dict[str, Any]]
    entries: list[Entry] = field(default_factory=list)


TUNING: dict[str, Tuning] = {}
"""op name -> its tuning (registered by the op's module, `tune`)."""


def tune(op: str, heuristic: Callable[[Any], dict[str, Any]], *entries: Entry) -> None:
    """Registers `op`'s heuristic and its table entries."""
    TUNING[op] = Tuning(heuristic, list(entries))


def config(op: str, info: Any) -> dict[str, Any]:
    """The configuration of `op`'s kernels on the device `info` describes: the heuristic's
    values, overridden by the first device table (pykern/ops/tuning/*.json) whose device
    matches and that has values for `op`, else by the first matching entry registered in code."""
    tuning = TUNING[op]
    values = dict(tuning.heuristic(info))
    for entry in device_tables().get(op, []) + tuning.entries:
        if entry.fits(info):
            values.update(entry.config)
            break
    return values


TABLES = Path(__file__).parent / "tuning"
"""Where the device tables are: one JSON file per device, written by `python -m benchmarks
tune` (`{"device": name, "driver": ..., "match": {"vendor_id": .., "device_id": ..},
"ops": {op: {key: value}}, "measured": {...}}`)."""

_tables: dict[str, list[Entry]] | None = None


def device_tables() -> dict[str, list[Entry]]:
    """op name -> the entries of the device tables that have values for it (read once)."""
    global _tables
    if _tables is None:
        _tables = {}
        for path in sorted(TABLES.glob("*.json")):
            table = json.loads(path.read_text())
            for op, values in table["ops"].items():
                _tables.setdefault(op, []).append(
                    Entry(dict(table["match"]), dict(values), f"{path.name}: {table['device']}"))
    return _tables


def reload_tables() -> None:
    """Reads the device tables again at the next `config` (after `benchmarks tune` wrote
    one)."""
    global _tables
    _tables = None
