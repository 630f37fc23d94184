"""`pykern.passes.spread`: which kernels run several logical invocations per invocation, and
that those give the interpreter's results on a Vulkan device (which spreads them): grids that
are not multiples of a workgroup's span, guards that end inside a workgroup, conditions that
differ between the copies, gathers and scatters, atomics, narrow and wide dtypes, reassigned
scalar parameters, split dispatches, and the disk cache."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
from pykern.jit.cache import DiskCache
from pykern.passes.spread import ITEMS_PER_INVOCATION
from pykern.passes import spread
from pykern.passes.spread import spreadable
from pykern.spirv.lower import lower

rng = np.random.default_rng(21)
SPAN = 256 * ITEMS_PER_INVOCATION  # of the default 1-D workgroup
GRIDS = [1, 3, 255, 256, 257, SPAN - 1, SPAN, SPAN + 1, 3 * SPAN + 517]


@pk.kernel
def add(a: pk.f32[:], b: pk.f32[:], c: pk.f32[:]):
    i = pk.global_id(0)
    c[i] = a[i] + b[i]


@pk.kernel
def guarded(x: pk.f32[:], y: pk.f32[:], out: pk.f32[:], n: int, scale: float):
    i = pk.global_id(0)
    if i < n:
        scale = scale * 0.5  # a scalar parameter assigned to: a local of each copy
        t = x[i] * scale
        out[i] = t + y[i]


@pk.kernel
def branches(x: pk.f32[:], out: pk.f32[:], count: pk.i32[:]):
    i = pk.global_id(0)
    v = x[i]
    if v > 0.0:
        out[i] = v * 2.0
        if v > 0.5:
            pk.atomic_add(count, 0, 1)
    else:
        out[i] = -v


@pk.kernel
def scatter_gather(idx: pk.i32[:], x: pk.f64[:], out: pk.f64[:]):
    i = pk.global_id(0)
    out[idx[i]] = x[idx[(i + 1) % len(idx)]] * 3.0


@pk.kernel
def narrow(a: pk.i8[:], h: pk.f16[:], m: pk.bool_[:], out: pk.f16[:], flags: pk.bool_[:]):
    i = pk.global_id(0)
    out[i] = h[i] + pk.f16(a[i])
    flags[i] = m[i] != (a[i] > 0)


def _interpret(kernel: pk.Kernel) -> pk.Kernel:
    return pk.kernel(kernel.__wrapped__, interpret=True)


def _f32(n: int) -> np.ndarray:
    return rng.uniform(-1, 1, n).astype(np.float32)


# ---- which kernels spread


def test_the_natural_kernels_spread():
    x = np.zeros(8, np.float32)
    assert spreadable(add.ir(x, x, x))
    assert spreadable(guarded.ir(x, x, x, 8, 1.0))
    assert spreadable(branches.ir(x, x, np.zeros(1, np.int32)))
    k = spread(add.ir(x, x, x), 4)
    assert k.items == 4 and k.span == (1024, 1, 1) and k.workgroup == (256, 1, 1)
    assert spread(add.ir(x, x, x), 1) == add.ir(x, x, x)


def _not_spread(tmp_path, body: str, workgroup: str = "") -> bool:
    """Whether a kernel of `body` (over x: f32[:], out: f32[:]) is left as it is."""
    namespace: dict = {}
    src = (f"import pykern as pk\n@pk.kernel{workgroup}\ndef k(x: pk.f32[:], out: pk.f32[:]):\n"
           + "".join(f"    {line}\n" for line in body.splitlines()))
    path = tmp_path / "kernel_source.py"  # kernels are read from their file
    path.write_text(src)
    exec(compile(src, str(path), "exec"), namespace)
    x = np.zeros(4, np.float32)
    kernel_ir = namespace["k"].ir(x, x)
    return not spreadable(kernel_ir) and spread(kernel_ir, 4) is kernel_ir


@pytest.mark.parametrize("body", [
    "i = pk.global_id(0)\nout[i] = x[i] + pk.local_id(0)",
    "i = pk.global_id(0)\nout[i] = x[i] + pk.group_id(0)",
    "i = pk.global_id(0)\nfor k in range(2):\n    out[i] = x[i] + k",
    "i = pk.global_id(0)\nif x[i] > 0.0:\n    return\nout[i] = x[i]",
    "i = pk.global_id(0)\nout[i] = pk.subgroup_add(x[i])",
    "i = pk.global_id(0)\ns = pk.shared(pk.f32, (256,))\ns[pk.local_id(0)] = x[i]\n"
    "pk.barrier()\nout[i] = s[0]",
    "i = pk.global_id(0)\nt = pk.local(pk.f32, (2,))\nt[0] = x[i]\nout[i] = t[0]",
    # a large body: compute, not loads, is what it waits for
    "i = pk.global_id(0)\nout[i] = pk.sin(x[i]) + pk.cos(x[i]) + pk.tan(x[i]) + pk.exp(x[i])",
])
def test_kernels_that_can_tell_invocations_apart_do_not_spread(tmp_path, body: str):
    assert _not_spread(tmp_path, body)


@pytest.mark.parametrize("options", ["(workgroup=(16, 16))", "(debug=True)"])
def test_2d_workgroups_and_debug_do_not_spread(tmp_path, options: str):
    assert _not_spread(tmp_path, "i = pk.global_id(0)\nout[i] = x[i]", options)


# ---- results on a Vulkan device, against the interpreter


on_vulkan = pytest.mark.usefixtures("on_vulkan")


@on_vulkan
def test_a_vulkan_device_spreads_by_the_span():
    x = pk.empty(8)
    module = add.compile(x, x, x).module
    assert module.items == ITEMS_PER_INVOCATION
    assert module.layout.workgroup == (SPAN, 1, 1)


@on_vulkan
@pytest.mark.parametrize("grid", GRIDS)
def test_add_every_grid(grid: int):
    a, b = _f32(grid), _f32(grid)
    c = np.full(grid + 1, 9.0, np.float32)  # one past the grid: never written
    add[grid](a, b, c[:grid])
    np.testing.assert_array_equal(c[:grid], a + b)


@on_vulkan
@pytest.mark.parametrize("n", [0, 1, 300, SPAN + 3])
def test_a_guard_that_ends_inside_a_workgroup(n: int):
    grid = SPAN + 700
    x, y = _f32(grid), _f32(grid)
    got, want = np.zeros(grid, np.float32), np.zeros(grid, np.float32)
    guarded[grid](x, y, got, n, 3.0)
    _interpret(guarded)[grid](x, y, want, n, 3.0)
    np.testing.assert_array_equal(got, want)


@on_vulkan
@pytest.mark.parametrize("grid", [5, SPAN + 9])
def test_conditions_that_differ_between_copies(grid: int):
    x = _f32(grid)
    x[: grid // 2] = np.abs(x[: grid // 2])  # a run where every copy agrees, too
    got, want = np.zeros(grid, np.float32), np.zeros(grid, np.float32)
    n_got, n_want = np.zeros(1, np.int32), np.zeros(1, np.int32)
    branches[grid](x, got, n_got)
    _interpret(branches)[grid](x, want, n_want)
    np.testing.assert_array_equal(got, want)
    assert n_got[0] == n_want[0] == int((x > 0.5).sum())


@on_vulkan
def test_gather_and_scatter_through_index_arrays():
    if not pk.get_device().info.features.fp64:
        pytest.skip("no f64 on this device")
    n = 2 * SPAN + 11
    idx = rng.permutation(n).astype(np.int32)
    x = rng.uniform(-1, 1, n)
    got, want = np.zeros(n), np.zeros(n)
    scatter_gather[n](idx, x, got)
    _interpret(scatter_gather)[n](idx, x, want)
    np.testing.assert_array_equal(got, want)


@on_vulkan
def test_narrow_dtypes():
    n = SPAN + 5
    a = rng.integers(-50, 50, n).astype(np.int8)
    h = rng.uniform(-4, 4, n).astype(np.float16)
    m = rng.random(n) < 0.5
    out, flags = np.zeros(n, np.float16), np.zeros(n, np.bool_)
    narrow[n](a, h, m, out, flags)
    np.testing.assert_array_equal(out, h + a.astype(np.float16))
    np.testing.assert_array_equal(flags, m != (a > 0))


@on_vulkan
def test_split_dispatches_count_bases_in_logical_invocations(monkeypatch):
    device = pk.get_device()
    monkeypatch.setattr(device._launcher, "max_groups", (2, 65535, 65535))
    grid = 5 * SPAN + 3  # 6 workgroups of a span: 3 dispatches
    a, b = _f32(grid), _f32(grid)
    c = np.zeros(grid, np.float32)
    add[grid](a, b, c)
    np.testing.assert_array_equal(c, a + b)


def test_the_disk_cache_keeps_the_span(tmp_path):
    x = np.zeros(4, np.float32)
    k = spread(add.ir(x, x, x), 4)
    module = lower(k)
    cache = DiskCache(tmp_path)
    cache.store("key", module.words, k.params, module.layout, 128, module.items)
    types = tuple((p.name, p.type) for p in k.params)
    entry = cache.load("key", types, k.workgroup, 128)
    assert entry is not None and entry.items == 4
    assert entry.layout == module.layout and entry.layout.workgroup == (1024, 1, 1)
