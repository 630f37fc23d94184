"""Numerics built from SPIR-V instructions: the math functions table, accurate f32
trigonometry, strict IEEE float, and Python's semantics of //, %, ** and shifts.
"""
