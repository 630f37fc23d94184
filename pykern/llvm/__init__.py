"""The LLVM backend: the typed IR lowered to LLVM IR with llvmlite and compiled to native
code for the host CPU (the -O2 pipeline with loop and SLP vectorisation, then object code
linked into an ORC JIT: `engine`), run over numpy arrays in place with the interpreter's
semantics (`pykern.interpret`).

    >>> import pykern.llvm
    >>> pykern.llvm.launch(saxpy, x.size, 2.0, x, y, out)   # saxpy[x.size](2.0, x, y, out)
    >>> pykern.llvm.compile_for(saxpy, x.size, 2.0, x, y, out).llvm_ir  # the optimised IR

How a launch runs (`module`): one native entry runs a range of workgroups, ranges handed
to a thread pool (`pool`); each runs its
invocations as loops over local z, y, x (`invocations`), the innermost vectorisable, with the
grid mask turned into the loops' bounds; kernels with `pk.barrier()` are cut into regions at
the barriers, each a loop over the workgroup's invocations, with locals kept per invocation
(`regions`; a `@pk.func` with a barrier is inlined into the kernel's IR first, `inline`).
Device functions are inlined as they are emitted (`calls`). Semantics as the interpreter's
(`pysemantics`, `arith`): Python's `//` and `%`, integer wrap, out-of-range shifts shift
everything out, float to int saturates (NaN gives 0), integer division by zero gives 0,
locals and `pk.local`/`pk.shared` arrays start at zero; f16 is computed in f32 and rounded
back; no fast-math, so `+ - * /` give numpy's bits. Math uses LLVM intrinsics and the C
library (`mathfns`), whose results agree with numpy's within the documented ULP bounds.

Debug mode (`debug`, `reports`): every array access is bounds-checked (each index against its
dimension, unsigned, as on Vulkan) and asserts are evaluated; a failure writes a site id, the
invocation's global id, the indices and the shape to a report whose address is in the
argument block (`layout`), one report per call of the entry, so no atomics; a failing access
touches no memory and the launch runs on. `HostKernel.run` then raises the first failure in
launch order (the same on any number of threads) as `pk.KernelIndexError` /
`pk.KernelAssertionError`, with the Vulkan debug path's message; the site table lives on the
`HostKernel` (debug kernels skip the disk cache). Without debug mode the frontend drops
asserts and nothing is checked.

Not yet lowered (a located `pk.CompileError` names them, `support`): subgroup operations,
cooperative-matrix tiles, `break` or `continue` out of a loop that contains a barrier, and a
`@pk.func` with a barrier that returns before its end or is called inside an expression.

Compiled variants are kept in memory per kernel object and on disk (`diskcache`: object code
plus JSON, keyed like the SPIR-V cache, in PYKERN_CACHE_DIR), so another process loads them
instead of compiling. Workgroups run on a pool of threads, one per core (`pool`;
`launch(..., threads=1)` runs them all on the calling thread).
"""

from pykern.llvm.compiled import HostKernel, compile_host
from pykern.llvm.launch import compile_for, launch

__all__ = ["HostKernel", "compile_for", "compile_host", "launch"]
