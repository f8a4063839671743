"""Helpers shared by the OS::Nova::* plugins (no resource type lives here).

The compute client of a context, microversion gates, and "already gone"
handling for deletes. Imports: kiln.plugin, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from kiln.cloud.api.compute import ComputeApi, version_tuple
from kiln.cloud.api.errors import NotFound
from kiln.plugin import ResourceFailure
from kiln.plugin.context import ResourceContext

# Microversions that gate features (reference resource-types.md section 1).
KEYPAIR_TYPE = (2, 2)
KEYPAIR_USER = (2, 10)
SOFT_POLICIES = (2, 15)
SERVER_TAGS = (2, 26)
AUTO_ALLOCATE = (2, 37)
NIC_TAG = (2, 42)
NO_PERSONALITY = (2, 57)
GROUP_POLICY = (2, 64)
BDM_VOLUME_TYPE = (2, 67)
KEYPAIR_NEEDS_PUBLIC_KEY = (2, 92)


def compute(ctx: ResourceContext) -> ComputeApi:
    """The context's compute client."""
    return cast("ComputeApi", ctx.client("compute"))


def supports(api: ComputeApi, version: tuple[int, int]) -> bool:
    """Whether the negotiated microversion is at least ``version``."""
    return version_tuple(api.microversion()) >= version


def require(api: ComputeApi, version: tuple[int, int], feature: str) -> None:
    """Fail with Heat's kind of message when ``feature`` needs a newer microversion."""
    if not supports(api, version):
        raise ResourceFailure(
            f"{feature} is not supported by the compute API version "
            f"{api.microversion()} (needs {version[0]}.{version[1]})"
        )


def delete_ignoring_gone(delete: Callable[[], object]) -> None:
    """Run a delete call; an object that is already gone counts as deleted."""
    try:
        delete()
    except NotFound:
        pass
