"""The op library: tensor operations, each written as `@pk.kernel`s (grows with the tensor
issue; empty in the foundation slice)."""
