"""The native side: one LLVM target machine for the host CPU, the -O2 pipeline, object code,
and one ORC JIT into which object code is linked, a library per kernel.

Compiling is `compile_object` (LLVM IR text to optimised IR and an object file: what the disk
cache stores) then `load_object` (the object linked into the JIT, the entry's address looked
up), so a kernel from the disk cache skips straight to the second step. LLVM is initialised
once, on first use (importing pykern.llvm loads no LLVM). A `NativeModule` holds its library's
resource tracker: when it is collected, its machine code is freed. Math functions without an
LLVM intrinsic (tanf, erf, ...) are resolved from the C library loaded into the process.

Why -O2 and not -O3: on the kernels we measured it vectorises the same invocation loops and
gives the same code for elementwise kernels, and takes a few milliseconds less per compile.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import threading
from dataclasses import dataclass
from typing import Any

import llvmlite.binding as llvm

OPT_LEVEL = 2
CODEGEN_LEVEL = 3  # codegen's own level: at 2 or 1 it saves nothing measurable here


@functools.lru_cache(maxsize=1)
def target_machine() -> Any:
    """The host CPU's target machine, for optimising, data layouts and object code (never
    handed to an engine: an engine takes ownership of its machine and frees it with itself)."""
    return new_target_machine()


def new_target_machine() -> Any:
    """A target machine for the host CPU (its name and features, so AVX2 is used where
    present)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(), features=host_features(),
                                        opt=CODEGEN_LEVEL, codemodel="jitdefault")


# CPU features the backend never uses, though the CPU has them. AVX512-FP16 (Intel from
# Sapphire Rapids on) makes LLVM compute f16 natively, and there its saturating f16 -> int
# conversion gave INT_MIN for NaN instead of 0 and f16 arithmetic gave other answers than
# through f32 (found by the random-kernel test on such a Xeon). Without it, f16 values are
# computed in f32 and rounded once per operation, as on every other CPU: exact for + - * /.
# AVX10 (which includes FP16) goes with it.
DISABLED_FEATURES = ("avx512fp16", "avx10.1", "avx10.1-256", "avx10.1-512", "avx10.2",
                     "avx10.2-256", "avx10.2-512")


@functools.lru_cache(maxsize=1)
def host_features() -> str:
    """The host CPU's features as LLVM spells them, less `DISABLED_FEATURES`."""
    features = llvm.get_host_cpu_features()
    for name in DISABLED_FEATURES:
        if name in features:
            features[name] = False
    return features.flatten()


@functools.lru_cache(maxsize=1)
def host_target() -> str:
    """What object code depends on besides the IR: LLVM's version, the triple, the CPU and
    its features (a cache key part; asking LLVM for the features takes half a millisecond)."""
    llvm.initialize_native_target()
    version = ".".join(map(str, llvm.llvm_version_info))
    return (f"llvm={version} triple={llvm.get_process_triple()} cpu={llvm.get_host_cpu_name()} "
            f"features={host_features()} opt={OPT_LEVEL}/{CODEGEN_LEVEL}")


@functools.lru_cache(maxsize=1)
def _jit() -> Any:
    """The process's ORC JIT (its own target machine, which it owns)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    _load_compiler_runtime()
    return llvm.create_lljit_compiler(new_target_machine())


# LLVM's loop passes may compute a trip count in more than 64 bits (a 64-bit `range` with a
# run-time negative step did), and its code then calls the compiler runtime's 128-bit
# division; a C program gets those from libgcc or compiler-rt at link time, a JIT only from
# a library loaded into the process. macOS's libSystem has them loaded already.
COMPILER_RUNTIME = ("libgcc_s.so.1", "libgcc_s.so", "libclang_rt.builtins.so")


def _load_compiler_runtime() -> None:
    """Loads the compiler runtime with its symbols visible to the JIT (`add_current_process`),
    where the process does not already have its 128-bit division."""
    process = ctypes.CDLL(None)
    if hasattr(process, "__udivti3"):
        return
    for name in COMPILER_RUNTIME:
        try:
            ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
            return
        except OSError:
            continue


def optimise(module: Any) -> None:
    """Runs the -O2 module pipeline (loop and SLP vectorisation on) over `module`, in place."""
    tuning = llvm.PipelineTuningOptions(speed_level=OPT_LEVEL)
    tuning.loop_vectorization = True
    tuning.slp_vectorization = True
    tuning.loop_unrolling = True
    builder = llvm.create_pass_builder(target_machine(), tuning)
    builder.getModulePassManager().run(module, builder)


@dataclass
class NativeModule:
    """Machine code of one kernel: the JIT library that owns it, and the entry's C function
    (a `CFUNCTYPE`, whose calls release the GIL)."""

    library: Any  # the resource tracker: the code lives as long as it does
    entry: Any  # a ctypes function
    ir_text: str  # the optimised LLVM IR, for inspection


# i64 pk_entry(ptr args, i64 first, i64 end): the first workgroup it did not run
ENTRY_SIGNATURE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                                   ctypes.c_int64)
_names = itertools.count()
_link_lock = threading.Lock()


def compile_object(ir_text: str) -> tuple[bytes, str]:
    """`ir_text` parsed, verified and optimised: (its object code, the optimised IR)."""
    machine = target_machine()
    module = llvm.parse_assembly(ir_text)
    module.verify()
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    optimise(module)
    return machine.emit_object(module), str(module)


def load_object(obj: bytes, entry_name: str, ir_text: str) -> NativeModule:
    """Object code linked into the JIT; `entry_name` is a function
    `i64 (ptr args, i64 first_group, i64 end_group)`. A RuntimeError if linking fails (an
    object that is not one, or lacks the entry)."""
    with _link_lock:  # library names are unique per JIT
        library = llvm.JITLibraryBuilder().add_object_img(obj).add_current_process() \
            .export_symbol(entry_name).link(_jit(), f"pykern_kernel_{next(_names)}")
    address = library[entry_name]
    if not address:
        raise RuntimeError(f"the JIT did not produce {entry_name}")
    return NativeModule(library, ENTRY_SIGNATURE(address), ir_text)


def compile_ir(ir_text: str, entry_name: str) -> NativeModule:
    """`ir_text` compiled and loaded (`compile_object`, then `load_object`)."""
    obj, optimised = compile_object(ir_text)
    return load_object(obj, entry_name, optimised)
