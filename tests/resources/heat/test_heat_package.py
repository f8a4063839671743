"""The OS::Heat plugins: found through the entry point, each in the file its name implies."""

from __future__ import annotations

import inspect
import pathlib
import re

from kiln.plugin import PluginRegistry
from kiln.resources.heat import test_resource as tr
from kiln.resources.heat.cloud_config import CloudConfig
from kiln.resources.heat.multipart_mime import MultipartMime
from kiln.resources.heat.none_resource import NoneResource
from kiln.resources.heat.random_string import RandomString
from kiln.resources.heat.resource_chain import ResourceChain
from kiln.resources.heat.resource_group import ResourceGroup
from kiln.resources.heat.software_config import SoftwareConfig
from kiln.resources.heat.stack import Stack
from kiln.resources.heat.structured_config import StructuredConfig
from kiln.resources.heat.value import Value

EXPECTED = {
    "OS::Heat::CloudConfig": CloudConfig,
    "OS::Heat::MultipartMime": MultipartMime,
    "OS::Heat::None": NoneResource,
    "OS::Heat::RandomString": RandomString,
    "OS::Heat::ResourceChain": ResourceChain,
    "OS::Heat::ResourceGroup": ResourceGroup,
    "OS::Heat::SoftwareConfig": SoftwareConfig,
    "OS::Heat::Stack": Stack,
    "OS::Heat::StructuredConfig": StructuredConfig,
    "OS::Heat::TestResource": tr.TestResource,
    "OS::Heat::Value": Value,
}
# Types whose file is not named after them, and why: ``none`` reads as Python's None.
PATH_EXCEPTIONS = {"OS::Heat::None": "heat/none_resource.py"}


def expected_path(type_name: str) -> str:
    """``OS::Heat::RandomString`` -> ``heat/random_string.py``."""
    if type_name in PATH_EXCEPTIONS:
        return PATH_EXCEPTIONS[type_name]
    _, service, name = type_name.split("::")
    # FloatingIPAssociation -> floating_ip_association: split acronyms from words too
    split = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    snake = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", split).lower()
    return f"{service.lower()}/{snake}.py"


def test_discover_finds_exactly_the_heat_types() -> None:
    registry = PluginRegistry.discover()
    assert [n for n in registry.names() if n.startswith("OS::Heat::")] == sorted(EXPECTED)
    for name, plugin in EXPECTED.items():
        assert registry.plugin(name) is plugin
        assert plugin.type_name == name


def test_each_type_lives_in_the_file_its_name_implies() -> None:
    registry = PluginRegistry.discover()
    root = pathlib.Path(inspect.getfile(PluginRegistry)).parents[1] / "resources"
    for name in registry.names():
        plugin = registry.plugin(name)
        assert plugin is not None
        assert pathlib.Path(inspect.getfile(plugin)) == root / expected_path(name), name


def test_path_rule() -> None:
    assert expected_path("OS::Heat::RandomString") == "heat/random_string.py"
    assert expected_path("OS::Neutron::FloatingIP") == "neutron/floating_ip.py"
    assert expected_path("OS::Heat::None") == "heat/none_resource.py"
