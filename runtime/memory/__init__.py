"""Device memory: memory types and sub-allocation (`device_memory`, `ranges`), storage buffers,
recycling, host access and staging buffers.
"""
