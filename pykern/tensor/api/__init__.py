"""The op library's outward faces: the array API namespace (`namespace`, by standard version),
numpy's functions, ufuncs and ndarray methods on tensors, numpy's fallback, and the kernel names
that are tensor functions too (`kernel_names`).
"""
