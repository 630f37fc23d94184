"""Elementwise ops: the tables of unary and binary ops (`unary_ops`, `binary_ops`) and the generic
kernels and public functions that run them (`functions`).
"""
