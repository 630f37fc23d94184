"""Transfers between host and device: the DMA queue, imported host memory, parallel host copies.
"""
