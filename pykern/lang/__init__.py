"""What users write inside kernels: the dtypes and array annotations (`dtypes`), the builtin
functions of the kernel language (`builtins`: thread indices, math, atomics, subgroups,
`pk.local`/`pk.shared`) and device functions (`func`). These objects carry no compiler: the
frontend recognises them by identity, and outside kernels the math names run as tensor ops.
"""
