"""The OS::Glance plugins: registered from their package, in the file the name implies."""

from __future__ import annotations

import kiln.resources.glance
from kiln.plugin import PluginRegistry
from kiln.resources.glance.web_image import GlanceWebImage


def test_the_package_registers_the_web_image() -> None:
    registry = PluginRegistry()
    registry.register_package(kiln.resources.glance)
    assert registry.names() == ["OS::Glance::WebImage"]
    assert registry.plugin("OS::Glance::WebImage") is GlanceWebImage
    assert GlanceWebImage.__module__ == "kiln.resources.glance.web_image"
    assert all(s.description for s in GlanceWebImage.properties_schema.values())
