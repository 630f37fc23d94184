"""One Feature enum for the runtime and the compiler, the pass that lists what a kernel needs
with the places that need it, and the compile errors the JIT layer makes of the first missing
one."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import numpy as np
import pytest

import pykern as pk
import pykern.jit.kernel as jit
from pykern import frontend
from pykern.passes import decompose, first_missing, required_features
from pykern.runtime.feature import Feature
from pykern.spirv import Target
from pykern.spirv.target import ALL_FEATURES, features_of

FEATURE_MODULE = Path(pk.runtime.__file__).parent / "feature.py"


def translated(body) -> pk.ir.Kernel:
    return frontend.translate(frontend.load_source(body), frontend.signature(body), (64, 1, 1))


def line_of(fn, marker: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, s in enumerate(lines) if marker in s)


def test_the_feature_module_is_a_stdlib_leaf():
    tree = ast.parse(FEATURE_MODULE.read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imported <= {"__future__", "enum", "typing"}


def test_the_device_answers_every_feature():
    features = pk.get_device().info.features
    for feature in Feature:
        assert isinstance(features.has(feature), bool)
    assert features.has(Feature.FP64) == features.fp64
    assert features.has(Feature.SUBGROUP_ARITHMETIC) == ("arithmetic" in
                                                         features.subgroup_operations)
    assert features_of(features) == {f for f in ALL_FEATURES if features.has(f)}
    assert set(ALL_FEATURES) == set(Feature)  # every feature is one a module can need


def test_features_are_listed_with_their_places():
    def body(x: pk.f64[:], flags: pk.bool_[:]):
        i = pk.global_id(0)
        x[i] = pk.f64(pk.i64(i) * 3)  # i64 first
        if flags[i]:
            x[i] += pk.f64(pk.subgroup_add(i))  # subgroup arithmetic

    kernel = translated(body)
    needs = required_features(kernel, Target())
    found = {r.feature for r in needs}
    assert {Feature.FP64, Feature.INT64, Feature.STORAGE8, Feature.SUBGROUP_BASIC,
            Feature.SUBGROUP_ARITHMETIC} <= found
    sub = next(r for r in needs if r.feature is Feature.SUBGROUP_ARITHMETIC)
    assert sub.what == "pk.subgroup_add()" and sub.loc.line == line_of(body, "subgroup arith")
    first_i64 = next(r for r in needs if r.feature is Feature.INT64)
    assert first_i64.what == "type i64"
    assert first_missing(needs, ALL_FEATURES) is None
    missing = first_missing(needs, ALL_FEATURES - {Feature.INT64})
    assert missing is not None and missing.loc.line == line_of(body, "i64 first")


def test_the_prelude_needs_nothing_but_f64():
    def body(x: pk.f64[:]):
        i = pk.global_id(0)
        x[i] = pk.sin(x[i]) + pk.erf(x[i]) + x[i] ** 1.5 + pk.atan2(x[i], 1.0) + pk.tanh(x[i])

    needs = required_features(decompose(translated(body), Target()), Target())
    assert {r.feature for r in needs} == {Feature.FP64}  # no 64-bit integers, for instance


def restrict(monkeypatch, *lacking: Feature) -> None:
    target = jit.target_for(pk.get_device())
    restricted = dataclasses.replace(target, features=target.features - set(lacking))
    monkeypatch.setattr(jit, "target_for", lambda device: restricted)


@pytest.mark.usefixtures("on_vulkan")  # of SPIR-V and the Vulkan device
def test_a_missing_subgroup_feature_is_a_located_compile_error(monkeypatch):
    restrict(monkeypatch, Feature.SUBGROUP_VOTE)

    def vote(x: pk.i32[:]):
        i = pk.global_id(0)
        x[i] = pk.i32(pk.subgroup_any(x[i] > 0))  # needs vote

    line = line_of(vote, "needs vote")
    with pytest.raises(pk.CompileError, match=rf":{line}:\d+: pk.subgroup_any\(\) needs the "
                                              "device feature 'subgroup_vote', which this "
                                              "device lacks"):
        pk.kernel(vote)[1](np.zeros(1, np.int32))


@pytest.mark.usefixtures("on_vulkan")  # of SPIR-V and the Vulkan device
def test_missing_f64_is_found_in_the_users_code_before_the_prelude(monkeypatch):
    restrict(monkeypatch, Feature.FP64)

    def wide(x: pk.f32[:]):
        i = pk.global_id(0)
        x[i] = pk.f32(pk.exp(pk.f64(x[i])))  # f64 here

    line = line_of(wide, "f64 here")
    with pytest.raises(pk.CompileError, match=rf"test_required_features.py:{line}:\d+: type f64 "
                                              "needs the device feature 'fp64'"):
        pk.kernel(wide)[1](np.zeros(1, np.float32))


@pytest.mark.usefixtures("on_vulkan")  # of SPIR-V and the Vulkan device
def test_missing_16_bit_storage_is_named_for_bf16_arrays(monkeypatch):
    restrict(monkeypatch, Feature.STORAGE16)

    def halves(x: pk.bf16[:]):  # bf16 here
        i = pk.global_id(0)
        x[i] = x[i] * 0.5

    line = line_of(halves, "bf16 here")
    with pytest.raises(pk.CompileError, match=rf"test_required_features.py:{line}:\d+: type "
                                              "bf16 needs the device feature 'storage16'"):
        pk.kernel(halves).compile(np.zeros(1, pk.bf16.numpy))


# features the backend uses only where the target has them, choosing another way where not
OPTIONAL = {Feature.FLOAT32_ATOMIC_ADD, Feature.FLOAT64_ATOMIC_ADD,
            Feature.SIGNED_ZERO_INF_NAN_PRESERVE, Feature.DENORM_PRESERVE,
            Feature.ROUNDING_MODE_RTE}


def kernels_needing_much():
    def remainders(x: pk.f64[:]):  # on the bits, in 64-bit integers
        i = pk.global_id(0)
        x[i] = x[i] % 3.0 + x[i] // 2.0 + pk.exp(x[i])

    def half_signs(h: pk.f16[:], c: pk.u8[:]):
        i = pk.global_id(0)
        h[i] = pk.copysign(h[i], h[i + 1]) * pk.f16(c[i])

    def wide_atomics(n: pk.u64[:]):
        pk.atomic_add(n, 0, pk.u64(1))

    def subgroups(x: pk.f32[:], b: pk.bool_[:]):
        i = pk.global_id(0)
        x[i] = pk.subgroup_shuffle(x[i], 1) + pk.subgroup_broadcast(x[i], 0)
        b[i] = pk.subgroup_all(x[i] > 0.0)

    return [remainders, half_signs, wide_atomics, subgroups]


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("body", kernels_needing_much(), ids=lambda f: f.__name__)
def test_the_pass_lists_everything_the_module_needs(body, strict):
    # what spirv.lower would otherwise refuse (as an internal error) the pass has found first
    target = Target(strict_float=strict)
    kernel = decompose(translated(body), target)
    listed = {r.feature for r in required_features(kernel, target)}
    module = pk.spirv.lower(kernel, target)
    assert module.required_features - OPTIONAL <= listed
