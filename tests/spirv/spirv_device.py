"""Running lowered kernels on the device for the end-to-end SPIR-V tests (the `device`
fixture is in conftest.py)."""

from __future__ import annotations

import numpy as np

from pykern import ir
from pykern.spirv import Target, lower
from pykern.spirv.debug import DEBUG_BUFFER, DEBUG_WORDS


def run(device, k: ir.Kernel, grid, arrays: dict[str, np.ndarray],
        scalars: dict[str, object] | None = None,
        target: Target | None = None) -> dict[str, np.ndarray]:
    """Lowers `k` (for `target`), launches it over `grid` with `arrays` (copied in) and
    `scalars`, and returns every array as the kernel left it (in debug mode also the debug
    buffer, under `DEBUG_BUFFER`, and the module under "module")."""
    module = lower(k, target or Target())
    layout = module.layout
    grid = (grid, 1, 1) if isinstance(grid, int) else tuple(grid) + (1,) * (3 - len(grid))
    values: dict[str, object] = {f"grid{d}": grid[d] for d in range(3)}
    for name, value in (scalars or {}).items():
        values[name] = int(value) if isinstance(value, (bool, np.bool_)) else value
    buffers = {}
    for name, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        values[f"{name}.offset"] = 0
        for axis in range(arr.ndim):
            values[f"{name}.shape{axis}"] = arr.shape[axis]
            values[f"{name}.stride{axis}"] = arr.strides[axis] // arr.itemsize
        buf = device.create_buffer(arr.nbytes)
        buf.upload(arr)
        buffers[name] = (buf, arr)
    if any(slot.name == DEBUG_BUFFER for slot in layout.buffers):
        # what a launcher does in debug mode: a zeroed report buffer, read back after the launch
        report = np.zeros(DEBUG_WORDS, np.uint32)
        buf = device.create_buffer(report.nbytes)
        buf.upload(report)
        buffers[DEBUG_BUFFER] = (buf, report)
    program = device.create_program(module.words, layout)
    device.launch(program, grid, [buffers[slot.name][0] for slot in layout.buffers],
                  layout.pack([values.get(f.name, 0) for f in layout.fields]))
    out = {}
    for name, (buf, arr) in buffers.items():
        result = np.empty_like(arr)
        buf.read_into(result)
        out[name] = result
    out["module"] = module  # type: ignore[assignment]
    return out
