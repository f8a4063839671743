"""OS::Nova::ServerGroup against the sandbox's compute service."""

from __future__ import annotations

import pytest
from nova_plugin_support import Cloud
from nova_schema_support import NO_DEFAULT, allowed, table

from kiln.cloud.api.errors import NotFound
from kiln.resources.nova.server_group import ServerGroup
from kiln.testing.plugin_context import decide, run_action


def test_schema_matches_the_reference() -> None:
    policies = allowed("anti-affinity", "affinity", "soft-anti-affinity", "soft-affinity")
    assert table(ServerGroup.properties_schema) == {
        "name": ("string", False, NO_DEFAULT, False, []),
        "policies": ("list", False, ["anti-affinity"], False, []),
        "policies[]": ("string", False, NO_DEFAULT, False, [policies]),
        "rules": ("map", False, NO_DEFAULT, False, []),
        "rules.max_server_per_host": ("number", False, NO_DEFAULT, False, []),
    }
    assert dict(ServerGroup.attributes_schema) == {}


def test_lifecycle_with_policy_and_rules() -> None:
    cloud = Cloud(with_network=False)
    res, ctx = cloud.resource(
        ServerGroup, {"policies": ["anti-affinity"], "rules": {"max_server_per_host": 2}}
    )
    assert res.find_existing() is None
    run_action(res, "create")
    group = cloud.compute.get_server_group(str(ctx.physical_id))
    assert group.name == ctx.physical_resource_name()
    assert group.policies == ["anti-affinity"] and group.rules == {"max_server_per_host": 2}
    assert res.find_existing() == ctx.physical_id
    assert res.get_attribute("show")["id"] == ctx.physical_id
    run_action(res, "check")
    run_action(res, "delete")
    with pytest.raises(NotFound):
        cloud.compute.get_server_group(str(ctx.physical_id))
    run_action(res, "delete")


def test_named_soft_affinity_group() -> None:
    cloud = Cloud(with_network=False)
    res, ctx = cloud.resource(ServerGroup, {"name": "g", "policies": ["soft-affinity"]})
    run_action(res, "create")
    assert cloud.compute.get_server_group(str(ctx.physical_id)).policies == ["soft-affinity"]
    assert decide(res, {"name": "h"}).kind == "replace"
