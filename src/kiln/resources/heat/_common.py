"""Helpers shared by the OS::Heat::* plugins (no resource types live here).

Imports: stdlib only.
"""

from __future__ import annotations

import uuid
from random import Random


def random_uuid(rng: Random) -> str:
    """A version-4 UUID drawn from the context's randomness (replayable when seeded)."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))
