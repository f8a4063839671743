"""Neutron's resource types (OS::Neutron::*): networks, subnets, routers and their
interfaces, floating IPs and their associations, ports, security groups and rules.

One module per type (``floating_ip_association.py`` is OS::Neutron::FloatingIPAssociation);
what they share (request bodies, status checks, the delete pattern, tags and the
crash-safe lookup) lives in ``_common.py``.
"""
