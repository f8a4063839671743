"""The update decision, as a pure function (reference resource-types 0.3).

Given what is stored for a resource and its new definition, decide: keep it
unchanged, update it in place, or replace it. Nothing here acts; the engine
carries the decision out.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from kiln.core.errors import NotSupported, StackValidationFailed
from kiln.schema.properties import PropertySchema

if TYPE_CHECKING:
    from kiln.plugin.resource import Resource

DecisionKind = Literal["unchanged", "update", "replace"]

# (action, status) of a resource with nothing in the cloud: it can only be created.
_NOT_CREATED = (("INIT", "COMPLETE"), ("DELETE", "COMPLETE"))


@dataclass(frozen=True)
class UpdateDecision:
    """What to do with one resource during an update, and why."""

    kind: DecisionKind
    changed: Mapping[str, Any] = field(default_factory=dict)
    reason: str = ""


@dataclass(frozen=True)
class StoredResource:
    """The parts of a stored resource row the decision looks at."""

    action: str
    status: str
    properties: Mapping[str, Any]
    metadata: Any = None


def changed_properties(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """Properties whose value differs; removed ones map to None."""
    keys = list(old) + [k for k in new if k not in old]
    return {k: new.get(k) for k in keys if old.get(k) != new.get(k)}


def decide_update(
    stored: StoredResource,
    new_properties: Mapping[str, Any],
    new_metadata: Any,
    schemas: Mapping[str, PropertySchema] | None,
    *,
    needs_replace: Callable[[Mapping[str, Any]], bool] = lambda _props: False,
    replace_failed: bool = True,
    restricted: Collection[str] = (),
    ignore_changes: bool = False,
) -> UpdateDecision:
    """Keep, update in place, or replace (reference resource-types 0.3, steps 1-5).

    ``ignore_changes`` (OS::Heat::None) keeps a created resource whatever changed,
    even a failed one; only a resource that does not exist is (re)created.
    """
    if ignore_changes and (stored.action, stored.status) not in _NOT_CREATED:
        return UpdateDecision("unchanged", reason="the resource ignores changes")
    decision = _decide(stored, new_properties, new_metadata, schemas, needs_replace, replace_failed)
    if decision.kind in restricted:
        raise StackValidationFailed(f"{decision.kind} is restricted for resource.")
    return decision


def decide_resource_update(
    resource: Resource,
    stored: StoredResource,
    new_properties: Mapping[str, Any],
    new_metadata: Any,
    *,
    restricted: Collection[str] = (),
) -> UpdateDecision:
    """:func:`decide_update` with the plugin's own schema and hooks."""
    plugin = type(resource)
    return decide_update(
        stored,
        new_properties,
        new_metadata,
        None if plugin.accepts_any_properties else plugin.properties_schema,
        needs_replace=resource.needs_replace,
        # only a failed resource is asked (the answer may cost a cloud call)
        replace_failed=resource.needs_replace_failed() if stored.status == "FAILED" else True,
        restricted=restricted,
        ignore_changes=plugin.ignores_changes,
    )


def _decide(
    stored: StoredResource,
    new_properties: Mapping[str, Any],
    new_metadata: Any,
    schemas: Mapping[str, PropertySchema] | None,
    needs_replace: Callable[[Mapping[str, Any]], bool],
    replace_failed: bool,
) -> UpdateDecision:
    if stored.status == "FAILED" and replace_failed:
        return UpdateDecision("replace", reason=f"{stored.action}_FAILED")
    if (stored.action, stored.status) in _NOT_CREATED:
        return UpdateDecision("replace", reason="not created")
    if stored.action == "CHECK" and stored.status == "FAILED":
        return UpdateDecision("replace", reason="CHECK_FAILED")
    if needs_replace(new_properties):
        return UpdateDecision("replace", reason="the resource asks to be replaced")
    changed = changed_properties(stored.properties, new_properties)
    if schemas is not None:
        immutable = sorted(k for k in changed if k in schemas and schemas[k].immutable)
        if immutable:
            raise NotSupported(
                f"Update to properties {', '.join(immutable)} is not supported (immutable)"
            )
        fixed = sorted(k for k in changed if k not in schemas or not schemas[k].update_allowed)
        if fixed:
            return UpdateDecision(
                "replace", changed, reason=f"changed properties not updatable: {', '.join(fixed)}"
            )
    if changed or new_metadata != stored.metadata:
        return UpdateDecision("update", changed)
    if stored.status == "FAILED":  # kept (not replaced): an update brings it back
        return UpdateDecision("update", changed, reason=f"{stored.action}_FAILED, kept")
    return UpdateDecision("unchanged")
