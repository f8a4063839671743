"""OS::Heat::CloudConfig: a #cloud-config document stored as a software config."""

from __future__ import annotations

import uuid

import yaml
from heat_schema_support import NO_DEFAULT, table, undocumented

from kiln.resources.heat.cloud_config import CloudConfig
from kiln.testing.plugin_context import decide, fake_resource, run_action

DOCUMENT = {"packages": ["nginx"], "runcmd": [["systemctl", "start", "nginx"]], "a": {"b": 1}}


def test_schema_matches_the_reference() -> None:
    assert table(CloudConfig.properties_schema) == {
        "cloud_config": ("map", False, NO_DEFAULT, False, []),
    }
    assert list(CloudConfig.attributes_schema) == ["config"]
    assert undocumented(CloudConfig) == []


def test_config_is_the_header_then_block_yaml() -> None:
    res, ctx = fake_resource(CloudConfig, {"cloud_config": DOCUMENT})
    run_action(res, "create")
    config = res.get_attribute("config")
    assert config == (
        "#cloud-config\n"
        "a:\n  b: 1\n"
        "packages:\n- nginx\n"
        "runcmd:\n- - systemctl\n  - start\n  - nginx\n"
    )
    assert yaml.safe_load(config) == DOCUMENT
    assert ctx.data["group"] == "Heat::Ungrouped"
    assert (ctx.data["options"], ctx.data["inputs"], ctx.data["outputs"]) == ({}, [], [])
    assert ctx.physical_id is not None and uuid.UUID(ctx.physical_id)
    assert res.reference_id() == ctx.physical_id


def test_unset_document_is_an_empty_map() -> None:
    res, _ = fake_resource(CloudConfig)
    run_action(res, "create")
    assert res.get_attribute("config") == "#cloud-config\n{}\n"


def test_any_change_replaces() -> None:
    res, _ = fake_resource(CloudConfig, {"cloud_config": DOCUMENT})
    assert decide(res, {"cloud_config": {**DOCUMENT, "a": 2}}).kind == "replace"
    assert decide(res, {"cloud_config": DOCUMENT}).kind == "unchanged"
