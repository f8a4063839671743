"""Heat's implicit dependencies: attach to a network after its subnets exist, and make a
floating IP after the routes that reach it."""

from __future__ import annotations

import pathlib

from kiln.cli.local_files import load_local_stack
from kiln.template.inputs import build_stack

HOT = "heat_template_version: 2021-04-16\nresources:\n"

NETWORK = (
    HOT
    + """
  net: {type: OS::Neutron::Net}
  other_net: {type: OS::Neutron::Net}
  subnet: {type: OS::Neutron::Subnet, properties: {network: {get_resource: net}, cidr: 10.0.0.0/24}}
  other_subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: other_net}, cidr: 10.1.0.0/24}
  port: {type: OS::Neutron::Port, properties: {network: {get_resource: net}}}
  server:
    type: OS::Nova::Server
    properties: {image: cirros, flavor: m1.tiny, networks: [{network: {get_resource: net}}]}
  named_port: {type: OS::Neutron::Port, properties: {network: public}}
  public_subnet: {type: OS::Neutron::Subnet, properties: {network: public, cidr: 10.2.0.0/24}}
"""
)


def requires(text: str) -> dict[str, set[str]]:
    stack = build_stack(text)
    assert not stack.errors, stack.errors
    return {name: set(d.requires) for name, d in stack.resources.items()}


def test_what_attaches_to_a_network_waits_for_its_subnets() -> None:
    found = requires(NETWORK)
    assert found["port"] == {"net", "subnet"}
    assert found["server"] == {"net", "subnet"}
    assert found["named_port"] == {"public_subnet"}  # the same name counts too
    assert found["other_subnet"] == {"other_net"}


FLOATING = (
    HOT
    + """
  net: {type: OS::Neutron::Net}
  subnet: {type: OS::Neutron::Subnet, properties: {network: {get_resource: net}, cidr: 10.0.0.0/24}}
  router: {type: OS::Neutron::Router, properties: {external_gateway_info: {network: public}}}
  interface:
    type: OS::Neutron::RouterInterface
    properties: {router: {get_resource: router}, subnet: {get_resource: subnet}}
  port:
    type: OS::Neutron::Port
    properties: {network: {get_resource: net}, fixed_ips: [{subnet: {get_resource: subnet}}]}
  fip: {type: OS::Neutron::FloatingIP, properties: {floating_network: public}}
  bound_fip:
    type: OS::Neutron::FloatingIP
    properties: {floating_network: public, port_id: {get_resource: port}}
  association:
    type: OS::Neutron::FloatingIPAssociation
    properties: {floatingip_id: {get_resource: fip}, port_id: {get_resource: port}}
"""
)


def test_a_floating_ip_waits_for_its_route() -> None:
    found = requires(FLOATING)
    assert found["fip"] == {"router"}  # the gateway onto its floating network
    assert found["bound_fip"] == {"port", "router", "interface"}
    assert found["association"] == {"fip", "port", "interface"}


def test_an_edge_that_would_close_a_cycle_is_left_out() -> None:
    text = (
        HOT
        + """
  net: {type: OS::Neutron::Net}
  port: {type: OS::Neutron::Port, properties: {network: {get_resource: net}}}
  subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: net}, cidr: 10.0.0.0/24}
    depends_on: port
"""
    )
    found = requires(text)
    assert found["port"] == {"net"}
    assert found["subnet"] == {"net", "port"}


def test_the_multi_tier_example_routes_its_floating_ip_first() -> None:
    example = pathlib.Path(__file__).parents[2] / "examples" / "multi-tier" / "web-app.yaml"
    stack = load_local_stack(str(example), [])
    assert not stack.errors
    fip = set(stack.resources["site_floating_ip"].requires)
    assert {"router", "router_interface", "load_balancer"} <= fip
