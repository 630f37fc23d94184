"""The math names of the kernel language that are also tensor functions (`pk.exp`, `pk.abs`,
`pk.max`, ...): one object each, resolved by identity inside kernels, running the op library's
function on tensors, arrays and scalars outside. Derived from the registry: an op that names
its kernel builtin (`Op.builtin`) is served by it. `import pykern` hands this table to the
builtins' registration hook (`pykern.lang.builtins.serve_tensors`) once, explicitly, after
every op module has declared its ops.
"""

from __future__ import annotations

from collections.abc import Callable

from pykern.lang import builtins as bi
from pykern.ops.registry import all_ops


def tensor_functions() -> tuple[tuple[bi.KernelBuiltin, Callable[..., object]], ...]:
    """(builtin, the op's public function) for every declared op with a kernel builtin."""
    return tuple((op.builtin, op.function) for op in all_ops()
                 if op.builtin is not None and op.function is not None)
