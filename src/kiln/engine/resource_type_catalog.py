"""The resource types the engine's plugins implement, as the API shows them
(heat-api.md 2.7, 3.12): the filtered list, one type's schema, and a provider
template that wraps a type (each property a parameter, each attribute an output).

A plugin may declare ``support_status`` (a :class:`SupportStatus`); without one
it is SUPPORTED with no version. HIDDEN types, properties and attributes are
never shown. Whether the caller may use a type is the API's policy question.

The global environment adds types, as Heat's does: a type it maps to a provider
template is listed and shown from that template (its parameters and outputs); a plain
alias (``OS::Ceilometer::Alarm`` -> ``OS::Aodh::Alarm``) is not listed, as in Heat,
but shows (and generates) the schema of the type it resolves to.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Any

from kiln.core.errors import KilnError, NotSupported
from kiln.db.errors import NotFound
from kiln.engine.heat_errors import Invalid
from kiln.plugin.registry import PluginRegistry
from kiln.plugin.resource import Resource
from kiln.schema.constraints import Constraint
from kiln.schema.guarded_regex import RegexStopped, match_within
from kiln.schema.properties import (
    SUPPORT_STATUSES,
    AttributeSchema,
    PropertySchema,
    PropertyType,
    SupportStatus,
)
from kiln.template.global_environment import resolve_global_type, template_types
from kiln.template.provider import provider_interface

HIDDEN = "HIDDEN"
#: Every resource has ``show`` (Heat's base attribute) even when its plugin does not list it.
SHOW = AttributeSchema("Everything known about the resource, as one map.", PropertyType.MAP)
#: How long a caller's ``name`` pattern may take against one type name (a pattern that
#: takes longer lists nothing; the first use also compiles the guarded twin).
NAME_MATCH_SECONDS = 1.0

HOT_VERSION = "2016-10-14"
CFN_VERSION = "2012-12-12"

_PARAMETER_TYPES = {
    PropertyType.STRING: ("string", "String"),
    PropertyType.INTEGER: ("number", "Number"),
    PropertyType.NUMBER: ("number", "Number"),
    PropertyType.BOOLEAN: ("boolean", "Boolean"),
    PropertyType.LIST: ("comma_delimited_list", "CommaDelimitedList"),
    PropertyType.MAP: ("json", "Json"),
    PropertyType.ANY: ("json", "Json"),
}
# CFN parameter keys for each HOT constraint key and its bounds.
_CFN_CONSTRAINTS = {
    "length": {"min": "MinLength", "max": "MaxLength"},
    "range": {"min": "MinValue", "max": "MaxValue"},
}


def support_status(plugin: type[Resource]) -> SupportStatus:
    found = getattr(plugin, "support_status", None)
    return found if isinstance(found, SupportStatus) else SupportStatus()


def description(plugin: type[Resource]) -> str:
    """The plugin's own docstring (not one inherited from a base class)."""
    return inspect.cleandoc(plugin.__doc__) if plugin.__doc__ else ""


@dataclass(frozen=True)
class _Described:
    """One type as the catalogue shows it, from a plugin or a provider template."""

    implementation: str  # the resource's name in a generated template
    description: str
    properties: dict[str, PropertySchema]
    attributes: dict[str, AttributeSchema]
    support: SupportStatus = field(default_factory=SupportStatus)


def _from_plugin(plugin: type[Resource]) -> _Described:
    return _Described(
        plugin.__name__,
        description(plugin),
        _shown_properties(plugin),
        _shown_attributes(plugin),
        support_status(plugin),
    )


def _from_template(registry: PluginRegistry, type_name: str, location: str) -> _Described:
    text = registry.global_environment.templates.get(location)
    if text is None:
        raise NotFound("Resource Type", type_name)
    try:
        found = provider_interface(text, location)
    except KilnError:
        raise NotFound("Resource Type", type_name) from None
    return _Described("TemplateResource", found.description, found.properties, found.attributes)


def _described(registry: PluginRegistry, type_name: str) -> _Described:
    """The type's plugin, else what the global environment makes of the name."""
    plugin = registry.plugin(type_name)
    if plugin is None:
        resolution = resolve_global_type(
            registry.global_environment, type_name, lambda t: registry.plugin(t) is not None
        )
        if resolution.kind == "template":
            return _from_template(registry, type_name, resolution.target)
        if resolution.kind == "builtin":
            plugin = registry.plugin(resolution.target)
    if plugin is None:
        raise NotFound("Resource Type", type_name)
    if support_status(plugin).status == HIDDEN:
        raise NotSupported(f"{type_name} is not supported.")
    return _from_plugin(plugin)


def _listed(registry: PluginRegistry) -> list[tuple[str, _Described]]:
    """Every plugin type, and every type the global environment maps to a template."""
    found: dict[str, _Described] = {}
    for type_name in registry.names():
        plugin = registry.plugin(type_name)
        assert plugin is not None
        found[type_name] = _from_plugin(plugin)
    for type_name in template_types(registry.global_environment):
        if type_name not in found:
            try:
                found[type_name] = _described(registry, type_name)
            except (NotFound, NotSupported):
                continue  # its template was not read: not usable, not listed
    return sorted(found.items())


# -- list -----------------------------------------------------------------------------------------
def list_types(
    registry: PluginRegistry,
    *,
    name: str | None = None,
    status: str | None = None,
    version: str | None = None,
) -> list[tuple[str, str]]:
    """(type, description) of every listed type; a bad ``name`` pattern lists none."""
    if status is not None and status not in SUPPORT_STATUSES:
        raise Invalid(
            "Data supplied was not valid: Invalid support status and should be one of "
            f"{', '.join(SUPPORT_STATUSES)}"
        )
    pattern = None
    if name is not None:
        try:
            pattern = re.compile(name)
        except (re.error, RecursionError, OverflowError):
            return []
    found = []
    for type_name, described in _listed(registry):
        support = described.support
        if support.status == HIDDEN:
            continue
        if status is not None and support.status != status:
            continue
        if version is not None and support.version != version:
            continue
        if pattern is not None:
            try:
                if not match_within(pattern, type_name, NAME_MATCH_SECONDS):
                    continue
            except RegexStopped:
                return []
        found.append((type_name, described.description))
    return found


# -- schema -------------------------------------------------------------------------------------
def _shown_properties(plugin: type[Resource]) -> dict[str, PropertySchema]:
    if plugin.accepts_any_properties:
        return {}
    return {n: s for n, s in plugin.properties_schema.items() if s.support_status.status != HIDDEN}


def _shown_attributes(plugin: type[Resource]) -> dict[str, AttributeSchema]:
    shown = {n: a for n, a in plugin.attributes_schema.items() if a.support_status.status != HIDDEN}
    shown.setdefault("show", SHOW)
    return shown


def schema_document(
    registry: PluginRegistry, type_name: str, *, with_description: bool = False
) -> dict[str, Any]:
    """heat-api.md 3.12: properties, attributes and support status of one type."""
    described = _described(registry, type_name)
    document: dict[str, Any] = {
        "resource_type": type_name,
        "properties": {n: s.to_dict() for n, s in described.properties.items()},
        "attributes": {n: a.to_dict() for n, a in described.attributes.items()},
        "support_status": described.support.to_dict(),
    }
    if with_description:
        document["description"] = described.description
    return document


# -- generated provider template ---------------------------------------------------------------
def _parameter_type(schema: PropertySchema, hot: bool) -> str:
    kind = schema.type
    item = schema.item_schema
    if kind is PropertyType.LIST and item is not None and item.type is PropertyType.MAP:
        kind = PropertyType.MAP  # a list of maps cannot travel as comma-delimited text
    hot_name, cfn_name = _PARAMETER_TYPES[PropertyType(kind)]
    return hot_name if hot else cfn_name


def _hot_parameter(schema: PropertySchema) -> dict[str, Any]:
    parameter: dict[str, Any] = {"type": _parameter_type(schema, True)}
    if schema.description:
        parameter["description"] = schema.description
    if schema.has_default:
        parameter["default"] = schema.default
    # modulo needs a newer template version than the generated one
    constraints = [c.to_dict() for c in schema.constraints if c.key != "modulo"]
    if constraints:
        parameter["constraints"] = constraints
    return parameter


def _cfn_parameter(schema: PropertySchema) -> dict[str, Any]:
    parameter: dict[str, Any] = {"Type": _parameter_type(schema, False)}
    if schema.description:
        parameter["Description"] = schema.description
    if schema.has_default:
        parameter["Default"] = schema.default
    described = []
    for constraint in schema.constraints:
        if _cfn_constraint(constraint, parameter) and constraint.description:
            described.append(constraint.description)
    if described:
        parameter["ConstraintDescription"] = " ".join(described)
    return parameter


def _cfn_constraint(constraint: Constraint, parameter: dict[str, Any]) -> bool:
    """Add the CFN spelling of ``constraint``; False when CFN has none (custom, modulo)."""
    argument = constraint.to_dict()[constraint.key]
    if constraint.key in _CFN_CONSTRAINTS:
        for bound, key in _CFN_CONSTRAINTS[constraint.key].items():
            if bound in argument:
                parameter[key] = argument[bound]
        return True
    if constraint.key == "allowed_values":
        parameter["AllowedValues"] = argument
        return True
    if constraint.key == "allowed_pattern":
        parameter["AllowedPattern"] = argument
        return True
    return False


def generate_template(
    registry: PluginRegistry, type_name: str, template_type: str
) -> dict[str, Any]:
    """A template with one resource of the type (named after its plugin class)."""
    described = _described(registry, type_name)
    resource = described.implementation
    summary = f"Initial template of {resource}"
    properties = described.properties
    attributes = described.attributes
    if template_type == "hot":
        return {
            "heat_template_version": HOT_VERSION,
            "description": summary,
            "parameters": {n: _hot_parameter(s) for n, s in properties.items()},
            "resources": {
                resource: {
                    "type": type_name,
                    "properties": {n: {"get_param": n} for n in properties},
                }
            },
            "outputs": {
                **{
                    n: {"description": a.description, "value": {"get_attr": [resource, n]}}
                    for n, a in attributes.items()
                },
                "OS::stack_id": {"value": {"get_resource": resource}},
            },
        }
    return {
        "HeatTemplateFormatVersion": CFN_VERSION,
        "Description": summary,
        "Parameters": {n: _cfn_parameter(s) for n, s in properties.items()},
        "Resources": {
            resource: {"Type": type_name, "Properties": {n: {"Ref": n} for n in properties}}
        },
        "Outputs": {
            **{
                n: {"Description": a.description, "Value": {"Fn::GetAtt": [resource, n]}}
                for n, a in attributes.items()
            },
            "OS::stack_id": {"Value": {"Ref": resource}},
        },
    }
