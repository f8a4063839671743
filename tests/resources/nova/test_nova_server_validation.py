"""OS::Nova::Server: the schema table and the checks across properties."""

from __future__ import annotations

from typing import Any

import pytest
from nova_schema_support import NO_DEFAULT, allowed, custom, table

from kiln.core.errors import StackValidationFailed
from kiln.resources.nova.server import Server
from kiln.testing.plugin_context import typed_properties


def test_server_schema_matches_the_reference() -> None:
    rows = table(Server.properties_schema)
    assert len([r for r in rows if "." not in r and "[" not in r]) == 25
    assert rows["flavor"] == ("string", True, NO_DEFAULT, True, [custom("nova.flavor")])
    assert rows["image"] == ("string", False, NO_DEFAULT, True, [custom("glance.image")])
    assert rows["flavor_update_policy"] == (
        "string",
        False,
        "RESIZE",
        True,
        [allowed("RESIZE", "REPLACE")],
    )
    assert rows["image_update_policy"][2] == "REBUILD"
    assert rows["user_data_format"] == (
        "string",
        False,
        "HEAT_CFNTOOLS",
        False,
        [allowed("HEAT_CFNTOOLS", "RAW", "SOFTWARE_CONFIG")],
    )
    assert rows["user_data_update_policy"][2:4] == ("REPLACE", True)
    assert rows["software_config_transport"][2:4] == ("POLL_SERVER_CFN", True)
    assert rows["networks"][3] is True
    assert rows["networks[].allocate_network"] == (
        "string",
        False,
        NO_DEFAULT,
        True,
        [allowed("none", "auto")],
    )
    assert rows["networks[].port_extra_properties.binding:vnic_type"][2] == "normal"
    assert rows["networks[].port_extra_properties.mac_address"][3] is False
    assert rows["networks[].floating_ip"][3] is False
    assert rows["block_device_mapping[].device_name"][1] is True
    assert rows["block_device_mapping_v2[].ephemeral_size"][4] == [{"range": {"min": 1}}]
    assert rows["security_groups"] == ("list", False, [], False, [])
    assert rows["metadata"] == ("map", False, {}, True, [])
    assert rows["user_data"] == ("string", False, "", True, [])
    for fixed in (
        "key_name",
        "availability_zone",
        "scheduler_hints",
        "config_drive",
        "diskConfig",
        "reservation_id",
        "personality",
        "block_device_mapping",
    ):
        assert rows[fixed][3] is False, fixed
    for updatable in ("name", "admin_pass", "tags", "deployment_swift_data"):
        assert rows[updatable][3] is True, updatable
    assert set(Server.attributes_schema) == {
        "name",
        "addresses",
        "networks",
        "first_address",
        "instance_name",
        "accessIPv4",
        "accessIPv6",
        "console_urls",
        "tags",
        "os_collect_config",
    }
    assert Server.physical_name_limit == 53


def errors_of(**props: Any) -> list[str]:
    typed = typed_properties(Server, {"flavor": "m1.tiny", **props})
    return [e.message for e in Server.validate(typed)]


def test_a_server_needs_something_to_boot() -> None:
    assert errors_of(image="cirros") == []
    assert any("bootable" in e for e in errors_of())
    assert errors_of(block_device_mapping=[{"device_name": "vda", "volume_id": "v"}]) == []
    assert errors_of(block_device_mapping_v2=[{"volume_id": "v", "boot_index": 0}]) == []


@pytest.mark.parametrize(
    ("props", "fragment"),
    [
        (
            {
                "block_device_mapping": [{"device_name": "vda", "volume_id": "v"}],
                "block_device_mapping_v2": [{"volume_id": "v"}],
            },
            "at the same time",
        ),
        ({"block_device_mapping": [{"device_name": "vda"}]}, "Exactly one"),
        ({"block_device_mapping_v2": [{"volume_id": "v", "image": "i"}]}, "Exactly one"),
        (
            {
                "block_device_mapping_v2": [
                    {"volume_id": "a", "boot_index": 0},
                    {"volume_id": "b", "boot_index": 0},
                ]
            },
            "boot_index 0",
        ),
        ({"image": "cirros", "networks": [{"fixed_ip": "10.0.0.3"}]}, "should be set"),
        (
            {"image": "cirros", "networks": [{"allocate_network": "auto", "network": "n"}]},
            "allocate_network",
        ),
        (
            {"image": "cirros", "networks": [{"allocate_network": "auto"}, {"network": "n"}]},
            "allocate_network",
        ),
        ({"image": "cirros", "networks": [{"port": "p", "fixed_ip": "10.0.0.3"}]}, "fixed_ip"),
        ({"image": "cirros", "networks": [{"network": "n", "floating_ip": "f"}]}, "floating_ip"),
        (
            {"image": "cirros", "networks": [{"port": "p"}], "security_groups": ["default"]},
            "security_groups",
        ),
    ],
)
def test_invalid_combinations(props: dict[str, Any], fragment: str) -> None:
    errors = errors_of(**props)
    assert any(fragment in e for e in errors), errors


def test_hidden_uuid_counts_as_a_network() -> None:
    assert errors_of(image="cirros", networks=[{"uuid": "private"}]) == []
    assert isinstance(
        Server.validate(typed_properties(Server, {"flavor": "f"}))[0], StackValidationFailed
    )
