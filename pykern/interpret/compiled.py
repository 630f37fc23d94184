"""`InterpretedKernel`: a kernel's generated Python, executed once, ready to launch."""

from __future__ import annotations

import linecache
from collections.abc import Callable, Mapping

import numpy as np

from pykern import ir
from pykern.ir.identity_cache import IdentityCache
from pykern.interpret import names
from pykern.interpret.arrays import parameter_values
from pykern.interpret.helpers import NAMESPACE
from pykern.interpret.module import generate
from pykern.interpret.reports import assertion_reporter, out_of_bounds_reporter
from pykern.interpret.runner import SCHEDULES, Launch, num_groups
from pykern.interpret.tiles import NAMESPACE as TILE_NAMESPACE
from pykern.runtime import grid as runtime_grid

CACHE_SIZE = 256
DEFAULT_SUBGROUP_SIZE = 32  # NVIDIA's; lavapipe's is 8: pass the device's to compare with it


class InterpretedKernel:
    """One `ir.Kernel` turned into Python. `source` is the generated module (readable; it is
    also what tracebacks through the kernel show). Launch with `run(grid, arrays, scalars)`."""

    def __init__(self, kernel: ir.Kernel):
        generated = generate(kernel)
        self.kernel = kernel
        self.source: str = generated.source
        self.generated = generated
        self.lockstep: bool = generated.lockstep
        self.filename = f"<pykern.interpret {names.comment(kernel.name)} {id(self):x}>"
        # registered so tracebacks and debuggers show the generated lines
        linecache.cache[self.filename] = (len(self.source), None,
                                          self.source.splitlines(True), self.filename)
        namespace = {**NAMESPACE, **TILE_NAMESPACE}
        exec(compile(self.source, self.filename, "exec"), namespace)
        self._bind: Callable[..., Callable] = namespace["bind"]  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<InterpretedKernel {self.kernel.name}>"

    def run(self, grid: int | tuple[int, ...], arrays: Mapping[str, object],
            scalars: Mapping[str, object], subgroup_size: int = DEFAULT_SUBGROUP_SIZE,
            written_ndims: Mapping[str, int] | None = None) -> None:
        """Runs every invocation of a launch of `grid` on the host; arrays are updated in
        place. A user's launch is checked by the JIT layer before it gets here; for other
        callers a bad grid is a `GridError` (a ValueError) and bad arguments TypeError or
        ValueError. At run time: KernelIndexError for an access outside an array's buffer (in
        debug mode: outside its shape) and, in debug mode, KernelAssertionError for a failed
        assert. `written_ndims`: see `pykern.interpret.run`."""
        grid3 = runtime_grid.normalize_grid(grid)
        if subgroup_size < 1:
            raise ValueError(f"subgroup_size must be positive, not {subgroup_size}")
        k = self.kernel
        values = parameter_values(k, arrays, scalars)
        values.update(zip(names.GRID, grid3, strict=True))
        values.update(zip(names.NUM_GROUPS, num_groups(grid3, k.workgroup), strict=True))
        values[names.SUBGROUP_SIZE] = subgroup_size
        values[names.OUT_OF_BOUNDS] = out_of_bounds_reporter(k, self.generated.sites, values,
                                                             written_ndims or {})
        values[names.ASSERT_FAILED] = assertion_reporter(k, self.generated.asserts)
        launch = Launch(self._bind(**values), grid3, k.workgroup, subgroup_size,
                        self.generated.subgroups)
        with np.errstate(all="ignore"):  # float / 0 is inf, not a warning, as on the GPU
            SCHEDULES[self.lockstep](launch)

    __call__ = run


# per kernel object (see pykern.ir.identity_cache); an evicted kernel's source leaves linecache
_cache: IdentityCache[InterpretedKernel] = IdentityCache(
    lambda old: linecache.cache.pop(old.filename, None))


def compile_python(kernel: ir.Kernel) -> InterpretedKernel:
    """The interpreted form of `kernel`, generated once per kernel object (a small LRU)."""
    hit = _cache.get(kernel)
    return hit if hit is not None else _cache.put(kernel, InterpretedKernel(kernel), CACHE_SIZE)
