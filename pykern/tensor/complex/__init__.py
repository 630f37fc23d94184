"""Complex tensors: their elementwise ops, element functions, kernels, copies and casts, views as
real pairs, layout ops and reductions.
"""
