"""The seam between the template language and resource types (lives in kiln.schema so
that both the template layer and the plugin layer, which may not import each other,
can use it).

The template layer never imports plugins. It asks a :class:`ResourceTypes`
catalogue, passed in by whoever builds the stack, whether a type exists and
what it accepts. Until the plugin registry exists (a later issue), the command
line uses :class:`UncheckedTypes`, which accepts every type and every property
and says so; tests use a small catalogue of service-free types.
Imports: kiln.core, kiln.schema.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from kiln.core.errors import KilnError, StackValidationFailed
from kiln.schema.custom import CustomConstraints
from kiln.schema.properties import AttributeSchema, PropertySchema, coerce_properties


class ResourceType(Protocol):
    """What validation needs to know about one resource type."""

    @property
    def name(self) -> str: ...

    @property
    def implementation(self) -> str:
        """A short name of what implements the type (a class name)."""
        ...

    def validate_properties(
        self, values: Mapping[str, Any], unknown: Iterable[str], custom: CustomConstraints
    ) -> list[KilnError]:
        """Errors in the resolved properties; paths relative to the properties map.

        ``unknown`` names properties whose value depends on resources not yet
        created: they count as given, but their value is not checked.
        """
        ...

    def has_attribute(self, attribute: str) -> bool:
        """Whether ``get_attr`` may name this attribute (always, for dynamic types)."""
        ...

    @property
    def supports_snapshot(self) -> bool: ...

    @property
    def property_schemas(self) -> Mapping[str, PropertySchema] | None:
        """The declared properties, or None when the type accepts anything."""
        ...

    @property
    def attribute_schemas(self) -> Mapping[str, AttributeSchema] | None:
        """The declared attributes, or None when they are computed dynamically."""
        ...


@dataclass(frozen=True, eq=False)
class GlobalEnvironment:
    """The deployment's global environment (Heat's ``environment_dir``), as data.

    ``resource_registry`` is the merged and checked ``resource_registry`` of the
    directory's files (kiln.template.global_environment builds it); ``templates`` holds
    the text of the local templates its entries name, by location. Every stack's
    registry is layered over it. Compared by identity: one object per process.
    """

    resource_registry: Mapping[str, Any] = field(default_factory=dict)
    templates: Mapping[str, str] = field(default_factory=dict)


#: no global environment: stacks see only their own registry
NO_GLOBAL_ENVIRONMENT = GlobalEnvironment()


class ResourceTypes(Protocol):
    """A catalogue of resource types by name."""

    def get(self, type_name: str) -> ResourceType | None: ...

    @property
    def checked(self) -> bool:
        """False when the catalogue accepts any type without knowing it."""
        ...

    @property
    def global_environment(self) -> GlobalEnvironment:
        """The type aliases and provider templates the deployment adds to its types
        (Heat keeps both in its global environment's registry)."""
        ...


@dataclass(frozen=True)
class SchemaType:
    """A resource type described entirely by declarative schemas."""

    name: str
    implementation: str
    properties: Mapping[str, PropertySchema] | None = None
    attributes: Mapping[str, AttributeSchema] | None = None
    supports_snapshot: bool = False

    @property
    def property_schemas(self) -> Mapping[str, PropertySchema] | None:
        return self.properties

    @property
    def attribute_schemas(self) -> Mapping[str, AttributeSchema] | None:
        return self.attributes

    def validate_properties(
        self, values: Mapping[str, Any], unknown: Iterable[str], custom: CustomConstraints
    ) -> list[KilnError]:
        if self.properties is None:
            return []
        unknown_set = set(unknown)
        known_values = {k: v for k, v in values.items() if k not in unknown_set}
        schemas = {k: (_optional(s) if k in unknown_set else s) for k, s in self.properties.items()}
        _, errors = coerce_properties(schemas, known_values, custom)
        errors = [e for e in errors if not _about(e, unknown_set)]
        # A value not known yet still names a property: it must be declared.
        errors.extend(
            StackValidationFailed(f"Unknown Property {name}")
            for name in sorted(unknown_set)
            if name not in self.properties
        )
        return errors

    def has_attribute(self, attribute: str) -> bool:
        return self.attributes is None or attribute in self.attributes or attribute == "show"


def _optional(schema: PropertySchema) -> PropertySchema:
    from dataclasses import replace

    return replace(schema, required=False)


def _about(err: KilnError, names: set[str]) -> bool:
    return bool(err.path) and err.path[0] in names


@dataclass(frozen=True)
class UncheckedType:
    """A type nobody described: anything goes."""

    name: str
    implementation: str = "Unchecked"
    supports_snapshot: bool = True
    property_schemas: Mapping[str, PropertySchema] | None = None
    attribute_schemas: Mapping[str, AttributeSchema] | None = None

    def validate_properties(
        self, values: Mapping[str, Any], unknown: Iterable[str], custom: CustomConstraints
    ) -> list[KilnError]:
        return []

    def has_attribute(self, attribute: str) -> bool:
        return True


@dataclass(frozen=True)
class UncheckedTypes:
    """Accepts every type name (used until the plugin registry exists)."""

    checked: bool = False
    global_environment: GlobalEnvironment = NO_GLOBAL_ENVIRONMENT

    def get(self, type_name: str) -> ResourceType | None:
        return UncheckedType(type_name)


@dataclass(frozen=True)
class TypeCatalogue:
    """A fixed set of described types."""

    types: Mapping[str, ResourceType] = field(default_factory=dict)
    checked: bool = True
    global_environment: GlobalEnvironment = NO_GLOBAL_ENVIRONMENT

    def get(self, type_name: str) -> ResourceType | None:
        return self.types.get(type_name)
