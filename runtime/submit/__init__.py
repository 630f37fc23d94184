"""Submitting work: command batches, launches and their descriptors, recorded graphs, GPU
timestamps and per-launch profiles.
"""
