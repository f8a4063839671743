"""Service-free resource types for template tests, and an offline "created" state.

The template conformance cases (reference section 9) use only ``OS::Heat::None``
and ``OS::Heat::Value``. Until the plugin registry exists, tests describe them
here with the same declarative schemas plugins will use, and
:class:`CreatedState` plays what creation would give: ``Value`` echoes its
``value`` property as the ``value`` attribute; ``None`` has null attributes.
"""

from __future__ import annotations

import uuid
from typing import Any

from kiln.schema.properties import AttributeSchema, PropertySchema
from kiln.schema.resource_types import SchemaType, TypeCatalogue
from kiln.template.functions.base import resolve_top
from kiln.template.functions.references import select_path
from kiln.template.stack import StackDefinition

NONE_TYPE = SchemaType(name="OS::Heat::None", implementation="NoneResource")
VALUE_TYPE = SchemaType(
    name="OS::Heat::Value",
    implementation="Value",
    properties={
        "value": PropertySchema(
            type="Any",
            required=True,
            update_allowed=True,
            description="The expression to evaluate.",
        ),
        "type": PropertySchema(
            type="String", update_allowed=True, description="The type of the value."
        ),
    },
    attributes={"value": AttributeSchema(description="The resulting value.")},
)
HEAT_TEST_TYPES = TypeCatalogue({t.name: t for t in (NONE_TYPE, VALUE_TYPE)})


class CreatedState:
    """Resource values as if every resource of a stack had been created in order."""

    def __init__(self) -> None:
        self.references: dict[str, Any] = {}
        self.values: dict[str, dict[str, Any]] = {}

    def create_all(self, stack: StackDefinition) -> None:
        """Walk the creation order, giving each resource its reference and attributes."""
        stack.state = self
        for name in stack.creation_order():
            definition = stack.resources[name]
            typed = stack.typed.get(name)
            implementation = typed.implementation if typed is not None else ""
            props = resolve_top(definition.properties, stack) or {}
            if implementation == "Value":
                self.values[name] = {"value": props.get("value")}
            else:
                self.values[name] = {}
            self.references[name] = str(uuid.uuid4())

    def reference(self, name: str) -> Any | None:
        return self.references.get(name)

    def attribute(self, name: str, attribute: str, path: tuple[Any, ...]) -> Any:
        return select_path(self.values.get(name, {}).get(attribute), path)

    def attributes(self, name: str) -> Any:
        if name not in self.values:
            return None
        return dict(self.values[name])
