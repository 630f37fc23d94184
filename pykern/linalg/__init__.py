"""`pk.linalg`: the array API standard's `linalg` extension (2023.12) on pykern tensors, also
`xp.linalg` of the namespace. Every function runs as pykern kernels on the tensors' device.
"""

from __future__ import annotations
