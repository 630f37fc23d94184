"""Creating tensors: filled, ranges, identity and triangles (`creation`), random ones (`random`).
"""
