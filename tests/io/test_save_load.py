"""pk.save / pk.load round trips: every dtype, 0-d and empty shapes, views, numpy arrays and
nested state dicts with plain values; what is loaded is compared bit for bit with numpy."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes
from save_load_support import DTYPES, assert_same_bits, host_data

import pykern as pk

SHAPES = [(), (0,), (7,), (3, 4), (2, 0, 3), (2, 3, 2, 2)]


def round_trip(obj, tmp_path, name="x.safetensors"):
    path = tmp_path / name
    pk.save(obj, path)
    return pk.load(path)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_every_dtype_and_shape_round_trips(dtype, shape, tmp_path):
    data = host_data(dtype, shape)
    loaded = round_trip(pk.asarray(data), tmp_path)
    assert isinstance(loaded, pk.Tensor)
    assert loaded.dtype == dtype and loaded.shape == shape and loaded.is_contiguous
    assert_same_bits(loaded.numpy(), data)


VIEWS = {
    "transpose": lambda t: t.T,
    "step-slice": lambda t: t[1:, ::2],
    "negative-step": lambda t: t[::-1, 1:],
    "offset-row": lambda t: t[2],
    "offset-element": lambda t: t[1, 2],
    "expand": lambda t: t[:1].expand(3, 5, 6),
    "empty-slice": lambda t: t[2:2],
}


@pytest.mark.parametrize("dtype", [pk.bool_, pk.u8, pk.i16, pk.bf16, pk.f32, pk.f64],
                         ids=lambda d: d.name)
@pytest.mark.parametrize("view", VIEWS, ids=str)
def test_views_are_saved_as_their_logical_contents(dtype, view, tmp_path):
    data = host_data(dtype, (4, 5, 6), seed=1)
    t = VIEWS[view](pk.asarray(data))
    expected = VIEWS[view](data) if view != "expand" else np.broadcast_to(data[:1], (3, 5, 6))
    loaded = round_trip(t, tmp_path)
    assert loaded.is_contiguous and loaded.offset == 0
    assert_same_bits(loaded.numpy(), expected.copy(order="C"))


def test_nested_state_dict_with_plain_values(tmp_path):
    w = host_data(pk.f32, (3, 4))
    state = {
        "model": {"layers.0.weight": pk.asarray(w), "layers.0.bias": pk.zeros(4),
                  "embed": {"weight": pk.asarray(host_data(pk.bf16, (5, 2)))}},
        "optimizer": {"state": {0: {"step": 12, "exp_avg": pk.ones((3, 4))}},
                      "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "amsgrad": False,
                                        "name": "héllo", "foreach": None, "params": [0]}]},
        "epoch": 7, "best": float("inf"), "worst": -math.inf, "missing": math.nan,
        "big": 2**70, "numpy": np.arange(6, dtype=np.int16).reshape(2, 3),
        "np_scalars": [np.float32(0.5), np.int64(-3), np.bool_(True)],
    }
    loaded = round_trip(state, tmp_path)
    assert list(loaded) == list(state)
    assert list(loaded["model"]) == ["layers.0.weight", "layers.0.bias", "embed"]
    assert_same_bits(loaded["model"]["layers.0.weight"].numpy(), w)
    assert loaded["model"]["embed"]["weight"].dtype == pk.bf16
    inner = loaded["optimizer"]["state"]
    assert list(inner) == [0] and inner[0]["step"] == 12
    np.testing.assert_array_equal(inner[0]["exp_avg"].numpy(), np.ones((3, 4), np.float32))
    group = loaded["optimizer"]["param_groups"][0]
    assert group == {"lr": 1e-3, "betas": (0.9, 0.999), "amsgrad": False, "name": "héllo",
                     "foreach": None, "params": [0]}
    assert type(group["betas"]) is tuple and type(group["amsgrad"]) is bool
    assert loaded["epoch"] == 7 and loaded["best"] == math.inf and loaded["worst"] == -math.inf
    assert math.isnan(loaded["missing"]) and loaded["big"] == 2**70
    assert isinstance(loaded["numpy"], pk.Tensor) and loaded["numpy"].dtype == pk.i16
    np.testing.assert_array_equal(loaded["numpy"].numpy(), state["numpy"])
    assert loaded["np_scalars"] == [0.5, -3, True]
    assert [type(v) for v in loaded["np_scalars"]] == [float, int, bool]


def test_plain_values_and_containers_without_tensors(tmp_path):
    for obj in [None, 3, -2.5, "text", True, [], {}, (), [[], {"a": ()}]]:
        assert round_trip(obj, tmp_path) == obj


def test_a_tensor_met_twice_is_stored_once_and_loads_as_one(tmp_path):
    shared = pk.asarray(host_data(pk.f32, (4,)))
    loaded = round_trip({"encoder": shared, "decoder": shared, "other": shared + 0}, tmp_path)
    assert loaded["encoder"] is loaded["decoder"]
    assert loaded["other"] is not loaded["encoder"]
    np.testing.assert_array_equal(loaded["decoder"].numpy(), shared.numpy())


def test_keys_whose_dotted_paths_collide_stay_apart(tmp_path):
    a, b, c = (pk.full((2,), v) for v in (1.0, 2.0, 3.0))
    loaded = round_trip({"a.b": a, "a": {"b": b}, "__metadata__": c}, tmp_path)
    assert [float(loaded[k].numpy()[0]) for k in ("a.b", "__metadata__")] == [1.0, 3.0]
    assert float(loaded["a"]["b"].numpy()[0]) == 2.0


def test_save_replaces_an_existing_file_and_accepts_str_paths(tmp_path):
    path = str(tmp_path / "ckpt.safetensors")
    pk.save({"w": pk.zeros(3)}, path)
    pk.save({"w": pk.ones(2)}, path)
    np.testing.assert_array_equal(pk.load(path)["w"].numpy(), np.ones(2, np.float32))
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]  # no temporary file left behind


def test_load_onto_the_current_device_by_name(tmp_path):
    pk.save(pk.ones(2), tmp_path / "t")
    assert pk.load(tmp_path / "t", device=pk.get_device()).device is pk.get_device()
    with pytest.raises(ValueError, match="one device at a time"):
        pk.load(tmp_path / "t", device="another device")


@settings(max_examples=30, deadline=None)
@given(dtype=st.sampled_from(DTYPES), shape=array_shapes(min_dims=0, max_dims=4, min_side=0,
                                                           max_side=4),
       seed=st.integers(0, 2**16), transpose=st.booleans())
def test_round_trip_of_generated_shapes_and_dtypes(tmp_path_factory, dtype, shape, seed,
                                                    transpose):
    data = host_data(dtype, shape, seed)
    t = pk.asarray(data)
    if transpose:
        t, data = t.T, data.T
    folder = tmp_path_factory.mktemp("hyp")
    loaded = round_trip({"t": t, "shape": list(shape)}, folder)
    assert loaded["shape"] == list(shape)
    assert_same_bits(loaded["t"].numpy(), data.copy(order="C"))


PLAIN = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
NESTED = st.recursive(
    PLAIN, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=4), max_leaves=20)


@settings(max_examples=40, deadline=None)
@given(obj=NESTED)
def test_round_trip_of_generated_nested_values(tmp_path_factory, obj):
    loaded = round_trip(obj, tmp_path_factory.mktemp("nested"))
    assert loaded == obj and repr(loaded) == repr(obj)  # repr: types and key order too
