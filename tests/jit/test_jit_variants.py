"""Variant keys from arguments: what selects a variant, what shares one, and the fast path's
cheap signature agreeing with the thorough key."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as pk
from pykern.jit.variants import (DEFAULT_WORKGROUPS, VariantKey, fast_signature,
                                 normalize_workgroup, variant_key)


@pk.kernel
def scaled(x: pk.Array, out: pk.Array, factor: pk.constexpr):
    i = pk.global_id(0)
    out[i] = x[i] * factor


def key(*args, grid_ndim=1, strict=False, workgroup=None):
    return variant_key("scaled", scaled.params, args, workgroup, grid_ndim, strict)


def test_a_key_names_workgroup_types_constants_and_strictness():
    x = np.zeros(4, np.float32)
    k = key(x, x, 3)
    assert isinstance(k, VariantKey)
    assert k.workgroup == DEFAULT_WORKGROUPS[1] and k.grid_ndim == 1 and not k.strict
    assert k.types == (("x", pk.f32[:]), ("out", pk.f32[:]))
    assert k.constants == (("factor", "int", 3),) and k.constant_values == {"factor": 3}
    assert key(x, x, 3, grid_ndim=2).workgroup == DEFAULT_WORKGROUPS[2]
    assert key(x, x, 3, workgroup=(32, 1, 1)).workgroup == (32, 1, 1)


def test_strict_and_default_variants_share_their_ir_key_only():
    x = np.zeros(4, np.float32)
    strict, default = key(x, x, 3, strict=True), key(x, x, 3)
    assert strict != default and strict.ir_key == default.ir_key
    assert strict[-1] is True  # the strictness is the key's last member


def test_constexpr_values_of_different_types_are_different_variants():
    x = np.zeros(4, np.float32)
    keys = {key(x, x, 1), key(x, x, 1.0), key(x, x, True)}
    assert len(keys) == 3
    t = pk.asarray(x)
    sigs = {fast_signature(scaled._specs, (t, t, v)) for v in (1, 1.0, True)}
    assert len(sigs) == 3


def test_dtype_and_ndim_select_variants():
    f, i = np.zeros(4, np.float32), np.zeros(4, np.int32)
    assert len({key(f, f, 2), key(i, i, 2), key(f.reshape(2, 2), f.reshape(2, 2), 2)}) == 3


def test_bad_arguments_are_launch_errors_naming_the_parameter():
    x = np.zeros(4, np.float32)
    with pytest.raises(pk.LaunchError, match="takes 3 argument"):
        key(x, x)
    with pytest.raises(pk.LaunchError, match="'factor' expects a number"):
        key(x, x, {1: 2})  # a list would be a tuple constexpr
    with pytest.raises(pk.LaunchError, match="'x' expects an array"):
        key(1.0, x, 2)


def test_the_fast_signature_defers_what_it_cannot_tell_cheaply():
    t = pk.asarray(np.zeros(4, np.float32))
    assert fast_signature(scaled._specs, (t, t, 2)) == ((pk.f32, 1), (pk.f32, 1), (int, 2))
    assert fast_signature(scaled._specs, (np.zeros(4, np.float32), t, 2)) is None
    assert fast_signature(scaled._specs, (t, t, np.int32(2))) is None


@pytest.mark.parametrize("workgroup, padded", [((64,), (64, 1, 1)), ((8, 8), (8, 8, 1)),
                                               ((4, 4, 4), (4, 4, 4)), (None, None)])
def test_workgroups_are_padded(workgroup, padded):
    assert normalize_workgroup(workgroup) == padded


@pytest.mark.parametrize("workgroup", [(0,), (1, 2, 3, 4), (2.0,), (-4, 1)])
def test_bad_workgroups_are_refused_at_decoration(workgroup):
    with pytest.raises(ValueError, match="workgroup"):
        pk.kernel(workgroup=workgroup)(scaled.__wrapped__)


def test_launches_select_and_reuse_variants():
    scaled._variants.clear()
    scaled._fast.clear()
    x = np.arange(8, dtype=np.float32)
    out = pk.zeros(8, pk.f32)
    for factor in (2, 2, 3, 2.5):
        scaled[8](pk.asarray(x), out, factor)
        np.testing.assert_array_equal(out.numpy(), x * np.float32(factor))
    i = np.arange(8, dtype=np.int32)
    iout = pk.zeros(8, pk.i32)
    scaled[8](i, iout, 3)  # numpy arguments: the thorough path, no fast entry
    np.testing.assert_array_equal(iout.numpy(), i * 3)
    assert len(scaled._variants) == 4
    assert len(scaled._fast) == 3
