"""OS::Heat::Stack: a stack made from a template string, local form only.

Heat creates this stack through the orchestration API, possibly in another
region or cloud; Kiln implements the local form: a child stack of this cloud
(kiln.resources.heat._child_stack), made from ``template`` (YAML or JSON text,
parsed by kiln.template.loader) with ``parameters`` and ``timeout``, inheriting
the parent's environment and files. A ``context`` naming a region or a
credential (another cloud) fails with "remote stacks are not supported": there
is no region this cloud could know itself by. Every property updates the child
in place, except a changed ``context.region_name``, which replaces. Attributes:
``stack_name`` and ``outputs`` (``get_attr: [s, outputs, KEY]``); ``get_resource``
gives the child stack's id.
Imports: kiln.plugin, kiln.schema, kiln.template, kiln.core.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.core.errors import KilnError
from kiln.plugin import ResourceFailure, resource_type
from kiln.resources.heat._child_stack import ChildStackResource
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType
from kiln.template.loader import load_template

REMOTE = "remote stacks are not supported"


def _context(properties: Mapping[str, Any]) -> Mapping[str, Any]:
    return properties.get("context") or {}


def remote_error(properties: Mapping[str, Any]) -> KilnError | None:
    """The error of a ``context`` that points away from this cloud, else None."""
    context = _context(properties)
    for key in ("region_name", "credential_secret_id"):
        if context.get(key):
            return ResourceFailure(
                f"{REMOTE} (context.{key}: {context[key]}); only a local nested stack is",
                path=("context", key),
            )
    return None


def parse_template(text: str) -> dict[str, Any]:
    """The ``template`` property as data; errors are the loader's, at path ``template``."""
    try:
        return dict(load_template(text, "template").data)
    except KilnError as err:
        raise err.within("template") from None


@resource_type("OS::Heat::Stack")
class Stack(ChildStackResource):
    """A nested stack of this cloud, made from a template given as text."""

    properties_schema = {
        "context": PropertySchema(
            PropertyType.MAP,
            "Where the stack lives (only this cloud is supported).",
            update_allowed=True,
            schema={
                "region_name": PropertySchema(
                    PropertyType.STRING, "The region of the stack (remote: not supported)."
                ),
                "credential_secret_id": PropertySchema(
                    PropertyType.STRING,
                    "A secret holding credentials of another cloud (not supported).",
                    update_allowed=True,
                ),
                "ca_cert": PropertySchema(
                    PropertyType.STRING,
                    "The CA certificate of the remote endpoint.",
                    update_allowed=True,
                ),
                "insecure": PropertySchema(
                    PropertyType.BOOLEAN,
                    "Do not verify the remote endpoint's certificate.",
                    default=False,
                    update_allowed=True,
                ),
            },
        ),
        "template": PropertySchema(
            PropertyType.STRING,
            "The template of the stack, as YAML or JSON text.",
            required=True,
            update_allowed=True,
        ),
        "timeout": PropertySchema(
            PropertyType.INTEGER,
            "Minutes the stack's creation may take.",
            update_allowed=True,
        ),
        "parameters": PropertySchema(
            PropertyType.MAP,
            "Parameter values of the stack.",
            default={},
            update_allowed=True,
        ),
    }
    attributes_schema = {
        "stack_name": AttributeSchema("The name of the stack.", type=PropertyType.STRING),
        "outputs": AttributeSchema(
            "Output name -> value of the stack's outputs.", type=PropertyType.MAP
        ),
    }

    @classmethod
    def validate(cls, properties: Mapping[str, Any]) -> list[KilnError]:
        errors: list[KilnError] = []
        remote = remote_error(properties)
        if remote is not None:
            errors.append(remote)
        try:
            parse_template(properties["template"])
        except KilnError as err:
            errors.append(err)
        return errors

    def child_template(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        return parse_template(properties["template"])

    def child_parameters(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        return dict(properties.get("parameters") or {})

    def child_timeout(self, properties: Mapping[str, Any]) -> int | None:
        timeout = properties.get("timeout")
        return int(timeout) if timeout is not None else None

    def needs_replace(self, new_properties: Mapping[str, Any]) -> bool:
        old = _context(self.properties).get("region_name")
        return bool(old != _context(new_properties).get("region_name"))

    def get_attribute(self, name: str) -> Any:
        stack_id = self.ctx.physical_id
        if stack_id is None or name == "show":
            return None
        if name == "stack_name":
            # The engine names a child as the resource's physical name.
            return self.ctx.physical_resource_name()
        if name == "outputs":
            return self.stacks().outputs(stack_id)
        return super().get_attribute(name)
