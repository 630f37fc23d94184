"""Matrix products: `matmul` (`matmul`) and its kernels: the shared GEMM micro-kernel (`gemm_tile`),
the host one (`gemm_host`), f32 register-blocked candidates (`gemm_f32`) and the matrix-engine
one (`gemm_coop`).
"""
