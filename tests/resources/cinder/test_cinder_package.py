"""The OS::Cinder plugins: registered from their package, each in the file its name implies."""

from __future__ import annotations

import kiln.resources.cinder
from kiln.plugin import PluginRegistry
from kiln.resources.cinder.encrypted_volume_type import CinderEncryptedVolumeType
from kiln.resources.cinder.volume import CinderVolume
from kiln.resources.cinder.volume_attachment import CinderVolumeAttachment


def test_the_package_registers_exactly_the_cinder_types() -> None:
    registry = PluginRegistry()
    registry.register_package(kiln.resources.cinder)
    assert registry.names() == [
        "OS::Cinder::EncryptedVolumeType",
        "OS::Cinder::Volume",
        "OS::Cinder::VolumeAttachment",
    ]
    assert registry.plugin("OS::Cinder::Volume") is CinderVolume
    assert registry.plugin("OS::Cinder::VolumeAttachment") is CinderVolumeAttachment
    assert registry.plugin("OS::Cinder::EncryptedVolumeType") is CinderEncryptedVolumeType
    described = registry.get("OS::Cinder::Volume")
    assert described is not None and described.supports_snapshot


def test_each_type_lives_in_the_file_its_name_implies() -> None:
    assert CinderVolume.__module__ == "kiln.resources.cinder.volume"
    assert CinderVolumeAttachment.__module__ == "kiln.resources.cinder.volume_attachment"
    assert CinderEncryptedVolumeType.__module__ == "kiln.resources.cinder.encrypted_volume_type"


def test_every_property_and_attribute_is_described() -> None:
    for plugin in (CinderVolume, CinderVolumeAttachment, CinderEncryptedVolumeType):
        assert all(s.description for s in plugin.properties_schema.values())
        assert all(a.description for a in plugin.attributes_schema.values())
