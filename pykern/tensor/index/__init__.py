"""Indexing and shapes: concat, stack, take, scatter_add (`indexing`), numpy's advanced indexing
(`advanced_key`, `advanced_index`) and shape manipulation (`manipulation`).
"""
