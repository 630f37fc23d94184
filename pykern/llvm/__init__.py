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
grid mask turned into the loops' bounds; kernels with `pk.barrier()` or subgroup exchanges are
cut into regions at them, each a loop over the workgroup's invocations, with locals kept per
invocation (`regions`; a `@pk.func` with a barrier or an exchange is inlined into the kernel's
IR first, `inline`, and every exchange made a statement of its own, `hoist`).
Device functions are inlined as they are emitted (`calls`). Semantics as the interpreter's
(`pysemantics`, `arith`): Python's `//` and `%`, integer wrap, out-of-range shifts shift
everything out, float to int saturates (NaN gives 0), integer division by zero gives 0,
locals and `pk.local`/`pk.shared` arrays start at zero; f16 is computed in f32 and rounded
back; no fast-math, so `+ - * /` give numpy's bits. Math uses LLVM intrinsics and the C
library (`mathfns`), whose results agree with numpy's within the documented ULP bounds.

Vulkan's safety promises hold (`robust`, `stopping`): outside debug mode no access touches
memory outside its array's buffer (a store there is dropped, a load gives 0), checked where
it runs unless it was proved inside (`bound_analysis` bounds the indices symbolically,
`proofs` evaluates the bounds per launch, and per workgroup in a second version of the
module compiled for launches that need it: `module`, `compiled`); and a launch can be stopped
(PYKERN_TIMEOUT, Ctrl-C) through a stop word that the code polls at loop back-edges, between
chunks of long loops and before each workgroup.

Debug mode (`debug`, `reports`): every array access is bounds-checked (each index against its
dimension, unsigned, as on Vulkan) and asserts are evaluated; a failure writes a site id, the
invocation's global id, the indices and the shape to a report whose address is in the
argument block (`layout`), one report per call of the entry, so no atomics; a failing access
touches no memory and the launch runs on. `HostKernel.run` then raises the first failure in
launch order (the same on any number of threads) as `pk.KernelIndexError` /
`pk.KernelAssertionError`, with the Vulkan debug path's message; the site table lives on the
`HostKernel` (debug kernels skip the disk cache). Without debug mode the frontend drops
asserts.

Subgroups (`lanes`, `subgroups`): `lanes.SUBGROUP_SIZE` (8) lanes of consecutive local linear
ids, a last partial subgroup where the workgroup's size is no multiple of 8. An exchange runs
between two regions over each subgroup's lanes in order, with the interpreter's results
(reductions in lane order; a shuffle from an inactive or out-of-range lane gives the own
value). An `if` or loop around an exchange may diverge: it runs with a mask per invocation
(`divergence`), and the subgroup reconverges after it, as on Vulkan devices and in the
interpreter. `break`, `continue` and `return` work there, and an
exchange in a branch of `a if c else b` or the right of `and`/`or` becomes such an `if`.

Not yet lowered (a located `pk.CompileError` names them, `support`): cooperative-matrix
tiles, `break` or `continue` out of a loop that contains a barrier, a `@pk.func` with a
barrier or a subgroup exchange that returns before its end, and one with a barrier that runs
only sometimes within its statement (the right of `and`/`or`, a branch of a conditional
expression, a `while` condition).

Compiled variants are kept in memory per kernel object and on disk (`diskcache`: object code
plus JSON, keyed like the SPIR-V cache, in PYKERN_CACHE_DIR), so another process loads them
instead of compiling. Workgroups run on a pool of threads, one per core (`pool`;
`launch(..., threads=1)` runs them all on one thread: the calling thread for a kernel without
loops, else one of the pool's, so that it can be stopped).
"""

from pykern.llvm.compiled import HostKernel, compile_host
from pykern.llvm.launch import compile_for, launch

__all__ = ["HostKernel", "compile_for", "compile_host", "launch"]
