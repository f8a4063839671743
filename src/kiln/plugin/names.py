"""Physical resource names as Heat builds them (reference resource-types 0.2).

``<stack>-<resource>-<short_id>`` where short_id is 12 lowercase base32
characters derived from the resource's UUID; names longer than the type's limit
keep their first two characters, a dash and the tail.
"""

from __future__ import annotations

import base64
import uuid


def short_id(resource_uuid: str) -> str:
    """12 lowercase base32 characters derived from a UUID (stable for that UUID)."""
    # The 60-bit "time" field (random in a version-4 UUID), left-aligned in 8
    # bytes; 12 base32 characters hold exactly those 60 bits.
    value = uuid.UUID(resource_uuid).time
    encoded = base64.b32encode((value << 4).to_bytes(8, "big")).decode()
    return encoded[:12].lower()


def physical_resource_name(
    stack_name: str, resource_name: str, resource_uuid: str, limit: int = 255
) -> str:
    """The name Heat gives a cloud object when the template gives none."""
    name = f"{stack_name}-{resource_name}-{short_id(resource_uuid)}"
    if len(name) <= limit:
        return name
    tail = name[-(limit - 3) :]
    return f"{name[:2]}-{tail}"
