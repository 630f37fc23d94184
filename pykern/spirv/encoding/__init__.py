"""SPIR-V as words: instructions, the module builder, type and constant keys, the grammar
(generated) and its extensions, and spirv-val/spirv-dis.
"""
