"""Template resources (provider templates), reference section 7.

A resource whose type resolves to a template file becomes a nested stack: its
properties are the provider's parameters, its attributes the provider's
outputs. The provider is validated as a stack of its own, one level deeper,
with the child environment the parent hands down.
Imports: kiln.core, kiln.schema, kiln.template.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kiln.core.errors import KilnError, RequestLimitExceeded, StackValidationFailed
from kiln.schema.properties import AttributeSchema, PropertySchema, coerce_properties
from kiln.template.functions.base import ABSENT, resolve
from kiln.template.parameters import NO_DEFAULT, parameter_property_schema
from kiln.template.resources import ResourceEntry
from kiln.template.template import Template

if TYPE_CHECKING:
    from kiln.template.stack import StackDefinition

NESTED = "<nested_stack>"


def _facade_type_name(schema: PropertySchema) -> str:
    return str(schema.type)


class ProviderResource:
    """A resource implemented by a template: its interface and its nested stack."""

    implementation = "TemplateResource"
    supports_snapshot = True

    def __init__(
        self,
        stack: StackDefinition,
        entry: ResourceEntry,
        type_name: str,
        location: str,
        *,
        system: bool = False,
    ) -> None:
        self.stack = stack
        self.entry = entry
        self.type_name = type_name
        self.location = location
        #: the mapping to the template is the global environment's (its templates apply)
        self.system = system
        self.nested: StackDefinition | None = None
        self.template = self._load()
        self.property_schemas: dict[str, PropertySchema] = {}
        self.attribute_names: list[str] = []
        self.nested_parameters: dict[str, Any] = {}
        if self.template is not None:
            self._derive_interface(self.template)

    # -- loading ----------------------------------------------------------------
    def _load(self) -> Template | None:
        at = self.entry.field_path("type")
        key = self.stack.file_key(self.location)
        if key is not None:
            self.location = key
        content = None if key is None else self.stack.files[key]
        if content is None and self.system:
            # 7.1: the files map first; then, for the global environment's own
            # mappings only, the local templates read with it at start-up.
            content = self.stack.types.global_environment.templates.get(self.location)
        if content is None:
            why = "not present in the files map"
            if self.system:
                why += " and not read with the global environment"
            self.stack.errors.append(
                StackValidationFailed(
                    f'Could not fetch remote template "{self.location}": {why}', path=at
                )
            )
            return None
        if self.stack.depth + 1 > self.stack.limits.max_nested_stack_depth:
            self.stack.errors.append(
                RequestLimitExceeded(
                    "Request limit exceeded: Recursion depth exceeds "
                    f"{self.stack.limits.max_nested_stack_depth}.",
                    path=at,
                )
            )
            return None
        try:
            if isinstance(content, str | bytes):
                return Template.load(content, name=self.location)
            return Template.from_data(content, name=self.location)
        except KilnError as err:
            self.stack.errors.append(err)
            return None

    # -- interface (7.2, 7.7) --------------------------------------------------------
    def _derive_interface(self, template: Template) -> None:
        from kiln.template.parameters import parse_parameter_schemas

        schemas, errors = parse_parameter_schemas(template.section("parameters"), template.version)
        self._nested_errors(errors, template)
        defaults = self.stack.environment.parameter_defaults
        for name, schema in schemas.items():
            prop = parameter_property_schema(schema)
            if name in defaults and defaults[name] is not None and prop.required:
                from dataclasses import replace

                prop = replace(prop, required=False)
            self.property_schemas[name] = prop
        outputs = template.section("outputs") or {}
        if isinstance(outputs, dict):
            self.attribute_names = [*outputs, "show"]
        self._has_default = {n: s.default is not NO_DEFAULT for n, s in schemas.items()}

    @property
    def total_resources(self) -> int:
        nested = self.nested
        return 0 if nested is None else nested.total_resource_count

    # -- TypedResource ---------------------------------------------------------------
    def has_attribute(self, attribute: str) -> bool:
        return True  # names are checked when resolved (7.4)

    def validate_properties(
        self, values: Mapping[str, Any], unknown: Iterable[str]
    ) -> list[KilnError]:
        if self.template is None:
            return []
        unknown = set(unknown)
        schemas = {
            n: (_optional(s) if n in unknown else s) for n, s in self.property_schemas.items()
        }
        given = {k: v for k, v in values.items() if k not in unknown}
        _, errors = coerce_properties(schemas, given, self.stack.custom)
        errors.extend(self._facade_errors())
        self.nested_parameters = nested_parameters(
            {k: v for k, v in given.items() if k in self.property_schemas and v is not None}
        )
        self._build_nested()
        return errors

    def _build_nested(self) -> None:
        from kiln.template.stack import Facade, StackDefinition, StackIdentity

        assert self.template is not None
        stack = self.stack
        env = stack.environment.child(
            self.entry.name, dict(self.nested_parameters), exclude_type=self.type_name
        )
        facade = Facade(
            metadata=_resolved_or(stack, self.entry.fields.get("metadata"), {}),
            deletion_policy=str(self.entry.fields.get("deletion_policy") or "Delete"),
            update_policy=_resolved_or(stack, self.entry.fields.get("update_policy"), {}),
        )
        self.nested = StackDefinition(
            self.template,
            env,
            stack.files,
            identity=StackIdentity(
                name=f"{stack.identity.name}-{self.entry.name}",
                project_id=stack.identity.project_id,
            ),
            types=stack.types,
            custom=stack.custom,
            check_values=False,
            facade=facade,
            depth=stack.depth + 1,
            limits=stack.limits,
            zones=stack.zones,
        )
        self._nested_errors(self.nested.errors, None)

    def _nested_errors(self, errors: list[KilnError], template: Template | None) -> None:
        for err in errors:
            if template is not None:
                err.locate(template.locate)
            err.within(*self.entry.path[:-1], f"{self.entry.name}{NESTED}")
            self.stack.errors.append(err)

    def _facade_errors(self) -> list[KilnError]:
        """7.6: a provider that overrides a built-in type must be compatible with it."""
        stack = self.stack
        child = stack.environment.child(self.entry.name, {}, exclude_type=self.type_name)
        resolution = child.registry.resolve(
            self.type_name, self.entry.name, lambda t: stack.types.get(t) is not None
        )
        if resolution.kind != "builtin":
            return []
        facade = stack.types.get(resolution.target)
        if facade is None or facade.property_schemas is None:
            return []
        errors: list[KilnError] = []
        name = self.type_name
        for prop, schema in facade.property_schemas.items():
            mine = self.property_schemas.get(prop)
            if mine is None:
                if schema.required:
                    errors.append(
                        _facade(f"Required property {prop} for facade {name} missing in provider")
                    )
                continue
            if not _compatible(schema, mine):
                errors.append(
                    _facade(
                        f"Property {prop} type mismatch between facade {name} "
                        f"({schema.type}) and provider ({mine.type})"
                    )
                )
        for prop, has_default in self._has_default.items():
            if not has_default and prop not in facade.property_schemas:
                errors.append(
                    _facade(f"Provider requires property {prop} unknown in facade {name}")
                )
        if facade.attribute_schemas is not None:
            for attr in [*facade.attribute_schemas, "show"]:
                if attr not in self.attribute_names:
                    errors.append(
                        _facade(f"Attribute {attr} for facade {name} missing in provider")
                    )
        return errors


def _facade(message: str) -> KilnError:
    return StackValidationFailed(message)


def _compatible(facade: PropertySchema, provider: PropertySchema) -> bool:
    f, p = str(facade.type), str(provider.type)
    if f == "Any" or f == p:
        return True
    return f == "Integer" and p == "Number"


def _optional(schema: PropertySchema) -> PropertySchema:
    from dataclasses import replace

    return replace(schema, required=False)


def _resolved_or(stack: StackDefinition, raw: Any, default: Any) -> Any:
    if raw is None:
        return default
    try:
        value = resolve(stack.parser.parse(raw, ()), stack)
    except KilnError:
        return default
    return default if value is ABSENT else value


def nested_parameters(values: Mapping[str, Any]) -> dict[str, Any]:
    """Property values as nested-stack parameters (7.3)."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, list):
            out[key] = ",".join(_list_item(i, v) for i, v in enumerate(value))
        else:
            out[key] = value
    return out


def _list_item(index: int, value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        return ",".join(f".member.{index}.{k}={v}" for k, v in value.items())
    if isinstance(value, str):
        return value
    return json.dumps(value) if isinstance(value, list) else str(value)


@dataclass(frozen=True)
class ProviderInterface:
    """What a provider template offers as a resource type (7.2): for the type catalogue."""

    description: str
    properties: dict[str, PropertySchema]
    attributes: dict[str, AttributeSchema]


def provider_interface(text: str, location: str) -> ProviderInterface:
    """Properties (the parameters) and attributes (the outputs, and ``show``) of a
    provider template; raises a KilnError when it is not a template."""
    from kiln.template.parameters import parse_parameter_schemas

    template = Template.load(text, name=location)
    schemas, _ = parse_parameter_schemas(template.section("parameters"), template.version)
    outputs = template.section("outputs")
    attributes = {
        str(name): AttributeSchema(_described(body))
        for name, body in (outputs.items() if isinstance(outputs, dict) else ())
    }
    attributes.setdefault("show", AttributeSchema("Everything known about the resource."))
    return ProviderInterface(
        description=_described(template.data),
        properties={n: parameter_property_schema(s) for n, s in schemas.items()},
        attributes=attributes,
    )


def _described(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    found = body.get("description", body.get("Description"))
    return found.strip() if isinstance(found, str) else ""
