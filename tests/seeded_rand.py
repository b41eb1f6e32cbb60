"""Test data seeded by the test's own id, whatever ran before it (a case run alone or in another
order draws the same values): `rand = SeededRand()` in a module, and an autouse fixture that
calls `rand.reseed(request.node.nodeid)`."""
from __future__ import annotations

import zlib

import numpy as np


class SeededRand:
    def __init__(self):
        self.rng = np.random.default_rng(0)

    def reseed(self, nodeid: str) -> None:
        self.rng = np.random.default_rng(zlib.crc32(nodeid.encode()))

    def __call__(self, *shape, scale=1.0):
        """float32 standard normal values of `shape`, times scale."""
        return (self.rng.standard_normal(shape) * scale).astype(np.float32)
