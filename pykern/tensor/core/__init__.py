"""`pk.Tensor` and what every op uses: strides and launch planning (`strided`), type promotion,
argument checks, device limits, replayed dispatch plans, the operand-device edge, autocast, the
transfer guard, interchange (pickling, DLPack) and the `@pk.fuse` tracing hook.
"""
