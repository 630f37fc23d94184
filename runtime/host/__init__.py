"""The host device: `HostDevice`, its buffers (`HostBuffer`) and recorded graphs.
"""
