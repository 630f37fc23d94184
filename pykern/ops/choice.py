"""Kernel choice as data: what an op's kernels need to know of a device, read from its
`DeviceInfo` (never from its name), and the configurations they take per device, looked up in a
table keyed by device properties, with a heuristic for the devices the table does not name.

An op declares its implementations in order with the predicate that says where each applies
(`Impl(name, applies)`, see `pykern.ops.registry`); the predicates here are the common ones, and
`Op.choose(info, *operands)` is the one mechanism that picks. The device an op chooses by is
`device_info(op)`: the current device's description (tests may make one op choose as on another
kind of device, `choose_as`). Sizes that depend on the device (tile shapes, workgroup sizes,
chunks, thresholds between kernels) come from `config(op, info)`: the op's heuristic, overridden
by the first entry of its table whose `match` the device satisfies. A sweep that measures
candidates on a device (`python -m benchmarks tune`) writes a JSON table in pykern/ops/tuning/
keyed by its vendor and device id (recording the driver it was measured with); until then the
heuristics hold.

    info = device_info("cumsum")
    cfg = config("cumsum", info)      # cfg.threads, cfg["threads"]
    units = compute_units(info)       # SMs, CUs or cores; an estimate where the driver is silent
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pykern.runtime import get_device

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


class Config(dict):
    """An op's configuration on one device: a dict whose keys also read as attributes
    (`cfg.threads`; a value never takes the name of a dict method, such as `keys`). Shared by
    every call on that device: read it, never change it."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"a configuration has no value {name!r}") from None


@dataclass
class Tuning:
    """An op's configurations: `heuristic(info)` gives the values for any device, `entries`
    override them for the devices they match (the first that matches)."""

    heuristic: Callable[[Any], Mapping[str, Any]]
    entries: list[Entry] = field(default_factory=list)


TUNING: dict[str, Tuning] = {}
"""op name -> its tuning (registered by the op's module, `tune`)."""

# (op, id(info)) -> (info, its configuration): an op asks on every call that is not replayed
_CONFIGS: dict[tuple[str, int], tuple[Any, Config]] = {}


def tune(op: str, heuristic: Callable[[Any], Mapping[str, Any]], *entries: Entry) -> None:
    """Registers `op`'s heuristic and its table entries."""
    TUNING[op] = Tuning(heuristic, list(entries))
    forget()


def config(op: str, info: Any) -> Config:
    """The configuration of `op`'s kernels on the device `info` describes: the heuristic's
    values, overridden by the first matching entry of a test's override (`configured`), else of
    the device tables (pykern/ops/tuning/*.json), else of the entries registered in code."""
    hit = _CONFIGS.get((op, id(info)))
    if hit is not None and hit[0] is info:
        return hit[1]
    tuning = TUNING[op]
    values = Config(tuning.heuristic(info))
    for entry in _OVERRIDES.get(op, []) + device_tables().get(op, []) + tuning.entries:
        if entry.fits(info):
            values.update(entry.config)
            break
    _CONFIGS[(op, id(info))] = (info, values)
    return values


def forget() -> None:
    """Drops the configurations worked out so far (after a table changes)."""
    _CONFIGS.clear()


@contextlib.contextmanager
def configured(op: str, **values: Any) -> Iterator[None]:
    """Inside the block, `op`'s configuration on every device has `values` in place of its
    own (a table entry that matches any device, first): tests run one kernel on shapes that
    would otherwise take another.

        with configured("sort", block=128):   # rows of 4096: five merge stages in memory
            pk.sort(x)
    """
    entry = Entry({}, values, "a test's override")
    _OVERRIDES.setdefault(op, []).insert(0, entry)
    forget()
    try:
        yield
    finally:
        _OVERRIDES[op].remove(entry)
        forget()


# op name -> the overrides `configured` put in place, newest first
_OVERRIDES: dict[str, list[Entry]] = {}

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
    forget()


# op name -> the DeviceInfo fields it chooses by in place of the device's own (`choose_as`)
_PRETEND: dict[str, dict[str, Any]] = {}
_PRETENDED: dict[tuple[str, int], tuple[Any, Any]] = {}


def device_info(op: str) -> Any:
    """The description of the device that `op` chooses its kernels and configuration by: the
    current device's, unless a test made `op` choose as on another (`choose_as`)."""
    info = get_device().info
    if not _PRETEND or op not in _PRETEND:
        return info
    hit = _PRETENDED.get((op, id(info)))
    if hit is None or hit[0] is not info:
        hit = (info, dataclasses.replace(info, **_PRETEND[op]))
        _PRETENDED[(op, id(info))] = hit
    return hit[1]


@contextlib.contextmanager
def choose_as(ops: str | tuple[str, ...], **changes: Any) -> Iterator[None]:
    """Inside the block, `ops` choose their kernels and configurations as on a device that
    differs from the current one by `changes` (fields of its DeviceInfo): tests reach the
    kernels a GPU would run, which then run for real on the current device.

        with choose_as("cumsum", kind="discrete"):   # the GPUs' blocked scan
            pk.cumsum(x)
    """
    names = (ops,) if isinstance(ops, str) else ops
    saved = {name: _PRETEND.get(name) for name in names}
    for name in names:
        _PRETEND[name] = changes
    _PRETENDED.clear()
    forget()
    try:
        yield
    finally:
        for name, before in saved.items():
            if before is None:
                _PRETEND.pop(name, None)
            else:
                _PRETEND[name] = before
        _PRETENDED.clear()
        forget()
