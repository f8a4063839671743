"""What validation and resolution report back: Heat's validate document, the
resolved resource definitions and the dependency graph, as plain data.

Resolution before resources exist keeps every call that needs a resource
(``get_resource``, ``get_attr``, ``Ref`` to a resource) as the call itself and
evaluates everything else. Imports: kiln.core, kiln.template.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kiln.core.errors import KilnError
from kiln.template.functions.base import ABSENT, Function
from kiln.template.parameters import validate_document_parameters

if TYPE_CHECKING:
    from kiln.template.stack import StackDefinition


def validate_document(stack: StackDefinition) -> dict[str, Any]:
    """Heat's template-validate response (heat-api.md 3.7)."""
    env = stack.environment
    doc: dict[str, Any] = {
        "Description": stack.template.description or "No description",
        "Parameters": validate_document_parameters(
            stack.parameter_schemas, env.parameters, env.parameter_defaults
        ),
    }
    groups = stack.template.section("parameter_groups")
    if stack.version.is_hot and groups is not None:
        doc["ParameterGroups"] = groups
    doc["Environment"] = env.to_dict()
    return doc


def partial_resolve(value: Any, stack: StackDefinition) -> Any:
    """Evaluate what can be evaluated now; keep calls that need live resources.

    A whole value that is absent (a false two-argument ``if``) reads as null.
    """
    return _top(_partial(value, stack))


def _partial(value: Any, stack: StackDefinition) -> Any:
    if isinstance(value, Function):
        if not stack.depends_on_unknown(value):
            try:
                result = value.result(stack)
            except KilnError as err:
                return {"<error>": err.message}
            return None if result is ABSENT else result
        return {value.fn_name: _partial(value.args, stack)}
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            r = _partial(v, stack)
            if r is not ABSENT:
                out[k] = r
        return out
    if isinstance(value, list):
        return [r for r in (_partial(v, stack) for v in value) if r is not ABSENT]
    return value


def resolved_resources(stack: StackDefinition) -> list[dict[str, Any]]:
    """Every enabled resource in creation order, with what can be resolved now."""
    order = _safe_order(stack)
    out = []
    for name in order:
        definition = stack.resources[name]
        typed = stack.typed.get(name)
        entry: dict[str, Any] = {
            "name": name,
            "type": definition.type,
            "implementation": typed.implementation if typed is not None else None,
            "requires": sorted(definition.requires),
        }
        for key in ("properties", "metadata", "update_policy"):
            value = getattr(definition, key)
            if value is not None:
                entry[key] = partial_resolve(value, stack)
        if definition.deletion_policy != "Delete":
            entry["deletion_policy"] = definition.deletion_policy
        if definition.external_id is not None:
            entry["external_id"] = definition.external_id
        nested = getattr(typed, "nested", None)
        if nested is not None:
            entry["nested"] = resolved_resources(nested)
        out.append(entry)
    return out


def resolved_outputs(stack: StackDefinition) -> list[dict[str, Any]]:
    """Every output, with what can be resolved now."""
    out = []
    for name, output in stack.outputs.items():
        entry: dict[str, Any] = {
            "output_key": name,
            "description": output.description or "No description given",
        }
        entry["output_value"] = partial_resolve(output.value, stack) if output.enabled else None
        out.append(entry)
    return out


def _top(value: Any) -> Any:
    """A whole value that is absent (a false two-argument ``if``) reads as null."""
    return None if value is ABSENT else value


def _safe_order(stack: StackDefinition) -> list[str]:
    try:
        return stack.creation_order()
    except KilnError:
        return list(stack.resources)
