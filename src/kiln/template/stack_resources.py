"""Building a stack's resources: enabled set, parsed definitions, types, graph.

The steps run in a fixed order so each can rely on the previous one: select
the enabled resources (structure and conditions), then parse every field,
resolve types through the environment's registry, validate references and
properties, and finally build the dependency graph. Errors are collected on
the stack, never raised. Imports: kiln.core, kiln.graph, kiln.template.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from kiln.core.errors import (
    CircularDependencyException,
    InvalidExternalResourceDependency,
    InvalidTemplateReference,
    KilnError,
    StackValidationFailed,
)
from kiln.graph.dag import Graph
from kiln.template.functions.base import (
    ABSENT,
    Function,
    dependencies,
    resolve,
    validate_functions,
)
from kiln.template.implicit_dependencies import implicit_requires
from kiln.template.named_resources import with_named_attributes
from kiln.template.resources import (
    ResourceDefinition,
    ResourceEntry,
    canonical_deletion_policy,
    check_resource_entry,
)

if TYPE_CHECKING:
    from kiln.template.stack import StackDefinition

PROPERTY_ERROR = "Property error"


class TypedResource(Protocol):
    """What a resolved type (built-in or template resource) offers to validation."""

    @property
    def implementation(self) -> str: ...

    @property
    def supports_snapshot(self) -> bool: ...

    def has_attribute(self, attribute: str) -> bool: ...

    def validate_properties(
        self, values: Mapping[str, Any], unknown: Iterable[str]
    ) -> list[KilnError]: ...


class BuiltinResource:
    """A type from the resource-type catalogue."""

    def __init__(self, stack: StackDefinition, type_name: str) -> None:
        found = stack.types.get(type_name)
        assert found is not None
        self.type = found
        self._custom = stack.custom

    @property
    def implementation(self) -> str:
        return self.type.implementation

    @property
    def supports_snapshot(self) -> bool:
        return self.type.supports_snapshot

    def has_attribute(self, attribute: str) -> bool:
        return self.type.has_attribute(attribute)

    def validate_properties(
        self, values: Mapping[str, Any], unknown: Iterable[str]
    ) -> list[KilnError]:
        return self.type.validate_properties(values, unknown, self._custom)


class ResourceBuilder:
    """Turns the resources section of one stack into definitions and a graph."""

    def __init__(self, stack: StackDefinition) -> None:
        self.stack = stack
        self.entries: dict[str, ResourceEntry] = {}
        self.definitions: dict[str, ResourceDefinition] = {}
        self.typed: dict[str, TypedResource] = {}
        self.total_count = 0

    def _error(self, err: KilnError) -> None:
        self.stack.errors.append(err)

    # -- step 1: structure and conditions -------------------------------------
    def select_enabled(self) -> tuple[set[str], set[str]]:
        template = self.stack.template
        section, errors = template.mapping_section("resources")
        for err in errors:
            self._error(err)
        self.stack.check_resource_count(len(section))
        self.total_count = len(section)
        enabled: set[str] = set()
        disabled: set[str] = set()
        key = template.section_key("resources")
        for name, body in section.items():
            entry, errors = check_resource_entry(name, body, template.version, key)
            for err in errors:
                self._error(err)
            if entry is None:
                if isinstance(name, str):
                    enabled.add(name)  # still referable: avoids cascades of bad references
                continue
            if self._is_enabled(entry):
                self.entries[name] = entry
                enabled.add(name)
            else:
                disabled.add(name)
        return enabled, disabled

    def _is_enabled(self, entry: ResourceEntry) -> bool:
        raw = entry.fields.get("condition")
        if raw is None:
            return True
        try:
            return self.stack.conditions.evaluate(raw, entry.field_path("condition"))
        except KilnError as err:
            self._error(err)
            return True

    # -- step 2: parse, type, validate -----------------------------------------
    def build(self) -> None:
        for name, entry in self.entries.items():
            try:
                definition = self._build_one(entry)
            except KilnError as err:
                self._error(err)
                continue
            if definition is not None:
                self.definitions[name] = definition
        self._add_implicit_requires()

    def _add_implicit_requires(self) -> None:
        """Heat's implicit dependencies, each unless it would close a cycle."""
        for name, extra in sorted(implicit_requires(self.definitions).items()):
            definition = self.definitions[name]
            if definition.external_id is not None:
                continue
            added = {d for d in extra if not self._reaches(d, name)}
            if added - definition.requires:
                self.definitions[name] = replace(
                    definition, requires=definition.requires | frozenset(added)
                )

    def _reaches(self, start: str, target: str) -> bool:
        """Whether ``start`` already (transitively) requires ``target``."""
        seen: set[str] = set()
        pending = [start]
        while pending:
            node = pending.pop()
            if node == target:
                return True
            if node in seen or node not in self.definitions:
                continue
            seen.add(node)
            pending.extend(self.definitions[node].requires)
        return False

    def _parse(self, entry: ResourceEntry, canonical: str) -> Any:
        if canonical not in entry.fields:
            return None
        return self.stack.parser.parse(entry.fields[canonical], entry.field_path(canonical))

    def _resolve_field(self, parsed: Any) -> Any:
        value = resolve(parsed, self.stack)
        return None if value is ABSENT else value

    def _build_one(self, entry: ResourceEntry) -> ResourceDefinition | None:
        stack = self.stack
        name = entry.name
        type_name = self._resolve_field(self._parse(entry, "type"))
        if not isinstance(type_name, str):
            raise StackValidationFailed(
                f"Resource {name} type type must be string", path=entry.field_path("type")
            )
        typed = self._type_of(entry, type_name)

        parsed = {
            f: self._parse(entry, f)
            for f in ("properties", "metadata", "update_policy", "deletion_policy", "external_id")
        }
        if isinstance(typed, BuiltinResource):
            parsed["properties"] = with_named_attributes(
                typed.type.name, parsed["properties"], stack, entry.field_path("properties")
            )
        policy = self._deletion_policy(entry, parsed["deletion_policy"], typed)
        external_id = self._external_id(entry, parsed["external_id"], type_name)

        function_errors: list[KilnError] = []
        for f in ("properties", "metadata", "update_policy"):
            function_errors.extend(validate_functions(parsed[f], stack))
        for f in ("metadata", "update_policy"):
            self._check_object(entry, f, parsed[f])
        for err in function_errors:
            self._error(err)

        requires = self._requires(entry, parsed, external_id is not None)
        if typed is not None:
            self.typed[name] = typed
            # an external resource is adopted, not created: its properties are not used
            if not function_errors and external_id is None:
                self._validate_properties(entry, parsed["properties"], typed)

        return ResourceDefinition(
            name=name,
            type=type_name,
            properties=parsed["properties"],
            metadata=parsed["metadata"],
            depends_on=tuple(d for d in entry.depends_on if stack.has_resource(d)),
            deletion_policy=policy,
            update_policy=parsed["update_policy"],
            description=entry.fields.get("description") or "",
            external_id=external_id,
            path=entry.path,
            requires=frozenset(requires),
        )

    def _type_of(self, entry: ResourceEntry, type_name: str) -> TypedResource | None:
        from kiln.template.provider import ProviderResource

        stack = self.stack
        resolution = stack.environment.registry.resolve(
            type_name, entry.name, lambda t: stack.types.get(t) is not None
        )
        if resolution.kind == "template":
            return ProviderResource(
                stack, entry, type_name, resolution.target, system=resolution.system
            )
        if resolution.kind == "builtin":
            return BuiltinResource(stack, resolution.target)
        self._error(
            StackValidationFailed(
                f"The Resource Type ({type_name}) could not be found.",
                path=entry.field_path("type"),
            )
        )
        return None

    def _deletion_policy(
        self, entry: ResourceEntry, parsed: Any, typed: TypedResource | None
    ) -> str:
        if parsed is None:
            return "Delete"
        value = self._resolve_field(parsed)
        at = entry.field_path("deletion_policy")
        if value not in self.stack.version.deletion_policies:
            self._error(StackValidationFailed(f'Invalid deletion policy "{value}"', path=at))
            return "Delete"
        policy = canonical_deletion_policy(value)
        if policy == "Snapshot" and typed is not None and not typed.supports_snapshot:
            self._error(StackValidationFailed('"Snapshot" deletion policy not supported', path=at))
        return policy

    def _external_id(self, entry: ResourceEntry, parsed: Any, type_name: str) -> Any:
        if parsed is None:
            return None
        value = self._resolve_field(parsed)
        if value is not None and not isinstance(value, str):
            self._error(
                StackValidationFailed(
                    f"Resource {entry.name} external_id type must be string",
                    path=entry.field_path("external_id"),
                )
            )
        if entry.depends_on:
            self._error(
                InvalidExternalResourceDependency(
                    f"Invalid dependency with external {type_name} resource: {value}",
                    path=entry.field_path("depends_on"),
                )
            )
        return value

    def _requires(self, entry: ResourceEntry, parsed: dict[str, Any], external: bool) -> set[str]:
        stack = self.stack
        requires: set[str] = set()
        for dep in entry.depends_on:
            if stack.has_resource(dep):
                requires.add(dep)
            elif dep not in stack.disabled:
                self._error(
                    InvalidTemplateReference(
                        f'The specified reference "{dep}" (in {entry.name}) is incorrect.',
                        path=entry.field_path("depends_on"),
                    )
                )
        if external:
            return set()
        requires |= dependencies(parsed["properties"], stack)
        requires |= dependencies(parsed["metadata"], stack)
        return requires

    def _validate_properties(self, entry: ResourceEntry, parsed: Any, typed: TypedResource) -> None:
        at = entry.field_path("properties")
        if parsed is None:
            parsed = {}
        if isinstance(parsed, Function):
            try:
                parsed = resolve(parsed, self.stack)
            except KilnError as err:
                self._error(err.with_category(PROPERTY_ERROR))
                return
            if parsed is ABSENT or parsed is None:
                parsed = {}
        if not isinstance(parsed, dict):
            self._error(
                StackValidationFailed(
                    f"Resource {entry.name} properties type must be object", path=at
                )
            )
            return
        values: dict[str, Any] = {}
        unknown: list[str] = []
        for key, value in parsed.items():
            if self.stack.depends_on_unknown(value):
                unknown.append(key)
                self._check_known_parts(value, (*at, key))
                continue
            try:
                resolved = resolve(value, self.stack)
            except KilnError as err:
                self._error(
                    StackValidationFailed(err.message, path=(*at, key), category=PROPERTY_ERROR)
                )
                unknown.append(key)
                continue
            if resolved is not ABSENT:
                values[key] = resolved
        for problem in typed.validate_properties(values, unknown):
            self._error(problem.within(*at).with_category(PROPERTY_ERROR))

    def _check_known_parts(self, value: Any, at: tuple[Any, ...]) -> None:
        """Resolve the parts of a partly unknown value that can be, to surface their errors."""
        stack = self.stack
        if not stack.depends_on_unknown(value):
            try:
                resolve(value, stack)
            except KilnError as err:
                self._error(StackValidationFailed(err.message, path=at, category=PROPERTY_ERROR))
            return
        if isinstance(value, Function):
            self._check_known_parts(value.args, at)
        elif isinstance(value, dict):
            for item in value.values():
                self._check_known_parts(item, at)
        elif isinstance(value, list):
            for item in value:
                self._check_known_parts(item, at)

    def _check_object(self, entry: ResourceEntry, canonical: str, parsed: Any) -> None:
        """``metadata`` and ``update_policy`` must be maps once resolved."""
        value = parsed
        if isinstance(parsed, Function):
            if self.stack.depends_on_unknown(parsed):
                return
            try:
                value = resolve(parsed, self.stack)
            except KilnError:
                return  # reported by the function checks
        if value is None or value is ABSENT or isinstance(value, dict):
            return
        self._error(
            StackValidationFailed(
                f"Resource {entry.name} {canonical} type must be object",
                path=entry.field_path(canonical),
            )
        )

    # -- step 3: the graph -----------------------------------------------------
    def graph(self) -> Graph[str]:
        graph: Graph[str] = Graph()
        for name in self.definitions:
            graph.add_node(name)
        for name, definition in self.definitions.items():
            for dep in sorted(definition.requires):
                if dep in self.definitions:
                    graph.add_edge(name, dep)
        try:
            graph.topological_order()
        except CircularDependencyException as err:
            self._error(err)
        self.total_count += sum(getattr(t, "total_resources", 0) for t in self.typed.values())
        self.stack.total_resource_count = self.total_count
        if self.stack.depth == 0 and self.total_count > len(self.entries):
            self.stack.check_resource_count(self.total_count)
        return graph
