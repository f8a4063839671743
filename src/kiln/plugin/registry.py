"""The plugin registry: resource types by name.

Plugins mark themselves with ``@resource_type("OS::Heat::RandomString")``. A
registry is built at start-up by the composition root (``PluginRegistry.discover``
loads the modules named by the ``kiln.resources`` entry points, ours included)
and passed in; tests build their own. The registry is also the template layer's
``ResourceTypes`` catalogue, so validation checks types and properties.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any, TypeVar

from kiln.core.errors import KilnError
from kiln.plugin.resource import Resource
from kiln.schema.custom import CustomConstraints
from kiln.schema.properties import coerce_properties
from kiln.schema.resource_types import (
    NO_GLOBAL_ENVIRONMENT,
    GlobalEnvironment,
    ResourceType,
    SchemaType,
)

R = TypeVar("R", bound=type[Resource])

ENTRY_POINT_GROUP = "kiln.resources"


def resource_type(name: str) -> Callable[[R], R]:
    """Class decorator: this plugin implements resource type ``name``."""

    def mark(cls: R) -> R:
        cls.type_name = name
        return cls

    return mark


@dataclass(frozen=True)
class PluginType(SchemaType):
    """A plugin's schemas, plus its :meth:`Resource.validate` hook.

    The hook runs only when the schema found nothing and no value is still
    unknown (it checks values against each other, so it needs them all).
    """

    plugin: type[Resource] = Resource

    def validate_properties(
        self, values: Mapping[str, Any], unknown: Iterable[str], custom: CustomConstraints
    ) -> list[KilnError]:
        translate = self.plugin.translate
        values = translate(values)
        # an unknown value keeps being unknown under the name it moves to
        unknown = list(translate(dict.fromkeys(unknown, True)))
        errors = super().validate_properties(values, unknown, custom)
        if errors or unknown or self.properties is None:
            return errors
        typed, _ = coerce_properties(self.properties, values, custom)
        return self.plugin.validate(typed)


class PluginRegistry:
    """Resource plugins by type name, and the global environment over them.

    ``global_environment`` (type aliases and provider templates of the deployment's
    ``environment_dir``) is read by the composition root and handed in: the template
    layer layers every stack's registry over it.
    """

    checked = True

    def __init__(
        self,
        plugins: Iterable[type[Resource]] = (),
        *,
        global_environment: GlobalEnvironment = NO_GLOBAL_ENVIRONMENT,
    ) -> None:
        self.global_environment = global_environment
        self._plugins: dict[str, type[Resource]] = {}
        self._types: dict[str, ResourceType] = {}
        self._constraint_hooks: list[Callable[[CustomConstraints], None]] = []
        for plugin in plugins:
            self.register(plugin)

    def register(self, plugin: type[Resource]) -> None:
        if not plugin.type_name:
            raise ValueError(f"{plugin.__name__} has no type name (use @resource_type)")
        existing = self._plugins.get(plugin.type_name)
        if existing is not None and existing is not plugin:
            raise ValueError(
                f"{plugin.type_name} is implemented twice: {existing.__module__}."
                f"{existing.__name__} and {plugin.__module__}.{plugin.__name__}"
            )
        self._plugins[plugin.type_name] = plugin

    def register_module(self, module: ModuleType) -> None:
        """Register every plugin class defined in ``module``, and its custom constraints.

        A module may define ``register_constraints(custom)`` to add the custom
        constraint checkers its types use; :meth:`custom_constraints` calls it.
        """
        hook = getattr(module, "register_constraints", None)
        if callable(hook) and hook not in self._constraint_hooks:
            self._constraint_hooks.append(hook)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(value, Resource)
                and value.__module__ == module.__name__
                and value.type_name
            ):
                self.register(value)

    def register_package(self, package: ModuleType) -> None:
        """Register the plugins of a module, or of every module of a package."""
        self.register_module(package)
        for info in pkgutil.walk_packages(getattr(package, "__path__", []), f"{package.__name__}."):
            self.register_module(importlib.import_module(info.name))

    @classmethod
    def discover(
        cls,
        group: str = ENTRY_POINT_GROUP,
        *,
        global_environment: GlobalEnvironment = NO_GLOBAL_ENVIRONMENT,
    ) -> PluginRegistry:
        """Every plugin named by installed ``kiln.resources`` entry points."""
        registry = cls(global_environment=global_environment)
        for ep in sorted(entry_points(group=group), key=lambda e: e.name):
            target = ep.load()
            if isinstance(target, ModuleType):
                registry.register_package(target)
            elif inspect.isclass(target) and issubclass(target, Resource):
                registry.register(target)
            else:
                for name in getattr(target, "__all__", ()):
                    registry.register_module(importlib.import_module(name))
        return registry

    def custom_constraints(self, base: CustomConstraints) -> CustomConstraints:
        """``base`` plus every constraint the registered plugin modules add."""
        custom = base.copy()
        for hook in self._constraint_hooks:
            hook(custom)
        return custom

    def plugin(self, type_name: str) -> type[Resource] | None:
        return self._plugins.get(type_name)

    def names(self) -> list[str]:
        return sorted(self._plugins)

    # -- kiln.schema.resource_types.ResourceTypes ---------------------------------------
    def get(self, type_name: str) -> ResourceType | None:
        found = self._types.get(type_name)
        if found is not None:
            return found
        plugin = self._plugins.get(type_name)
        if plugin is None:
            return None
        described = PluginType(
            name=type_name,
            implementation=plugin.__name__,
            properties=None if plugin.accepts_any_properties else dict(plugin.properties_schema),
            attributes=None if plugin.dynamic_attributes else dict(plugin.attributes_schema),
            supports_snapshot=plugin.supports_snapshot,
            plugin=plugin,
        )
        self._types[type_name] = described
        return described
