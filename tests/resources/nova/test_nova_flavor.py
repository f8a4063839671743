"""OS::Nova::Flavor against the sandbox's compute service (as an admin)."""

from __future__ import annotations

import pytest
from nova_plugin_support import PROJECT, Cloud
from nova_schema_support import NO_DEFAULT, custom, table

from kiln.cloud.api.errors import NotFound
from kiln.resources.nova.flavor import Flavor
from kiln.testing.plugin_context import decide, run_action


def test_schema_matches_the_reference() -> None:
    assert table(Flavor.properties_schema) == {
        "tenants": ("list", False, [], True, []),
        "tenants[]": ("string", False, NO_DEFAULT, False, [custom("keystone.project")]),
        "flavorid": ("string", False, NO_DEFAULT, False, []),
        "name": ("string", False, NO_DEFAULT, False, []),
        "ram": ("integer", True, NO_DEFAULT, False, []),
        "vcpus": ("integer", True, NO_DEFAULT, False, []),
        "disk": ("integer", False, 0, False, []),
        "swap": ("integer", False, 0, False, []),
        "ephemeral": ("integer", False, 0, False, []),
        "rxtx_factor": ("number", False, 1.0, False, []),
        "extra_specs": ("map", False, NO_DEFAULT, True, []),
        "is_public": ("boolean", False, True, False, []),
    }
    assert set(Flavor.attributes_schema) == {"is_public", "extra_specs"}


def test_public_flavor_with_extra_specs() -> None:
    cloud = Cloud(admin=True, with_network=False)
    res, ctx = cloud.resource(
        Flavor, {"ram": 1024, "vcpus": 2, "disk": 10, "extra_specs": {"hw:cpu_policy": "shared"}}
    )
    run_action(res, "create")
    flavor = cloud.compute.get_flavor(str(ctx.physical_id))
    assert (flavor.name, flavor.ram, flavor.vcpus, flavor.disk) == (
        ctx.physical_resource_name(),
        1024,
        2,
        10,
    )
    assert res.get_attribute("is_public") is True
    assert res.get_attribute("extra_specs") == {"hw:cpu_policy": "shared"}
    assert res.find_existing() == ctx.physical_id

    run_action(res, "update", new_properties={**ctx.properties, "extra_specs": {"a": "1"}})
    assert res.get_attribute("extra_specs") == {"a": "1"}
    assert decide(res, {"ram": 2048, "vcpus": 2}).kind == "replace"

    run_action(res, "delete")
    with pytest.raises(NotFound):
        cloud.compute.get_flavor(str(ctx.physical_id))
    run_action(res, "delete")


def test_private_flavor_access_follows_tenants() -> None:
    cloud = Cloud(admin=True, with_network=False)
    res, ctx = cloud.resource(
        Flavor, {"name": "private", "flavorid": "p1", "ram": 512, "vcpus": 1, "is_public": False}
    )
    run_action(res, "create")
    assert ctx.physical_id == "p1"
    assert cloud.compute.get_flavor_access("p1") == [PROJECT]
    run_action(res, "update", new_properties={**ctx.properties, "tenants": ["other", "third"]})
    assert sorted(cloud.compute.get_flavor_access("p1")) == ["other", "third"]
    assert res.get_attribute("is_public") is False
