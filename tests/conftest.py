"""Test-session setup: a private compile-cache directory, so tests neither read a developer's
cache nor leave entries in it."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("PYKERN_CACHE_DIR", tempfile.mkdtemp(prefix="pykern-test-cache-"))
