"""The ResourceContext: everything a plugin may use, and nothing else.

The engine implements it for each action of one resource; tests implement it
with plain dictionaries. Writes (physical id, data) are persisted by the
engine before the plugin continues, so a resumed action sees them.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol


class ResourceContext(Protocol):
    """One resource's view of the world during one action."""

    @property
    def name(self) -> str:
        """The logical resource name in the template."""
        ...

    @property
    def type_name(self) -> str: ...

    @property
    def stack_name(self) -> str: ...

    @property
    def stack_id(self) -> str: ...

    @property
    def project_id(self) -> str: ...

    @property
    def action(self) -> str:
        """CREATE, UPDATE, DELETE, SUSPEND, RESUME, CHECK, SNAPSHOT, ..."""
        ...

    @property
    def properties(self) -> Mapping[str, Any]:
        """Resolved, typed properties (defaults applied)."""
        ...

    @property
    def metadata(self) -> Any: ...

    def metadata_set(self, metadata: Any) -> None:
        """Replace the resource's metadata (what ``GET .../metadata`` and in-instance
        agents read); persisted with the step's outcome."""
        ...

    def stack_user_project_id(self) -> str:
        """The stack-domain project of the stack's in-instance users, made on first use
        and shared by the whole stack tree (needs the ``identity`` service)."""
        ...

    @property
    def update_policy(self) -> Mapping[str, Any]:
        """The resource's resolved ``update_policy`` (``{}`` when none)."""
        ...

    @property
    def physical_id(self) -> str | None: ...

    def set_physical_id(self, physical_id: str | None) -> None:
        """Record the physical id (persisted before the plugin goes on)."""
        ...

    def physical_resource_name(self) -> str:
        """``<stack>-<name>-<short_id>``, stable for this resource row."""
        ...

    def data_get(self, key: str, default: Any = None) -> Any: ...

    def data_set(self, key: str, value: Any, *, redact: bool = False) -> None: ...

    def data_delete(self, key: str) -> None: ...

    def now(self) -> datetime:
        """The engine's clock (virtual in scenario tests)."""
        ...

    @property
    def random(self) -> random.Random:
        """Randomness (seeded in scenario tests; a system source otherwise)."""
        ...

    def client(self, service: str) -> Any:
        """A cloud client (``compute``, ``network``, ...) from kiln.cloud.api.

        Also Heat's own services (``software_config``, see
        kiln.plugin.software_configs). Raises LookupError for a service the
        engine does not supply.
        """
        ...
