"""The bf16 pass: what it leaves of a kernel that uses bf16 (no bf16 at all, u16 words in
memory, f32 values rounded by the added functions), valid IR that the SPIR-V backend lowers
and spirv-val accepts; kernels without bf16 are left alone."""

from __future__ import annotations

import pykern as pk
from pykern import frontend, ir
from pykern.ir.verify import verify
from pykern.lang import dtypes as dt
from pykern.passes import decompose, lower_bf16
from pykern.mathlib.bf16_functions import ROUND, odd_name
from pykern.spirv import Target
from pykern.spirv.lower import lower
from pykern.spirv.encoding.validate import validate


def translated(body) -> ir.Kernel:
    return frontend.translate(frontend.load_source(body), frontend.signature(body), (64, 1, 1))


def every_kernel_type(kernel: ir.Kernel) -> set[str]:
    found = set()
    for node in ir.walk(kernel):
        t = getattr(node, "dtype", None) or getattr(node, "type", None)
        t = getattr(t, "dtype", t)
        if isinstance(t, dt.DType):
            found.add(t.name)
    found |= {f.return_type.name for f in kernel.functions if f.return_type is not None}
    return found


def uses_everything(x: pk.bf16[:], s: pk.bf16, n: pk.i64[:], out: pk.bf16[:]):
    tile = pk.shared(pk.bf16, (64,))
    i = pk.global_id(0)
    tile[pk.local_id(0)] = x[i] * s
    pk.barrier()
    v: pk.bf16 = pk.exp(tile[0]) + pk.bf16(n[i]) + pk.bf16(i)
    if i < pk.grid(0):
        out[i] = v if v > 0.0 else -v


def test_no_bf16_is_left_and_the_result_is_valid_ir():
    kernel = translated(uses_everything)
    assert "bf16" in every_kernel_type(kernel)
    lowered = lower_bf16(kernel)
    verify(lowered)
    assert "bf16" not in every_kernel_type(lowered)
    types = {p.name: p.type for p in lowered.params}
    assert types["x"] == dt.u16[:] and types["out"] == dt.u16[:] and types["s"] == dt.f32
    assert [a.dtype for a in lowered.arrays] == [dt.u16]
    names = [f.name for f in lowered.functions]
    assert names[0] == ROUND and odd_name(dt.i64) in names and odd_name(dt.i32) in names
    assert any(isinstance(n, ir.Bitcast) for n in ir.walk(lowered))


def test_the_lowered_kernel_passes_spirv_val_without_bfloat16():
    target = Target()
    module = lower(decompose(lower_bf16(translated(uses_everything)), target), target)
    validate(module.words)


def test_a_kernel_without_bf16_is_returned_as_it_is():
    def plain(x: pk.f32[:]):
        x[pk.global_id(0)] *= 2.0

    kernel = translated(plain)
    assert lower_bf16(kernel) is kernel


def test_the_rewritten_kernel_is_remembered_per_kernel_object():
    kernel = translated(uses_everything)
    assert lower_bf16(kernel) is lower_bf16(kernel)


def test_values_that_stay_bf16_are_not_rounded_again():
    def moves(x: pk.bf16[:], out: pk.bf16[:]):
        i = pk.global_id(0)
        out[i] = max(-x[i], abs(x[i]))

    lowered = lower_bf16(translated(moves))
    rounds = [n for n in ir.walk(lowered) if isinstance(n, ir.Call) and n.function == ROUND]
    assert rounds == [] and lowered.functions == ()
