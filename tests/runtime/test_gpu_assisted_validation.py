"""GPU-assisted validation (the third pass of `make test`) reports a shader access outside a
buffer, which lavapipe drops silently and the other validation passes do not see; and it runs
without false alarms, since the runtime binds with descriptor sets under it (the layer cannot
see what push descriptors bind)."""

from __future__ import annotations

from pykern.runtime import Config
from pykern.runtime.config import GPU_ASSISTED
from rt_helpers import run_python


def test_push_descriptors_are_off_under_gpu_assisted_validation_only():
    gpu_av = {"PYKERN_VALIDATE": "1", "VK_LAYER_ENABLES": GPU_ASSISTED}
    assert not Config.from_env(gpu_av).push_descriptors
    assert Config.from_env({"PYKERN_VALIDATE": "1"}).push_descriptors
    assert Config.from_env({"VK_LAYER_ENABLES": GPU_ASSISTED}).push_descriptors  # no layer
    sync = "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT"
    assert Config.from_env({"PYKERN_VALIDATE": "1", "VK_LAYER_ENABLES": sync}).push_descriptors


FILL = """
from pykern.runtime import BindingLayout
from rt_helpers import assemble, GRID_FIELDS

device = rt.get_device()
assert not device.push_descriptors
layout = BindingLayout.build(slots("result", writable=("result",)),
                             [("mul", "I"), ("add", "I"), *GRID_FIELDS], (64, 1, 1), 128)
fill = device.create_program(assemble("fill"), layout)
result = device.create_buffer(4 * 100)

def run(grid):
    device.launch(fill, (grid,), [result], layout.pack([2, 1, 0, 0, 0, 0, 0, 0]))
    device.sync()
    messages = [m.text for m in rt.validation_messages()]
    rt.clear_validation_messages()
    return messages

assert run(100) == []  # in bounds: no (false) alarm
assert (result.read_into(np.empty(100, np.uint32)) == 2 * np.arange(100) + 1).all()
messages = run(1000)  # writes 900 elements past the end
print("out of bounds:", messages, flush=True)
assert run(100) == []
print("in bounds again", flush=True)
"""


def test_an_out_of_bounds_shader_write_is_a_validation_error():
    result, _ = run_python(
        FILL, timeout=120, PYKERN_VALIDATE="1", VK_LAYER_ENABLES=GPU_ASSISTED
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "out of bounds: [" in out and "in bounds again" in out, out
    reported = out.split("out of bounds: ")[1].splitlines()[0]
    assert "access out of bounds" in reported and "Descriptor size is 400" in reported, reported
