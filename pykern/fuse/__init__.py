"""`@pk.fuse`: elementwise functions of tensors traced into one generated kernel per argument
signature (docs/fuse.md). `tracer` records the ops, `trace` plans the kernels of one
signature, `codegen` writes their pykern source, `fused` is the user's object and its caches.
"""

from __future__ import annotations

from pykern.fuse.fused import Fused, fuse
from pykern.fuse.refusal import FuseError

__all__ = ["Fused", "FuseError", "fuse"]
