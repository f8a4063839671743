"""From request-shaped inputs to a StackDefinition, in one place.

A template (text, loaded document or data), an inline environment, ordered
environment files, the files map and top-level parameters are combined exactly
as the API will combine them: environment files merged in order, then the
top-level parameters applied last (reference 6.3, Rec).
Imports: kiln.core, kiln.schema, kiln.template.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kiln.core.errors import EnvironmentParseError, KilnError, StackValidationFailed
from kiln.schema.custom import CustomConstraints
from kiln.schema.resource_types import ResourceTypes
from kiln.template.environment import Environment, merge_environment_files, parse_environment
from kiln.template.global_environment import system_registry
from kiln.template.loader import Document, load_environment
from kiln.template.parameters import parse_parameter_schemas
from kiln.template.registry import ResourceRegistry
from kiln.template.stack import Limits, StackDefinition, StackIdentity
from kiln.template.template import Template, json_size
from kiln.template.versions import VERSION_KEYS

TemplateInput = Template | Document | Mapping[str, Any] | str | bytes
EnvironmentInput = Document | Mapping[str, Any] | str | bytes | None


def as_template(
    template: TemplateInput, name: str = "<template>", *, max_size: int | None = None
) -> Template:
    if isinstance(template, Template):
        return template
    if isinstance(template, Document):
        return Template.from_document(template)
    if isinstance(template, str | bytes):
        return Template.load(template, name, max_size=max_size)
    # Anything else is data as a request body gives it: from_data rejects non-mappings.
    data = dict(template) if isinstance(template, Mapping) else template
    return Template.from_data(data, name, max_size=max_size)


def _environment_data(env: EnvironmentInput, name: str) -> tuple[Any, Document | None]:
    if env is None:
        return {}, None
    if isinstance(env, Document):
        return env.data, env
    if isinstance(env, str | bytes):
        doc = load_environment(env, name)
        return doc.data, doc
    json_size(env, f"Environment {name}", EnvironmentParseError)
    # A non-mapping is passed on as is: parse_environment rejects it with Heat's message.
    return (dict(env) if isinstance(env, Mapping) else env), None


def build_environment(
    template: Template,
    environment: EnvironmentInput = None,
    environment_files: Sequence[tuple[str, EnvironmentInput]] = (),
    parameters: Mapping[str, Any] | None = None,
    files: Mapping[str, Any] | None = None,
    *,
    global_registry: ResourceRegistry | None = None,
) -> Environment:
    """The stack's environment from an inline environment, files and parameters.

    With environment files, the inline environment is ignored entirely
    (reference 6.2); merge strategies look up parameter types in the template
    and in every template of ``files`` (6.3), the template winning. The result's
    registry is layered over ``global_registry`` (the global environment's).
    """
    if environment_files:
        environment = None
    data, doc = _environment_data(environment, "<environment>")
    try:
        base = parse_environment(
            data, name=doc.name if doc else "<environment>", global_registry=global_registry
        )
    except KilnError as err:
        if doc is not None:
            err.locate(doc.source.locate)
        raise
    env_files: list[tuple[str, Any]] = []
    docs: dict[str, Document] = {}
    for name, env in environment_files:
        file_data, file_doc = _environment_data(env, name)
        env_files.append((name, file_data))
        if file_doc is not None:
            docs[name] = file_doc
    types = _parameter_types(template, files or {}) if environment_files else {}
    cli_parameters = _request_parameters(parameters)
    try:
        return merge_environment_files(base, env_files, types, cli_parameters=cli_parameters)
    except KilnError as err:
        # The merge labels an error with the file it comes from.
        source = docs.get(err.category or "")
        if source is not None:
            err.locate(source.source.locate)
        raise


def _parameter_types(template: Template, files: Mapping[str, Any]) -> dict[str, str]:
    """Parameter types of the template and of every template in the files map."""
    types: dict[str, str] = {}
    for content in files.values():
        if not isinstance(content, str) or not any(k in content for k in VERSION_KEYS):
            continue
        try:
            nested = Template.load(content)
        except KilnError:
            continue  # not a template after all, or reported where it is used
        found, _ = parse_parameter_schemas(nested.section("parameters"), nested.version)
        types.update({n: s.type for n, s in found.items()})
    schemas, _ = parse_parameter_schemas(template.section("parameters"), template.version)
    types.update({n: s.type for n, s in schemas.items()})
    return types


def _request_parameters(parameters: Mapping[str, Any] | None) -> dict[str, Any]:
    """The request's top-level parameters, checked as an environment's ``parameters``
    section is (they come from the request body: a map is not guaranteed)."""
    if parameters is None:
        return {}
    json_size(parameters, "Parameters", StackValidationFailed)
    return parse_environment({"parameters": parameters}).parameters


def build_stack(
    template: TemplateInput,
    *,
    environment: EnvironmentInput = None,
    environment_files: Sequence[tuple[str, EnvironmentInput]] = (),
    files: Mapping[str, Any] | None = None,
    parameters: Mapping[str, Any] | None = None,
    identity: StackIdentity | None = None,
    types: ResourceTypes | None = None,
    custom: CustomConstraints | None = None,
    check_values: bool = True,
    allow_missing: bool = False,
    limits: Limits | None = None,
) -> StackDefinition:
    """Parse, merge and build; structural errors raise, the rest are in ``.errors``."""
    tmpl = as_template(template, max_size=limits.max_template_size if limits else None)
    env = build_environment(
        tmpl,
        environment,
        environment_files,
        parameters,
        files,
        global_registry=system_registry(types.global_environment) if types else None,
    )
    return StackDefinition(
        tmpl,
        env,
        files or {},
        identity=identity,
        types=types,
        custom=custom,
        check_values=check_values,
        allow_missing=allow_missing,
        limits=limits,
    )
