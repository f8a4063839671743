"""Where in-instance agents reach Kiln: what the engine tells plugins about its own URLs.

A server's software-config agent is told where to poll for metadata: the
CloudFormation-compatible API (``heat_metadata_server_url``, Heat's option) for
POLL_SERVER_CFN. The engine supplies this as the ``heat_endpoints`` service; a context
without it means the URL is not configured. Imports: kiln.plugin.context only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from kiln.plugin.context import ResourceContext

SERVICE = "heat_endpoints"


@dataclass(frozen=True)
class HeatEndpoints:
    """Kiln's own URLs as in-instance agents see them."""

    #: the CloudFormation API's base URL (``http://host:8000``), without ``/v1``
    metadata_server_url: str | None = None
    #: the region agents name when they look services up (``region_name_for_services``)
    region_name: str | None = None


def heat_endpoints(ctx: ResourceContext) -> HeatEndpoints:
    """The engine's endpoints, or an empty set when it supplies none."""
    try:
        return cast("HeatEndpoints", ctx.client(SERVICE))
    except LookupError:
        return HeatEndpoints()
