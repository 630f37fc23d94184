"""The native side: one LLVM target machine for the host CPU, the -O3 pipeline, and MCJIT
engines that turn an LLVM IR module into callable machine code.

LLVM is initialised once, on first use (importing pykern.llvm loads no LLVM). Every compiled
module gets an engine of its own, kept alive by the `NativeModule` that holds its function
address; math functions without an LLVM intrinsic (tanf, erf, ...) are resolved from the
C library already loaded into the process.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass
from typing import Any

import llvmlite.binding as llvm

OPT_LEVEL = 3


@functools.lru_cache(maxsize=1)
def target_machine() -> Any:
    """The host CPU's target machine for optimising and data layouts (not for engines: an
    engine takes ownership of its machine and frees it with itself)."""
    return new_target_machine()


def new_target_machine() -> Any:
    """A target machine for the host CPU (its name and features, so AVX2 is used where
    present)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                        features=llvm.get_host_cpu_features().flatten(),
                                        opt=OPT_LEVEL, codemodel="jitdefault")


@functools.lru_cache(maxsize=1)
def _libm_loaded() -> bool:
    """Makes the C math library's symbols visible to the JIT's symbol resolution."""
    for name in ("libm.so.6", "libm.so", "libm.dylib"):
        try:
            llvm.load_library_permanently(name)
            return True
        except RuntimeError:
            continue
    return False


def optimise(module: Any) -> None:
    """Runs the -O3 module pipeline (loop and SLP vectorisation on) over `module`, in place."""
    tuning = llvm.PipelineTuningOptions(speed_level=OPT_LEVEL)
    tuning.loop_vectorization = True
    tuning.slp_vectorization = True
    tuning.loop_unrolling = True
    builder = llvm.create_pass_builder(target_machine(), tuning)
    builder.getModulePassManager().run(module, builder)


@dataclass
class NativeModule:
    """Machine code of one module: the engine that owns it, and the entry's C function."""

    engine: Any
    entry: Any  # a ctypes function
    ir_text: str  # the optimised LLVM IR, for inspection


ENTRY_SIGNATURE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


def compile_ir(ir_text: str, entry_name: str) -> NativeModule:
    """`ir_text` parsed, verified, optimised and compiled; `entry_name` is a function
    `void (ptr args, i64 first_group, i64 end_group)`."""
    machine = target_machine()
    _libm_loaded()
    module = llvm.parse_assembly(ir_text)
    module.verify()
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    optimise(module)
    engine = llvm.create_mcjit_compiler(module, new_target_machine())
    engine.finalize_object()
    address = engine.get_function_address(entry_name)
    if not address:
        raise RuntimeError(f"the JIT did not produce {entry_name}")
    return NativeModule(engine, ENTRY_SIGNATURE(address), str(module))
