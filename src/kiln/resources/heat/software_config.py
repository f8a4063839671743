"""OS::Heat::SoftwareConfig: an immutable piece of configuration for servers.

Also the base of the other software-config types (StructuredConfig,
CloudConfig, MultipartMime), which differ only in the properties they take and
in how they build the stored fields (:meth:`SoftwareConfig.config_fields`).
Create stores a software config ``{name, group, config, options, inputs,
outputs}`` and makes a new UUID its id (the physical id, what ``get_resource``
gives). Until the engine has a store of its own for software configs, the
fields live in the resource's data store, one key each (:data:`FIELDS`). No
property updates in place: any change is a new config. Imports: kiln.plugin,
kiln.schema, kiln.resources.heat._common.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from kiln.plugin import Resource, resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.heat._common import random_uuid
from kiln.schema.constraints import AllowedValues
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType

T = PropertyType
#: the data keys holding a stored software config
FIELDS = ("name", "group", "config", "options", "inputs", "outputs")
IO_TYPES = ("String", "Number", "CommaDelimitedList", "Json", "Boolean")
UNGROUPED = "Heat::Ungrouped"

GROUP = PropertySchema(
    T.STRING,
    "Name of the tool that applies the config on the server (the hook to run it).",
    default=UNGROUPED,
)
OPTIONS = PropertySchema(T.MAP, "Options for the tool that applies the config.")
_IO_TYPE = PropertySchema(
    T.STRING, "Type of the value.", default="String", constraints=(AllowedValues(IO_TYPES),)
)
INPUTS = PropertySchema(
    T.LIST,
    "The inputs the config expects.",
    schema={
        "name": PropertySchema(T.STRING, "Name of the input.", required=True),
        "description": PropertySchema(T.STRING, "Description of the input."),
        "type": _IO_TYPE,
        "default": PropertySchema(T.ANY, "Value of the input when a deployment gives none."),
        "replace_on_change": PropertySchema(
            T.BOOLEAN,
            "Replace the deployment, instead of updating it, when the input's value changes.",
            default=False,
        ),
    },
)
OUTPUTS = PropertySchema(
    T.LIST,
    "The outputs the config produces.",
    schema={
        "name": PropertySchema(T.STRING, "Name of the output.", required=True),
        "description": PropertySchema(T.STRING, "Description of the output."),
        "type": _IO_TYPE,
        "error_output": PropertySchema(
            T.BOOLEAN,
            "A value signalled for this output marks the deployment FAILED.",
            default=False,
        ),
    },
)


@resource_type("OS::Heat::SoftwareConfig")
class SoftwareConfig(Resource):
    """A software config: text for a tool (``group``) on a server, with inputs and outputs."""

    properties_schema = {
        "group": GROUP,
        "config": PropertySchema(T.STRING, "The configuration script or document."),
        "options": OPTIONS,
        "inputs": INPUTS,
        "outputs": OUTPUTS,
    }
    attributes_schema = {
        "config": AttributeSchema("The stored configuration.", type=T.STRING),
    }
    #: the ``config`` attribute when the config stored none
    empty_config: ClassVar[Any] = ""

    def config_fields(self) -> dict[str, Any]:
        """The config's fields other than ``name``, from the properties."""
        props = self.properties
        return {
            "group": props["group"],
            "config": props["config"],
            "options": props["options"] or {},
            "inputs": props["inputs"] or [],
            "outputs": props["outputs"] or [],
        }

    def stored_config(self) -> dict[str, Any] | None:
        """The stored software config (with its ``id``), None before create."""
        if not self.ctx.physical_id:
            return None
        return {"id": self.ctx.physical_id, **{k: self.ctx.data_get(k) for k in FIELDS}}

    def get_attribute(self, name: str) -> Any:
        if name != "config":
            return super().get_attribute(name)
        if not self.ctx.physical_id:
            return None
        config = self.ctx.data_get("config")
        return self.empty_config if config is None else config

    def _show(self) -> Any:
        return self.stored_config()

    def handle_create(self) -> Cookie:
        fields: Mapping[str, Any] = {
            "name": self.ctx.physical_resource_name(),
            **self.config_fields(),
        }
        for key, value in fields.items():
            self.ctx.data_set(key, value)
        self.ctx.set_physical_id(random_uuid(self.ctx.random))
        return None

    def handle_delete(self) -> Cookie:
        for key in FIELDS:
            self.ctx.data_delete(key)
        return None
