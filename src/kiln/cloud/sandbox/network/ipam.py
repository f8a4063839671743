"""IP address management for the simulated Neutron: CIDRs, gateways, pools, free addresses.

Pure functions over :mod:`ipaddress` values; the subnet and port operations call them and
turn :class:`IpamError` into Neutron's 400/409 errors (reference section 4.2: a CIDR must
be canonical for its version, the default pool is the range minus network, broadcast and
gateway, pools lie inside the CIDR and exclude the gateway).
"""

from __future__ import annotations

import ipaddress
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class IpamError(ValueError):
    """An address rule was broken: ``kind`` is Neutron's error type, ``status`` its code."""

    def __init__(self, message: str, kind: str = "InvalidInput", status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.status = status


@dataclass(frozen=True)
class Pool:
    """An inclusive range of assignable addresses."""

    start: IpAddress
    end: IpAddress

    def __contains__(self, address: object) -> bool:
        return isinstance(address, type(self.start)) and int(self.start) <= int(address) <= int(
            self.end
        )

    def as_json(self) -> dict[str, str]:
        return {"start": str(self.start), "end": str(self.end)}


def parse_cidr(cidr: object, ip_version: int) -> IpNetwork:
    """The network of a canonical CIDR of ``ip_version``; IpamError otherwise."""
    if not isinstance(cidr, str) or "/" not in cidr:
        raise IpamError(f"Invalid input for cidr. Reason: '{cidr}' is not a valid IP subnet.")
    try:
        network = ipaddress.ip_network(cidr, strict=False)
    except ValueError as exc:
        raise IpamError(
            f"Invalid input for cidr. Reason: '{cidr}' is not a valid IP subnet."
        ) from exc
    if network.version != ip_version:
        raise IpamError(f"Invalid input: cidr {cidr} does not match ip_version {ip_version}.")
    if str(network) != cidr.lower():
        # Neutron refuses host bits and non-canonical spellings.
        raise IpamError(
            f"Invalid input for cidr. Reason: '{cidr}' isn't a recommended CIDR, "
            f"use '{network}' instead."
        )
    return network


def parse_address(value: object, field: str = "ip_address") -> IpAddress:
    """An IP address; IpamError when ``value`` is not one."""
    try:
        return ipaddress.ip_address(str(value))
    except ValueError as exc:
        raise IpamError(
            f"Invalid input for {field}. Reason: '{value}' is not a valid IP address."
        ) from exc


def host_range(network: IpNetwork) -> tuple[IpAddress, IpAddress] | None:
    """The first and last host address (IPv4 excludes network and broadcast)."""
    first = network.network_address + 1
    last = network.broadcast_address - 1 if network.version == 4 else network.broadcast_address
    if network.num_addresses < 2 or int(first) > int(last):
        return None
    return first, last


def default_gateway(network: IpNetwork) -> IpAddress | None:
    """The first host of the network (Neutron's default gateway)."""
    hosts = host_range(network)
    return hosts[0] if hosts else None


def default_pools(network: IpNetwork, gateway: IpAddress | None) -> list[Pool]:
    """The host range minus the gateway (which splits it when inside)."""
    hosts = host_range(network)
    if hosts is None:
        return []
    first, last = hosts
    if (
        gateway is None
        or gateway.version != network.version
        or not int(first) <= int(gateway) <= int(last)
    ):
        return [Pool(first, last)]
    pools = []
    if int(gateway) > int(first):
        pools.append(Pool(first, gateway - 1))
    if int(gateway) < int(last):
        pools.append(Pool(gateway + 1, last))
    return pools


def parse_pools(
    network: IpNetwork, raw: Iterable[Mapping[str, object]], gateway: IpAddress | None
) -> list[Pool]:
    """Validated pools from ``[{"start", "end"}]``: inside the network, disjoint, no gateway."""
    pools: list[Pool] = []
    for item in raw:
        if not isinstance(item, Mapping) or "start" not in item or "end" not in item:
            raise IpamError("Invalid input for allocation_pools: each needs 'start' and 'end'.")
        start = parse_address(item["start"], "allocation_pools")
        end = parse_address(item["end"], "allocation_pools")
        if start.version != network.version or end.version != network.version:
            raise IpamError(
                f"Invalid input: allocation pool {start}-{end} does not match the subnet's "
                "IP version."
            )
        if int(start) > int(end):
            raise IpamError(f"The allocation pool {start}-{end} is not valid.")
        hosts = host_range(network)
        if hosts is None or int(start) < int(hosts[0]) or int(end) > int(hosts[1]):
            raise IpamError(
                f"The allocation pool {start}-{end} spans beyond the subnet cidr {network}.",
                kind="OutOfBoundsAllocationPool",
            )
        pools.append(Pool(start, end))
    ordered = sorted(pools, key=lambda p: int(p.start))
    for before, after in itertools.pairwise(ordered):
        if int(after.start) <= int(before.end):
            raise IpamError(
                f"Found overlapping allocation pools: {before.start}-{before.end} and "
                f"{after.start}-{after.end}.",
                kind="OverlappingAllocationPools",
            )
    if gateway is not None and any(gateway in p for p in pools):
        raise IpamError(
            f"Gateway ip {gateway} conflicts with allocation pool "
            f"{next(p for p in pools if gateway in p).as_json()}.",
            kind="GatewayConflictWithAllocationPools",
        )
    return pools


def pools_of(subnet: Mapping[str, object]) -> list[Pool]:
    """The stored ``allocation_pools`` of a subnet document."""
    raw = subnet.get("allocation_pools") or []
    assert isinstance(raw, list)
    return [Pool(ipaddress.ip_address(p["start"]), ipaddress.ip_address(p["end"])) for p in raw]


def next_free(pools: Sequence[Pool], used: set[str]) -> str | None:
    """The lowest pool address not in ``used`` (None when every pool is full)."""
    for pool in pools:
        address = pool.start
        # At most len(used) + 1 probes per pool: the search never walks a huge IPv6 range.
        while int(address) <= int(pool.end):
            if str(address) not in used:
                return str(address)
            address += 1
    return None


def check_gateway(network: IpNetwork, gateway: IpAddress) -> None:
    """A gateway must be of the subnet's version and not its network/broadcast address."""
    if gateway.version != network.version:
        raise IpamError(f"Invalid input: gateway_ip {gateway} does not match the subnet.")
    reserved = {network.network_address}
    if network.version == 4:
        reserved.add(network.broadcast_address)
    if gateway in reserved and network.num_addresses > 2:
        raise IpamError(f"Gateway IP {gateway} is not valid for subnet {network}.")


def check_host_address(network: IpNetwork, address: IpAddress, subnet_id: str) -> None:
    """A port address must be a host of the subnet (IpamError 400 otherwise)."""
    if address.version != network.version or address not in network:
        raise IpamError(f"IP address {address} is not a valid IP for the specified subnet.")
    hosts = host_range(network)
    if hosts is None or not int(hosts[0]) <= int(address) <= int(hosts[1]):
        raise IpamError(f"IP address {address} is not a valid IP for subnet {subnet_id}.")


# -- subnet pools: prefixes handed out as subnets ------------------------------------------
def compact(networks: Iterable[IpNetwork]) -> list[IpNetwork]:
    """The fewest CIDRs covering ``networks`` (overlaps and neighbours merged), in order."""
    return list(ipaddress.collapse_addresses(networks))  # type: ignore[type-var]


def free_prefixes(prefixes: Iterable[IpNetwork], taken: Iterable[IpNetwork]) -> list[IpNetwork]:
    """What of ``prefixes`` no ``taken`` CIDR covers, as the largest CIDRs in address order."""
    free = compact(prefixes)
    for used in taken:
        remaining: list[IpNetwork] = []
        for block in free:
            if block.version != used.version or not block.overlaps(used):
                remaining.append(block)
            elif not used.supernet_of(block):  # type: ignore[arg-type]
                # CIDRs nest or are disjoint: this block holds ``used`` and keeps the rest
                remaining.extend(block.address_exclude(used))  # type: ignore[arg-type]
        free = compact(remaining)
    return free


def first_fit(free: Sequence[IpNetwork], prefixlen: int) -> IpNetwork | None:
    """A ``/prefixlen`` from the free blocks, as Neutron picks it: the first one of the
    smallest block that holds it (the lowest such block), so big blocks stay whole."""
    fitting = [block for block in free if block.prefixlen <= prefixlen]
    if not fitting:
        return None
    block = max(fitting, key=lambda b: (b.prefixlen, -int(b.network_address)))
    return ipaddress.ip_network((block.network_address, prefixlen))


def holds(free: Sequence[IpNetwork], cidr: IpNetwork) -> bool:
    """Whether ``cidr`` lies wholly inside one free block."""
    return any(
        block.version == cidr.version and block.supernet_of(cidr)  # type: ignore[arg-type]
        for block in free
    )
