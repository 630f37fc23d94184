"""pykern's benchmark suite: `python -m benchmarks [--json PATH]` (or `make bench`).

Each benchmark measures pykern and, in the same process, the peers that are importable here:
numpy always; torch on the CPU, and on CUDA when present; Taichi on its Vulkan backend (and, in
`--only host`, Numba's parallel @njit and Taichi's CPU backend: the `bench-cpu` extra). The table
printed at the end puts them side by side with the ratio to pykern; `--json` writes every figure
with how it was measured. docs/performance.md says what each benchmark measures and how.
"""
