"""A stack definition: a template with its environment, files and identity.

``StackDefinition`` is what both validation and the engine work from: typed
parameter values, evaluated conditions, the enabled resources with parsed
definitions, the outputs and the dependency graph. Building one never stops at
the first problem: every independent error is collected in ``errors``, each
with its template path and, when known, ``file:line:col``. It also implements
the FunctionContext that functions evaluate against; resources that do not
exist yet resolve as Heat resolves them before creation (get_resource gives the
name, get_attr gives null) unless a ``ResourceState`` says otherwise.
Imports: kiln.core, kiln.graph, kiln.schema, kiln.template.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urljoin

from kiln.core.errors import (
    KilnError,
    RequestLimitExceeded,
    StackValidationFailed,
    UserParameterMissing,
)
from kiln.core.paths import Path
from kiln.graph.dag import Graph
from kiln.schema.custom import CustomConstraints
from kiln.schema.resource_types import ResourceTypes, UncheckedTypes
from kiln.template.conditions import Conditions
from kiln.template.environment import Environment
from kiln.template.functions.base import Function, Parser, resolve_top
from kiln.template.functions.references import GetParam, Ref
from kiln.template.outputs import OutputDefinition, OutputValue, parse_outputs, resolve_output
from kiln.template.parameter_groups import validate_parameter_groups
from kiln.template.parameters import (
    ParameterSchema,
    parse_parameter_schemas,
    resolve_parameter_values,
)
from kiln.template.resources import ResourceDefinition
from kiln.template.stack_resources import ResourceBuilder, TypedResource
from kiln.template.template import Template

AWS_REGION = "ap-southeast-1"


@dataclass(frozen=True)
class StackIdentity:
    """Who the stack is: feeds the pseudo parameters."""

    name: str = "stack"
    id: str | None = None
    project_id: str = ""


@dataclass(frozen=True)
class Limits:
    """Heat's limits, with Heat's defaults."""

    max_resources_per_stack: int = 1000
    max_nested_stack_depth: int = 5
    max_template_size: int = 524288


@dataclass(frozen=True)
class Facade:
    """The parent resource of a nested template, for ``resource_facade``."""

    metadata: Any = field(default_factory=dict)
    deletion_policy: str = "Delete"
    update_policy: Any = field(default_factory=dict)


class ResourceState(Protocol):
    """Live values of created resources (the engine provides them)."""

    def reference(self, name: str) -> Any | None: ...

    def attribute(self, name: str, attribute: str, path: tuple[Any, ...]) -> Any: ...

    def attributes(self, name: str) -> Any: ...


class StackDefinition:
    """A template, environment and files made into resources, outputs and a graph."""

    def __init__(
        self,
        template: Template,
        environment: Environment | None = None,
        files: Mapping[str, Any] | None = None,
        *,
        identity: StackIdentity | None = None,
        types: ResourceTypes | None = None,
        custom: CustomConstraints | None = None,
        check_values: bool = True,
        allow_missing: bool = False,
        state: ResourceState | None = None,
        facade: Facade | None = None,
        depth: int = 0,
        limits: Limits | None = None,
        zones: tuple[str, ...] = ("nova",),
    ) -> None:
        from kiln.template.environment import parse_environment
        from kiln.template.global_environment import system_registry

        self.template = template
        self.version = template.version
        self.types: ResourceTypes = types if types is not None else UncheckedTypes()
        if environment is None:
            global_registry = system_registry(self.types.global_environment)
            environment = parse_environment({}, global_registry=global_registry)
        self.environment = environment
        self.files: Mapping[str, Any] = files or {}
        self.identity = identity or StackIdentity()
        self.custom = custom if custom is not None else CustomConstraints.offline()
        self.check_values = check_values
        self.allow_missing = allow_missing
        self.state = state
        self.facade_values = facade
        self.depth = depth
        self.limits = limits or Limits()
        self.zones = zones
        self.errors: list[KilnError] = []

        self.parser = Parser(
            self.version,
            self.version.functions,
            self.version.condition_functions,
            conditions=self._evaluate_condition,
        )
        self.parameter_schemas: dict[str, ParameterSchema] = {}
        self.parameter_values: dict[str, Any] = {}
        self.resources: dict[str, ResourceDefinition] = {}
        self.typed: dict[str, TypedResource] = {}
        self.disabled: set[str] = set()
        self.outputs: dict[str, OutputDefinition] = {}
        self.graph: Graph[str] = Graph()
        self.total_resource_count = 0
        self._valueless: frozenset[str] | None = None
        self._unknown_memo: dict[int, tuple[Function, bool]] = {}
        self._enabled: set[str] = set()
        self._build()

    # -- building -------------------------------------------------------------
    def _build(self) -> None:
        self._build_parameters()
        self._build_conditions()
        builder = ResourceBuilder(self)
        self._enabled, self.disabled = builder.select_enabled()
        self._check_duplicate_names()
        builder.build()
        self.resources = builder.definitions
        self.typed = builder.typed
        self.graph = builder.graph()
        self.outputs, errors = parse_outputs(self)
        self.errors.extend(errors)
        self.errors = [e.locate(self.template.locate) for e in _unique(self.errors)]

    def _build_parameters(self) -> None:
        section_key = self.template.section_key("parameters")
        schemas, errors = parse_parameter_schemas(self.template.section("parameters"), self.version)
        self.errors.extend(errors)
        self.parameter_schemas = schemas
        values, errors = resolve_parameter_values(
            schemas,
            self.environment.parameters,
            self.environment.parameter_defaults,
            check_values=self.check_values,
            custom=self.custom,
            allow_missing=self.allow_missing,
        )
        self.errors.extend(errors)
        self.parameter_values = values
        del section_key
        if self.version.is_hot:
            groups = self.template.section("parameter_groups")
            if groups is not None:
                self.errors.extend(validate_parameter_groups(groups, list(schemas)))

    def _build_conditions(self) -> None:
        defs: dict[str, Any] = {}
        if self.version.has_conditions:
            raw = self.template.section("conditions")
            if raw is not None and not isinstance(raw, dict):
                self.errors.append(
                    StackValidationFailed(
                        "Condition definitions must be a map. "
                        f"Found a {type(raw).__name__} instead",
                        category="Conditions validation error",
                        path=(self.template.section_key("conditions"),),
                    )
                )
            elif raw:
                defs = raw
        self.conditions = Conditions(
            defs, self.parser, lambda: self, self.template.section_key("conditions")
        )
        self.errors.extend(self.conditions.validate_all())

    def _evaluate_condition(self, raw: Any, path: Path) -> bool:
        return self.conditions.evaluate(raw, path)

    def _check_duplicate_names(self) -> None:
        names = set(self.parameter_schemas) | set(self.pseudo_parameters())
        clash = names & (self._enabled | self.disabled)
        if clash:
            self.errors.append(StackValidationFailed(f"Duplicate names {clash}"))

    def check_resource_count(self, count: int) -> None:
        limit = self.limits.max_resources_per_stack
        if limit >= 0 and count > limit:
            self.errors.append(
                RequestLimitExceeded(
                    "Request limit exceeded: Maximum resources per stack exceeded."
                )
            )

    # -- results --------------------------------------------------------------
    @property
    def enabled_resources(self) -> list[str]:
        return [n for n in self.resources]

    def creation_order(self) -> list[str]:
        return self.graph.topological_order()

    def output_values(self) -> dict[str, OutputValue]:
        """Every output resolved now, each with its own error if it fails."""
        return {name: resolve_output(self, out) for name, out in self.outputs.items()}

    def pseudo_parameters(self) -> dict[str, Any]:
        stack_id = self.identity.id if self.identity.id is not None else "None"
        if self.version.is_cfn:
            arn = (
                f"arn:openstack:heat::{self.identity.project_id}:stacks/"
                f"{self.identity.name}/{stack_id}"
            )
            return {
                "AWS::StackId": arn,
                "AWS::StackName": self.identity.name,
                "AWS::Region": AWS_REGION,
            }
        return {
            "OS::stack_name": self.identity.name,
            "OS::stack_id": stack_id,
            "OS::project_id": self.identity.project_id,
        }

    # -- FunctionContext --------------------------------------------------------
    def has_parameter(self, name: str) -> bool:
        return name in self.parameter_schemas or name in self.pseudo_parameters()

    def param_value(self, name: str) -> Any:
        if name in self.parameter_values:
            return self.parameter_values[name]
        pseudo = self.pseudo_parameters()
        if name in pseudo:
            return pseudo[name]
        if name in self.parameter_schemas:
            return None  # declared, no value: already reported when values are checked
        raise UserParameterMissing(f"The Parameter ({name}) was not provided.")

    def has_resource(self, name: str) -> bool:
        return name in self._enabled

    def resource_reference(self, name: str) -> Any:
        if self.state is not None:
            ref = self.state.reference(name)
            if ref is not None:
                return ref
        return name

    def resource_attribute(self, name: str, attribute: str, path: tuple[Any, ...]) -> Any:
        if self.state is None:
            return None
        return self.state.attribute(name, attribute, path)

    def resource_attributes(self, name: str) -> Any:
        if self.state is None:
            return None
        return self.state.attributes(name)

    def check_attribute(self, name: str, attribute: str) -> str | None:
        typed = self.typed.get(name)
        if typed is None or typed.has_attribute(attribute):
            return None
        return f"The Referenced Attribute ({name} {attribute}) is incorrect."

    def file_content(self, key: str) -> str | None:
        content = self.lookup_file(key)
        return content if isinstance(content, str) else None

    def lookup_file(self, key: str) -> Any:
        """The files-map entry for ``key``: exactly, else relative to this template's URL.

        The fallback is a Kiln extension: it lets a client upload nested
        templates verbatim (so errors keep their line:col) instead of
        rewriting every relative reference inside them, as heatclient does.
        """
        found = self.file_key(key)
        return None if found is None else self.files[found]

    def file_key(self, key: str) -> str | None:
        """The key under which ``key`` is found in the files map (see lookup_file)."""
        if key in self.files:
            return key
        base = self.template.name
        if "://" in base and "://" not in key:
            joined = urljoin(base, key)
            if joined in self.files:
                return joined
        return None

    def condition(self, name: str) -> bool:
        return self.conditions.value(name)

    def facade(self, what: str) -> Any:
        if self.facade_values is None:
            raise StackValidationFailed("resource_facade is only valid in a nested template")
        return getattr(self.facade_values, what)

    def availability_zones(self) -> list[str]:
        return list(self.zones)

    def mapping(self, name: str, key: str, value: str) -> Any:
        mappings = self.template.section("mappings") or {}
        try:
            return mappings[name][key][value]
        except (KeyError, TypeError, IndexError):
            raise StackValidationFailed(f'Mapping "{name}" has no entry [{key}][{value}]') from None

    # -- resolution helpers ----------------------------------------------------
    def depends_on_unknown(self, parsed: Any) -> bool:
        """Whether a parsed value needs something not known yet.

        That is a resource (before creation), or a parameter that is declared
        but has no value (validation without value checking tolerates those).
        Answers for function calls are memoised: validation and resolution ask
        about the same calls several times.
        """
        if isinstance(parsed, Function):
            found = self._unknown_memo.get(id(parsed))
            if found is None:
                answer = self._call_is_unknown(parsed) or self.depends_on_unknown(parsed.args)
                # Keep the call alive with its answer so that its id is never reused.
                self._unknown_memo[id(parsed)] = (parsed, answer)
                return answer
            return found[1]
        if type(parsed) is dict:
            return any(self.depends_on_unknown(v) for v in parsed.values() if _may_call(v))
        if type(parsed) is list:
            return any(self.depends_on_unknown(v) for v in parsed if _may_call(v))
        return False

    def _call_is_unknown(self, fn: Function) -> bool:
        if any(True for _ in fn.dependencies(self)):
            return True
        missing = self._valueless_parameters()
        if missing and isinstance(fn, GetParam | Ref):
            name = fn.args[0] if isinstance(fn.args, list) and fn.args else fn.args
            return isinstance(name, str) and name in missing
        return False

    def _valueless_parameters(self) -> frozenset[str]:
        if self._valueless is None:
            self._valueless = frozenset(set(self.parameter_schemas) - set(self.parameter_values))
        return self._valueless

    def resolve(self, value: Any) -> Any:
        return resolve_top(value, self)


def _may_call(value: Any) -> bool:
    return type(value) is dict or type(value) is list or isinstance(value, Function)


def _unique(errors: list[KilnError]) -> list[KilnError]:
    seen: set[tuple[Any, ...]] = set()
    out = []
    for err in errors:
        key = (err.path, err.message)
        if key not in seen:
            seen.add(key)
            out.append(err)
    return out
