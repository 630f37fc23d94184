"""IR → IR passes between the frontend and a backend, chosen by the target: each rewrites what
the target lacks into what it has (`lower_complex`: complex values as pairs of reals, for every
backend; `lower_bf16`: bfloat16 as f32 arithmetic on 16-bit words,
for every backend; `decompose`: a math call it cannot lower becomes a call of a prelude
`@pk.func`, `pykern.mathlib.prelude_f64`), and one lists the device features a kernel
needs, with the locations that need them (`required_features`), for the JIT layer to check
against the device; `spread` makes a kernel run several logical invocations per invocation
where the target asks for it (GPUs: more loads in flight).
"""

from pykern.passes.bf16 import lower_bf16
from pykern.passes.complex import lower_complex
from pykern.passes.decompose import decompose
from pykern.passes.features import Requirement, first_missing, required_features
from pykern.passes.spread import spread, spread_for

__all__ = ["Requirement", "decompose", "lower_bf16", "lower_complex", "first_missing",
           "required_features", "spread", "spread_for"]
