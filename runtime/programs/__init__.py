"""Programs: compute pipelines from SPIR-V words and a binding layout, and the on-disk pipeline
cache.
"""
