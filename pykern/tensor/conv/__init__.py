"""Convolutions and pooling: the entry points (`conv`, `pool`), argument checks, and the kernels
(implicit GEMM portable and on the matrix engine, direct, pooling).
"""
