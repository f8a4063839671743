"""The software-config store as plugins see it: a tiny read-only lookup by id.

OS::Heat::MultipartMime (and later SoftwareDeployment) resolve references to
other software configs through ``ctx.client(SERVICE)``. The engine will supply
that service once software configs have a store of their own; until then a
context without it means "no config can be looked up", and a plugin treats
every value as inline text. Imports: kiln.plugin.context only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, cast

from kiln.plugin.context import ResourceContext

SERVICE = "software_config"


class SoftwareConfigs(Protocol):
    """Stored software configs by id (a plain dict of id -> config satisfies it)."""

    def get(self, config_id: str) -> Mapping[str, Any] | None:
        """The config (``id``, ``name``, ``group``, ``config``, ``options``,
        ``inputs``, ``outputs``), or None when no config has that id."""
        ...


def software_configs(ctx: ResourceContext) -> SoftwareConfigs | None:
    """The context's software-config store, or None when it supplies none."""
    try:
        store = ctx.client(SERVICE)
    except LookupError:
        return None
    return cast("SoftwareConfigs | None", store)
