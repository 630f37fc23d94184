"""The host device (`pk.set_device("host")`): listed on every machine, chosen by name, kind or
PYKERN_DEVICE, with buffers in host memory, launches that have finished when they return, the
runtime's errors, and tensors that move between it and a Vulkan device only through the host."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pykern as pk
import pykern.runtime as rt


@pytest.fixture
def host():
    previous = pk.get_device()
    device = pk.set_device("host")
    yield device
    pk.set_device(previous.info.index)


@pk.kernel
def scale(a: pk.f32, x: pk.f32[:], out: pk.f32[:]):
    i = pk.global_id(0)
    out[i] = a * x[i]


def test_the_host_is_listed_last_with_what_it_can_do():
    infos = pk.devices()
    info = infos[-1]
    assert info.kind == "host" and [i.kind for i in infos].count("host") == 1
    assert info.index == len(infos) - 1 and "host" in info.name and "host" in str(info)
    f, lim = info.features, info.limits
    assert f.fp16 and f.fp64 and f.int64 and f.int8 and f.float32_atomic_add
    assert not f.cooperative_matrix and info.coop_shapes == ()
    assert lim.loop_iteration_cap is None and lim.max_workgroup_invocations >= 1024
    assert info.memory > 0
    from pykern.llvm.lanes import SUBGROUP_SIZE

    assert f.subgroup_size == SUBGROUP_SIZE  # what the host backend compiles for
    assert {"basic", "vote", "arithmetic", "ballot", "shuffle"} <= f.subgroup_operations


@pytest.mark.parametrize("which", ["host", "HOST", -1])
def test_set_device_chooses_the_host(host, which):
    if which == -1:
        which = pk.devices()[-1].index
    assert pk.set_device(which) is host
    assert pk.get_device() is host


def test_pykern_device_host_in_a_fresh_process(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import pykern as pk
        assert pk.get_device().info.kind == "host", pk.get_device()
        t = pk.arange(10, dtype=pk.f32) * 2
        assert t.numpy().tolist() == list(range(0, 20, 2))
        print("ok")
    """))
    env = {**__import__("os").environ, "PYKERN_DEVICE": "host"}
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            env=env, timeout=120, cwd=tmp_path)
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr


def test_buffers_are_host_memory_with_the_buffer_interface(host):
    buf = host.create_buffer(16)
    buf.upload(np.arange(4, dtype=np.float32))
    assert np.frombuffer(buf.download(), np.float32).tolist() == [0, 1, 2, 3]
    out = np.empty(2, np.float32)
    assert buf.read_into(out, offset=8).tolist() == [2, 3]
    with pytest.raises(ValueError, match="holds 16 bytes"):
        buf.upload(np.zeros(5, np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        buf.read_into(np.empty(8, np.float32)[::2])
    before = host.memory_stats().used_bytes
    buf.free()
    assert buf.freed and host.memory_stats().used_bytes == before - 16
    with pytest.raises(ValueError, match="freed"):
        buf.download()


def test_launches_have_finished_when_they_return(host):
    x = pk.asarray(np.arange(1 << 16, dtype=np.float32))
    out = pk.empty_like(x)
    commands = host.stats().commands
    with host.timer() as t:
        scale[x.size](3.0, x, out)
    assert t.elapsed_ns > 0 and host.stats().commands == commands + 1
    assert out.buffer.use_serial == 0  # nothing pending: a read never waits
    np.testing.assert_array_equal(out.numpy(), 3.0 * np.arange(1 << 16, dtype=np.float32))
    pk.sync()


def test_numpy_arguments_are_worked_on_in_place(host):
    x = np.arange(8, dtype=np.float32)
    scale[8](2.0, x, x)  # C-contiguous and writable: the kernel writes x itself
    np.testing.assert_array_equal(x, 2.0 * np.arange(8))
    y = np.arange(16, dtype=np.float32)[::2]  # strided: copied in, and back
    out = np.zeros(16, np.float32)[1::2]
    scale[8](2.0, y, out)
    np.testing.assert_array_equal(out, 2.0 * y)
    frozen = np.arange(8, dtype=np.float32)
    frozen.flags.writeable = False
    with pytest.raises(pk.LaunchError, match="'out'"):
        scale[8](2.0, x, frozen)
    np.testing.assert_array_equal(frozen, np.arange(8))


def test_an_allocation_too_large_is_out_of_memory_and_the_device_still_works(host):
    with pytest.raises(pk.OutOfDeviceMemory, match="cannot allocate"):
        host.create_buffer(1 << 60)
    x = pk.ones(4)
    np.testing.assert_array_equal((x + x).numpy(), [2, 2, 2, 2])


def test_a_bad_grid_is_refused_before_anything_runs(host):
    out = pk.zeros(4)
    variant = scale.compile(1.0, out, out)
    block, buffers, _ = variant.binder.bind([1.0, out, out])
    with pytest.raises(ValueError, match="grid"):
        host.launch(variant.program, (2**31, 1, 1), buffers, block)
    with pytest.raises(pk.LaunchError, match="grid"):
        scale[-1](1.0, out, out)
    np.testing.assert_array_equal(out.numpy(), np.zeros(4))


def test_a_grid_of_more_than_2_to_the_40_invocations_is_refused_and_the_next_launch_runs(host):
    # each dimension is below 2**31, but 2**60 invocations would run for ever: the same rule
    # as the Vulkan runtime's (pykern.runtime.grid), named with the grid and the limit
    x = pk.asarray(np.arange(4, dtype=np.float32))
    out = pk.zeros(4)
    variant = scale.compile(2.0, x, out)
    block, buffers, _ = variant.binder.bind([2.0, x, out])
    with pytest.raises(ValueError, match=r"grid \(1073741824, 1073741824, 1\) names "
                                         r"1152921504606846976 invocations.*2\*\*40"):
        host.launch(variant.program, (2**30, 2**30, 1), buffers, block)
    with pytest.raises(pk.LaunchError, match=r"^scale\[\(1048576, 1048576, 2\)\]: grid .*2\*\*40"):
        scale[2**20, 2**20, 2](2.0, x, out)
    np.testing.assert_array_equal(out.numpy(), np.zeros(4))
    host.launch(variant.program, (4, 1, 1), buffers, block)
    np.testing.assert_array_equal(out.numpy(), 2.0 * np.arange(4))
    scale[4](3.0, x, out)
    np.testing.assert_array_equal(out.numpy(), 3.0 * np.arange(4))


def test_a_tensor_of_a_vulkan_device_is_a_launch_error_naming_the_parameter(host):
    vulkan = [d for d in pk.devices() if d.kind != "host"]
    if not vulkan:
        pytest.skip("needs a Vulkan device")
    pk.set_device("vulkan")
    elsewhere = pk.ones(4)
    pk.set_device("host")
    mine = pk.ones(4)
    with pytest.raises(pk.LaunchError, match="parameter 'x' was given a tensor of another "
                                             "device"):
        scale[4](2.0, elsewhere, mine)
    np.testing.assert_array_equal(mine.numpy(), np.ones(4))
    # through the host, as between any two devices
    np.testing.assert_array_equal(pk.asarray(elsewhere.numpy()).numpy(), np.ones(4))


def test_a_closed_host_device_refuses_use_and_is_reopened(host):
    t = pk.ones(4)
    host.close()
    with pytest.raises(pk.DeviceError, match="closed"):
        host.create_buffer(4)
    fresh = pk.set_device("host")
    assert fresh is not host and fresh.usable
    np.testing.assert_array_equal((pk.ones(4) * 2).numpy(), [2, 2, 2, 2])
    del t


def test_the_host_device_compiles_no_spirv(host):
    with pytest.raises(pk.DeviceError, match="not SPIR-V"):
        host.create_program(b"", None)
    words = scale.spirv(1.0, np.zeros(1, np.float32), np.zeros(1, np.float32))
    assert int.from_bytes(words[:4], "little") == 0x07230203  # for a generic Vulkan device
    assert "define" in scale.compile(1.0, pk.zeros(1), pk.zeros(1)).host.llvm_ir


def test_runtime_exports_the_host_types(host):
    assert isinstance(host, rt.HostDevice)
    assert isinstance(pk.zeros(2).buffer, rt.HostBuffer)


def test_large_freed_blocks_are_reused_and_results_stay_right(host):
    n = 1 << 20  # 4 MiB of f32
    a = pk.asarray(np.arange(n, dtype=np.float32))
    first = a + a
    address = first.buffer.address
    del first  # its block is kept ...
    spare = host.memory_stats().spare_bytes
    assert spare >= 4 * n
    second = a * 3.0  # ... and taken by the next result of its size
    assert second.buffer.address == address
    assert host.memory_stats().spare_bytes <= spare - 4 * n
    np.testing.assert_array_equal(second.numpy(), 3.0 * np.arange(n, dtype=np.float32))
    del second
    np.testing.assert_array_equal(pk.zeros(n).numpy(), np.zeros(n))  # written, not stale
    user = np.ones(n, np.float32)
    scale[n](2.0, user, user)  # a wrapped user array is never kept as a spare
    assert host.memory_stats().spare_bytes < 8 * n and user[0] == 2.0  # second's block only
