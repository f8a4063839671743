"""Checks of OS::Nova::Server properties against each other (no cloud needed).

The block device rules live with the mappings (server_block_devices); here are
the ``networks`` rules and the whole list. Checks that need the cloud (image
status and size, microversion gates, metadata limits) run at create, in
server_create. Imports: kiln.core and the sibling modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.core.errors import KilnError, StackValidationFailed
from kiln.resources.nova.server_block_devices import validate_block_devices
from kiln.resources.nova.server_networks import entries

NIC_KINDS = ("network", "port", "subnet", "allocate_network")


def validate_networks(properties: Mapping[str, Any]) -> list[KilnError]:
    errors: list[KilnError] = []
    items = entries(properties.get("networks"))

    def fail(message: str, *path: Any) -> None:
        errors.append(StackValidationFailed(message, path=("networks", *path)))

    for index, entry in enumerate(items):
        if not any(entry.get(k) for k in NIC_KINDS):
            fail(
                "One of the properties network, port, allocate_network or subnet should be "
                "set for the specified network of server",
                index,
            )
        if entry.get("allocate_network") and (len(entry) > 1 or len(items) > 1):
            fail(
                "Can not specify allocate_network with other keys of networks at the same time.",
                index,
            )
        if entry.get("fixed_ip") and entry.get("port"):
            fail("Cannot define the following properties at the same time: fixed_ip, port.", index)
        if entry.get("floating_ip") and set(entry) <= {"network", "floating_ip"}:
            fail(
                "Property floating_ip needs a port, a subnet, a fixed_ip or "
                "port_extra_properties besides the network.",
                index,
            )
    if properties.get("security_groups") and any(e.get("port") for e in items):
        errors.append(
            StackValidationFailed(
                "Cannot define the following properties at the same time: security_groups, "
                "networks/port.",
                path=("security_groups",),
            )
        )
    return errors


def validate_server(properties: Mapping[str, Any]) -> list[KilnError]:
    """Every cross-property error of a server's (typed) properties."""
    return validate_block_devices(properties) + validate_networks(properties)
