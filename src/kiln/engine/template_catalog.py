"""Template validation, template versions and their functions (heat-api.md 2.6).

Validation builds the stack exactly as a create would (the engine's plugin
registry checks types and properties), except that parameters without a value
are tolerated, and reports every independent error at once. The document is
the one ``kiln template validate`` prints (``kiln.template.report``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kiln.core.errors import raise_all
from kiln.engine.heat_errors import HeatNotFound
from kiln.schema.custom import CustomConstraints
from kiln.schema.resource_types import ResourceTypes
from kiln.template.functions.references import build_invalid, build_removed
from kiln.template.inputs import as_template, build_stack
from kiln.template.report import validate_document
from kiln.template.stack import Limits, StackDefinition, StackIdentity
from kiln.template.versions import REGISTRY, TemplateVersion, all_versions

#: What each function does, one line each (the function list shows them).
FUNCTION_DESCRIPTIONS: Mapping[str, str] = {
    "get_attr": "The value of an attribute of a resource, optionally a path into it.",
    "get_file": "The content of a file from the files map.",
    "get_param": "The value of a parameter, optionally a path into it.",
    "get_resource": "The reference id of a resource (usually its physical id).",
    "list_join": "Join lists of strings with a delimiter.",
    "resource_facade": "A section of the parent resource's definition, in a nested template.",
    "str_replace": "Substitute values for placeholders in a template string.",
    "str_replace_strict": "str_replace that fails when a placeholder is not found.",
    "str_replace_vstrict": "str_replace_strict that also fails on empty values.",
    "repeat": "Repeat a template for every combination of values in lists.",
    "digest": "The hash of a string with a named algorithm (md5, sha256, ...).",
    "str_split": "Split a string into a list by a delimiter, optionally picking one item.",
    "map_merge": "Merge maps; later keys win.",
    "map_replace": "Rename the keys and/or values of a map.",
    "if": "One of two values, chosen by a condition.",
    "yaql": "The result of a YAQL expression over given data.",
    "filter": "A list without the given values.",
    "make_url": "Build a URL from its parts, quoting them as needed.",
    "list_concat": "Concatenate lists.",
    "list_concat_unique": "Concatenate lists, keeping the first of duplicate items.",
    "contains": "Whether a value is in a sequence.",
    "equals": "Whether two values are equal.",
    "not": "The negation of a condition.",
    "and": "Whether every condition holds.",
    "or": "Whether any condition holds.",
    "Fn::Base64": "The value unchanged (kept for CloudFormation compatibility).",
    "Fn::GetAZs": "The availability zones.",
    "Fn::Join": "Join a list of strings with a delimiter.",
    "Fn::MemberListToMap": "A map built from an AWS-style member list.",
    "Fn::Replace": "Substitute values for placeholders in a string.",
    "Fn::ResourceFacade": "A section of the parent resource's definition, in a nested template.",
    "Fn::Select": "One item of a list or map, by index or key.",
    "Fn::Split": "Split a string into a list by a delimiter.",
    "Fn::GetAtt": "The value of an attribute of a resource.",
    "Fn::FindInMap": "A value from the Mappings section.",
    "Fn::If": "One of two values, chosen by a condition.",
    "Fn::Equals": "Whether two values are equal.",
    "Fn::Not": "The negation of a condition.",
    "Fn::And": "Whether every condition holds.",
    "Fn::Or": "Whether any condition holds.",
    "Ref": "The reference id of a resource, or the value of a parameter.",
}


# -- validation ---------------------------------------------------------------------------------
def validate_template(
    *,
    template: Any,
    template_name: str,
    environment: Any,
    environment_files: list[tuple[str, Any]],
    files: Mapping[str, Any],
    parameters: Mapping[str, Any],
    project_id: str,
    types: ResourceTypes,
    custom: CustomConstraints,
    show_nested: bool,
    limits: Limits | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Heat's validate document and the resource types used; raises every error found.

    ``environment_files`` are (name, content) in merge order.
    """
    limits = limits or Limits()
    stack = build_stack(
        as_template(template, template_name, max_size=limits.max_template_size),
        environment=environment,
        environment_files=environment_files,
        files=files,
        parameters=parameters,
        identity=StackIdentity(name="validate", project_id=project_id),
        types=types,
        custom=custom,
        check_values=True,
        allow_missing=True,
        limits=limits,
    )
    raise_all(stack.errors)
    document = validate_document(stack)
    if show_nested:
        nested = nested_parameters(stack)
        if nested:
            document["NestedParameters"] = nested
    return document, sorted(set(resource_types_used(stack)))


def nested_parameters(stack: StackDefinition) -> dict[str, Any]:
    """Per template resource: its type and the nested template's parameters, recursively."""
    found: dict[str, Any] = {}
    for name, typed in stack.typed.items():
        nested = getattr(typed, "nested", None)
        if not isinstance(nested, StackDefinition):
            continue
        document = validate_document(nested)
        entry: dict[str, Any] = {"Type": stack.resources[name].type}
        entry.update({k: v for k, v in document.items() if k != "Environment"})
        deeper = nested_parameters(nested)
        if deeper:
            entry["NestedParameters"] = deeper
        found[name] = entry
    return found


def resource_types_used(stack: StackDefinition) -> Iterator[str]:
    """Every type named by the stack and its nested templates, and what each resolved to."""
    for name, definition in stack.resources.items():
        yield definition.type
        typed = stack.typed.get(name)
        resolved = getattr(getattr(typed, "type", None), "name", None)
        if isinstance(resolved, str):
            yield resolved
        nested = getattr(typed, "nested", None)
        if isinstance(nested, StackDefinition):
            yield from resource_types_used(nested)


# -- versions and functions ---------------------------------------------------------------------
def template_versions() -> list[tuple[str, str, list[str]]]:
    """(name, ``cfn``|``hot``, alias names) of every version, CFN first then HOT by date."""
    return [
        (v.name, "hot" if v.is_hot else "cfn", [f"{v.key}.{alias}" for alias in v.aliases])
        for v in all_versions()
    ]


def find_version(name: str) -> TemplateVersion:
    """The version called ``name`` (``heat_template_version.2018-08-31`` or an alias name)."""
    key, _, value = name.partition(".")
    found = REGISTRY.get((key, value))
    if found is None:
        raise HeatNotFound(f"Template with version {name} not found")
    return found


def template_functions(name: str, with_condition_func: bool) -> list[tuple[str, str]]:
    """(function, description) of a version; removed functions left out.

    With ``with_condition_func`` the functions valid in conditions are added.
    """
    version = find_version(name)
    tables = [version.functions]
    if with_condition_func:
        tables.append(version.condition_functions)
    usable = {
        fn
        for table in tables
        for fn, spec in table.items()
        # Removed functions, and ordinary ones in the condition table, only fail.
        if spec.build is not build_removed and spec.build is not build_invalid
    }
    return [(fn, FUNCTION_DESCRIPTIONS.get(fn, "")) for fn in sorted(usable)]
