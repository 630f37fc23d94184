"""Math written in the kernel language for the passes to call: the f64 prelude (`prelude_f64`),
complex functions (`complex_functions`, `complex_prelude`) and bf16 helpers (`bf16_functions`),
and the translation of prelude functions (`prelude`). They are `@pk.func`s and IR builders, not
passes: `pykern.passes` rewrites a kernel into calls of them.
"""
