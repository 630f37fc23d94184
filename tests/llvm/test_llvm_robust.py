"""Robust buffer access on the host device: outside debug mode an index outside an array never
crashes the process and never touches memory outside the array's own buffer. A store whose
element address (`offset + sum(index * stride)`) lies outside the buffer is dropped, a load
there gives 0, an atomic does nothing and gives 0; `pk.shared` and `pk.local` arrays (stack
memory) likewise. Neighbouring tensors stay intact.

Expected results come from a numpy model of that rule (`Buffer`), for grids that run past the
array, indices before its start (negative), strided, transposed and offset views, loops,
guards, atomics, shared and local arrays; each kernel runs with many arguments, so that some
workgroups take the proved path (no checks: `pykern.llvm.proofs`) and some the checked one.
Debug mode still reports `pk.KernelIndexError`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pykern as pk
from pykern.llvm.bound_analysis import prove_accesses


@pytest.fixture(autouse=True)
def host():
    previous = pk.get_device()
    device = pk.set_device("host")
    yield device
    pk.set_device(previous.info.index)


class Buffer:
    """The numpy model of one buffer: element addresses inside it are read and written,
    those outside are not (a read gives 0)."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = data.reshape(-1).copy()

    def read(self, address: int) -> float:
        return self.data[address] if 0 <= address < self.data.size else 0

    def write(self, address: int, value: object) -> None:
        if 0 <= address < self.data.size:
            self.data[address] = value


def guarded(n: int, fill: float = 0.0) -> tuple[pk.Tensor, pk.Tensor, pk.Tensor]:
    """A tensor of `n` elements between two neighbours made just before and after it."""
    before = pk.full((257,), -1.0)
    t = pk.full((n,), fill)
    after = pk.full((257,), -2.0)
    return before, t, after


def assert_intact(before: pk.Tensor, after: pk.Tensor) -> None:
    assert np.all(before.numpy() == -1.0) and np.all(after.numpy() == -2.0)


# ---------------------------------------------------------------- the issue's case

@pk.kernel
def fill(x: pk.f32[:]):
    i = pk.global_id(0)
    x[i] = 7.0


def test_a_grid_past_the_end_writes_only_the_array():
    before, b, after = guarded(64)
    fill[256](b)
    assert np.all(b.numpy() == 7.0)
    assert_intact(before, after)


def test_the_issues_reproducer_exits_cleanly_in_a_fresh_process(tmp_path):
    """Heap corruption shows at exit ('corrupted size vs. prev_size', SIGSEGV): the whole
    process must end normally."""
    script = tmp_path / "repro.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import pykern as pk
        pk.set_device("host")

        @pk.kernel
        def fill(x: pk.f32[:]):
            i = pk.global_id(0)
            x[i] = 7.0

        keep = [pk.zeros(64) for _ in range(8)]
        b = pk.zeros(64)
        for _ in range(20):
            fill[1 << 16](b)
        more = [pk.zeros(64) for _ in range(8)]
        assert all(np.all(t.numpy() == 0) for t in keep + more)
        print("ok", b.numpy().sum())
    """))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ok", "448.0"]


def test_debug_mode_still_reports_the_index():
    @pk.kernel(debug=True)
    def fill_checked(x: pk.f32[:]):
        i = pk.global_id(0)
        x[i] = 7.0

    b = pk.zeros(64)
    with pytest.raises(pk.KernelIndexError, match=r"index \(64,\) is out of bounds for 'x'"):
        fill_checked[256](b)


# ---------------------------------------------------------------- affine indices, 1-D

@pk.kernel
def affine_copy(x: pk.f32[:], y: pk.f32[:], a: int, b: int, c: int, d: int):
    i = pk.global_id(0)
    y[a * i + b] = x[c * i + d] + 1.0


AFFINE_CASES = [  # (a, b, c, d, grid, len(x), len(y))
    (1, 0, 1, 0, 300, 300, 300),  # all inside: the proved path everywhere
    (1, 0, 1, 0, 700, 300, 500),  # past both ends
    (1, -5, 1, -3, 600, 600, 600),  # before the start: negative indices
    (-1, 299, 1, 0, 500, 400, 300),  # backwards, negative past the end of the grid
    (2, 1, 3, -7, 1000, 900, 800),
    (-3, 1000, -2, 50, 777, 100, 1200),
    (1, 1 << 30, 1, 0, 300, 300, 300),  # far away: dropped
    (1, -(1 << 30), 1, 1 << 30, 300, 300, 300),
    (65536, 0, 65536, 3, 70000, 100, 100),  # i * 65536 wraps i32: no check may be skipped
]


@pytest.mark.parametrize("a, b, c, d, grid, nx, ny", AFFINE_CASES)
def test_affine_indices_outside_the_arrays(a, b, c, d, grid, nx, ny):
    rng = np.random.default_rng(grid + nx)
    xs = rng.standard_normal(nx).astype(np.float32)
    x = pk.asarray(xs)
    before, y, after = guarded(ny, fill=5.0)
    affine_copy[grid](x, y, a, b, c, d)
    xb, yb = Buffer(xs), Buffer(np.full(ny, 5.0, np.float32))
    for i in range(grid):
        yb.write(_wrap32(a * i + b), np.float32(xb.read(_wrap32(c * i + d))) + np.float32(1))
    np.testing.assert_array_equal(y.numpy(), yb.data)
    assert_intact(before, after)


def _wrap32(v: int) -> int:
    """v as an i32 computes it (the kernel's arithmetic wraps)."""
    return (v + (1 << 31)) % (1 << 32) - (1 << 31)


def test_the_analysis_bounds_what_it_can():
    """affine_copy's two accesses are bounded (their workgroups run unchecked where the
    bounds hold); an index read from memory is not."""
    x = np.zeros(16, np.float32)
    assert len(prove_accesses(affine_copy.ir(x, x, 1, 0, 1, 0)).sites) == 2

    @pk.kernel
    def gather(x: pk.f32[:], idx: pk.i32[:], y: pk.f32[:]):
        i = pk.global_id(0)
        y[i] = x[idx[i]]

    found = prove_accesses(gather.ir(x, np.zeros(16, np.int32), x))
    assert sorted(p.array for p in found.sites.values()) == ["idx", "y"]


@pk.kernel
def clamped_gather(x: pk.f32[:], idx: pk.i32[:], y: pk.f32[:]):
    i = pk.global_id(0)
    y[i] = x[min(max(idx[i], 0), x.shape[0] - 1)]


def test_a_clamped_index_read_from_memory_is_bounded():
    """min(max(k, 0), n - 1) of a k read from memory lies in [0, n - 1]: the clamp proves
    the access, and the kernel gives numpy's clip for indices far outside, i32's limits
    included."""
    x = np.arange(1, 11, dtype=np.float32)
    idx = np.array([-(2**31), -5, -1, 0, 3, 9, 10, 77, 2**31 - 1, 4, 5, 6, 7, 8, 1, 2],
                   np.int32)
    found = prove_accesses(clamped_gather.ir(x, idx, x))
    assert sorted(p.array for p in found.sites.values()) == ["idx", "x", "y"]
    y = pk.zeros(16, pk.f32)
    clamped_gather[16](pk.asarray(x), pk.asarray(idx), y)
    np.testing.assert_array_equal(y.numpy(), x[np.clip(idx, 0, 9)])


# ---------------------------------------------------------------- loops, guards, functions

@pk.func
def window_sum(x, start, width):
    total = 0.0
    for k in range(start, start + width):
        total += x[k]
    return total


@pk.kernel
def windows(x: pk.f32[:], y: pk.f32[:], z: pk.f32[:], width: int, shift: int, n: int):
    i = pk.global_id(0)
    if i < n:
        y[i] = window_sum(x, i + shift, width)
    for j0 in range(0, n, 4):
        for j in range(j0, min(j0 + 4, n)):
            if j - j0 == i:  # the first few invocations
                z[j - j0 + shift] = pk.f32(j0)


@pytest.mark.parametrize("grid, nx, ny, width, shift, n", [
    (64, 80, 64, 16, 0, 64),  # inside
    (64, 64, 64, 16, 0, 64),  # the windows run past x's end
    (100, 64, 64, 3, -2, 100),  # before x's start; the guard lets y run past its end
    (256, 40, 40, 50, -60, 30),
])
def test_loops_guards_and_functions(grid, nx, ny, width, shift, n):
    xs = np.arange(1, nx + 1, dtype=np.float32)
    x = pk.asarray(xs)
    before, y, after = guarded(ny)
    z = pk.zeros(8)
    windows[grid](x, y, z, width, shift, n)
    xb, yb, zb = Buffer(xs), Buffer(np.zeros(ny, np.float32)), Buffer(np.zeros(8, np.float32))
    for i in range(grid):
        if i < n:
            total = np.float32(0)
            for k in range(i + shift, i + shift + width):
                total = np.float32(total + np.float32(xb.read(k)))
            yb.write(i, total)
        for j0 in range(0, n, 4):
            for j in range(j0, min(j0 + 4, n)):
                if j - j0 == i:
                    zb.write(i + shift, j0)
    np.testing.assert_array_equal(y.numpy(), yb.data)
    np.testing.assert_array_equal(z.numpy(), zb.data)
    assert_intact(before, after)


# ---------------------------------------------------------------- views and strides

@pk.kernel
def shifted_2d(x: pk.f32[:, :], y: pk.f32[:, :], di: int, dj: int):
    i = pk.global_id(1)
    j = pk.global_id(0)
    y[i + di, j + dj] = x[i - di, j - dj] * 2.0


def _views(base: pk.Tensor) -> dict[str, pk.Tensor]:
    return {"whole": base, "slice": base[3:9, 2:10], "steps": base[1::2, ::3],
            "transposed": base.T, "reversed": base[::-1, ::-1], "inner": base[5:6, 4:7]}


@pytest.mark.parametrize("view", ["whole", "slice", "steps", "transposed", "reversed",
                                  "inner"])
@pytest.mark.parametrize("di, dj", [(0, 0), (2, -3), (-4, 5), (20, 0)])
def test_strided_views(view, di, dj):
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((12, 14)).astype(np.float32)
    before, ybase, after = guarded(12 * 14, fill=3.0)
    ybase = ybase.reshape(12, 14)
    x, y = _views(pk.asarray(xs))[view], _views(ybase)[view]
    grid = (y.shape[1] + 5, y.shape[0] + 3)
    shifted_2d[grid](x, y, di, dj)
    xb, yb = Buffer(xs), Buffer(np.full((12, 14), 3.0, np.float32))
    (xo, xst), (yo, yst) = _layout(x), _layout(y)
    for i in range(grid[1]):
        for j in range(grid[0]):
            value = np.float32(xb.read(xo + (i - di) * xst[0] + (j - dj) * xst[1]))
            yb.write(yo + (i + di) * yst[0] + (j + dj) * yst[1], value * np.float32(2))
    np.testing.assert_array_equal(ybase.numpy().reshape(-1), yb.data)
    assert_intact(before, after)


def _layout(t: pk.Tensor) -> tuple[int, tuple[int, ...]]:
    return t.offset, t.element_strides


# ---------------------------------------------------------------- atomics

@pk.kernel
def count_into(counts: pk.i32[:], olds: pk.i32[:], q: int, b: int):
    i = pk.global_id(0)
    olds[i] = pk.atomic_add(counts, i // q + b, 1)


@pytest.mark.parametrize("q, b", [(1, 0), (3, -10), (7, 20), (2, -1000)])
def test_atomics_outside_the_array_do_nothing_and_give_0(q, b):
    n, grid = 40, 200
    before = pk.full((64,), -1, dtype=pk.i32)
    counts = pk.zeros(n, dtype=pk.i32)
    after = pk.full((64,), -1, dtype=pk.i32)
    olds = pk.full((grid,), 99, dtype=pk.i32)
    count_into[grid](counts, olds, q, b)
    expected = np.zeros(n, np.int32)
    inside = [0 <= i // q + b < n for i in range(grid)]
    for i in range(grid):
        if inside[i]:
            expected[i // q + b] += 1
    np.testing.assert_array_equal(counts.numpy(), expected)
    got = olds.numpy()
    assert all(got[i] == 0 for i in range(grid) if not inside[i])  # nothing was there
    assert np.all(before.numpy() == -1) and np.all(after.numpy() == -1)


# ---------------------------------------------------------------- shared and local arrays

@pk.kernel(workgroup=(64, 1, 1))
def through_shared(x: pk.f32[:], y: pk.f32[:], spill: int):
    s = pk.shared(pk.f32, 64)
    guard = pk.shared(pk.f32, 64)  # its neighbour on the stack
    t = pk.local_id(0)
    i = pk.global_id(0)
    guard[t] = 1.0
    s[t + spill] = x[i]  # past the end (spill > 0) or before the start (spill < 0)
    pk.barrier()
    if i < pk.grid(0):
        y[i] = s[t] + s[t - spill] * 100.0 + guard[t] * 10000.0


@pytest.mark.parametrize("spill", [0, 5, -7, 64, -200])
def test_shared_arrays_keep_their_accesses_inside(spill):
    n = 64 * 3
    xs = np.arange(n, dtype=np.float32)
    x, y = pk.asarray(xs), pk.zeros(n)
    through_shared[n](x, y, spill)
    expected = np.zeros(n, np.float32)
    for g in range(3):
        s = Buffer(np.zeros(64, np.float32))
        for t in range(64):
            s.write(t + spill, xs[g * 64 + t])
        for t in range(64):
            expected[g * 64 + t] = np.float32(s.read(t)) + np.float32(s.read(t - spill)) * \
                np.float32(100) + np.float32(10000)
    np.testing.assert_array_equal(y.numpy(), expected)


@pk.kernel
def through_local(x: pk.f32[:], y: pk.f32[:], count: int, start: int):
    before = pk.local(pk.f32, 4)
    buf = pk.local(pk.f32, 4)
    after = pk.local(pk.f32, 4)
    i = pk.global_id(0)
    for k in range(4):
        before[k] = 1.0
        after[k] = 2.0
    for k in range(start, start + count):
        buf[k] = x[i] + pk.f32(k)
    total = 0.0
    for k in range(start, start + count):
        total += buf[k]
    for k in range(4):
        total += before[k] * 100.0 + after[k] * 1000.0
    y[i] = total


@pytest.mark.parametrize("count, start", [(4, 0), (9, 0), (6, -3), (3, 100), (5, -1000)])
def test_local_arrays_keep_their_accesses_inside(count, start):
    n = 300
    xs = np.arange(n, dtype=np.float32)
    x, y = pk.asarray(xs), pk.zeros(n)
    through_local[n](x, y, count, start)
    expected = np.zeros(n, np.float32)
    for i in range(n):
        buf = Buffer(np.zeros(4, np.float32))
        for k in range(start, start + count):
            buf.write(k, np.float32(xs[i] + np.float32(k)))
        total = np.float32(0)
        for k in range(start, start + count):
            total = np.float32(total + np.float32(buf.read(k)))
        for _ in range(4):
            total = np.float32(total + np.float32(2100))
        expected[i] = total
    np.testing.assert_array_equal(y.numpy(), expected)


# ---------------------------------------------------------------- numpy arrays, directly

def test_the_backend_keeps_numpy_views_inside_their_elements():
    """`pykern.llvm.launch` on numpy views (negative strides too): the memory a view spans
    bounds its accesses."""
    from pykern.llvm import launch

    base = np.zeros(100, np.float32)
    view = base[60:20:-2]  # 20 elements, stride -2
    launch(fill, 64, view)  # indices 20 to 63 lie before the view's last element: dropped
    expected = np.zeros(100, np.float32)
    expected[60:20:-2] = 7.0
    np.testing.assert_array_equal(base, expected)


def test_the_proved_copy_checks_only_what_the_analysis_could_not_bound():
    """The workgroup's proved copy of the body has no check for a bounded access, also inside
    device functions (emitted once per call); the checked copy, compiled only for a launch
    that needs it, checks every access."""
    import re

    from pykern.llvm.compiled import HostKernel
    from pykern.llvm.module import build_module

    def checks(text: str) -> int:
        return len(re.findall(r"^in_buffer[.\d]*:", text, re.M))

    x = np.zeros(16, np.float32)
    host = HostKernel(windows.ir(x, x, x, 1, 0, 4))
    accesses = 3  # x[k] in window_sum, y[i], z[...]
    assert len(prove_accesses(host.kernel).sites) == accesses
    assert checks(host.unoptimised_ir) == 0 and host.bails
    both = build_module(host.kernel, checked_copy=True)
    assert checks(str(both.module)) == accesses and not both.bails


def test_a_kernel_from_the_disk_cache_compiles_its_checked_copy_when_needed(tmp_path):
    """A second process loads the kernel's object code (without the checked copy); a launch
    that goes outside its arrays compiles that copy from the kernel's source."""
    script = tmp_path / "cached.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import pykern as pk
        pk.set_device("host")

        @pk.kernel
        def fill(x: pk.f32[:]):
            i = pk.global_id(0)
            x[i] = 7.0

        before, b, after = pk.zeros(100), pk.zeros(64), pk.zeros(100)
        fill[64](b)  # inside: the proved copy
        fill[1000](b)  # outside: the checked copy
        variant = fill.compile(b)
        assert np.all(b.numpy() == 7) and not before.numpy().any() and not after.numpy().any()
        print("from disk" if variant.from_disk_cache else "compiled", flush=True)
    """))
    env = {**os.environ, "PYKERN_CACHE_DIR": str(tmp_path / "cache"), "PYKERN_CACHE": "1"}
    runs = [subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           timeout=300, check=False, env=env) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[-1].stderr
    assert [r.stdout.strip() for r in runs] == ["compiled", "from disk"]
