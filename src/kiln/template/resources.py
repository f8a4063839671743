"""Resource definitions: the structure of a resource entry and its parsed form.

``check_resource_entry`` applies the structural rules of reference 4.2 to one
raw entry (before any function is parsed) and returns its fields under
canonical HOT names. ``ResourceDefinition`` is the frozen, parsed result the
engine consumes. Imports: kiln.core, kiln.template.versions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kiln.core.errors import KilnError, StackValidationFailed
from kiln.core.paths import Path
from kiln.template.versions import TemplateVersion

CFN_FIELDS = {
    "Type": "type",
    "Properties": "properties",
    "Metadata": "metadata",
    "DependsOn": "depends_on",
    "DeletionPolicy": "deletion_policy",
    "UpdatePolicy": "update_policy",
    "Description": "description",
    "Condition": "condition",
}
_HOT_TO_CFN = {v: k for k, v in CFN_FIELDS.items()}


@dataclass(frozen=True)
class ResourceEntry:
    """A structurally valid raw resource entry, keyed by canonical field names."""

    name: str
    fields: dict[str, Any]
    path: Path
    keys: dict[str, str]  # canonical field name -> key used in the template

    def field_path(self, canonical: str) -> Path:
        return (*self.path, self.keys.get(canonical, canonical))

    @property
    def depends_on(self) -> list[str]:
        value = self.fields.get("depends_on")
        if value is None:
            return []
        return [value] if isinstance(value, str) else list(value)


def check_resource_entry(
    name: Any, body: Any, version: TemplateVersion, section_key: str
) -> tuple[ResourceEntry | None, list[KilnError]]:
    """Check one entry of the resources section; collect every structural error."""
    path: Path = (section_key, name)
    errors: list[KilnError] = []

    def fail(message: str, at: Path = path) -> None:
        errors.append(StackValidationFailed(message, path=at))

    if not isinstance(name, str):
        fail(f"Resource name {name!r} must be a string")
        return None, errors
    if "/" in name:
        fail('Resource name may not contain "/"')
    if not isinstance(body, dict):
        if body is None or body == {}:
            fail("Each resource must contain a type key.")
        else:
            fail(
                f'"{section_key}" must contain a map of resource maps. '
                f"Found a [{type(body).__name__}] instead"
            )
        return None, errors

    fields: dict[str, Any] = {}
    keys: dict[str, str] = {}
    allowed = set(version.resource_keys)
    for key, value in body.items():
        if version.is_cfn:
            canonical = CFN_FIELDS.get(key) if key in allowed else None
            if canonical is None:
                continue  # CFN ignores unknown resource keys (quirk 1, kept)
        elif key in allowed:
            canonical = key
        else:
            fail(f'"{key}" is not a valid keyword inside a resource definition', (*path, key))
            continue
        fields[canonical] = value
        keys[canonical] = key

    if "type" not in fields:
        fail("Each resource must contain a type key.")
    elif fields["type"] == "":
        fail("Each Resource must contain a Type key.", (*path, keys["type"]))

    description = fields.get("description")
    if description is not None and not isinstance(description, str):
        fail(f"Resource {name} description type must be string", (*path, keys["description"]))

    depends = fields.get("depends_on")
    if depends is not None:
        at = (*path, keys["depends_on"])
        if isinstance(depends, list):
            if not all(isinstance(d, str) for d in depends):
                fail(f"Resource {name} depends_on must be a list of strings", at)
        elif not isinstance(depends, str):
            fail(f"Resource {name} depends_on type must be list or string", at)

    condition = fields.get("condition")
    if condition is not None and not _condition_shaped(condition, version):
        fail(
            f"Resource {name} condition type must be string_or_boolean",
            (*path, keys["condition"]),
        )

    if errors:
        return None, errors
    return ResourceEntry(name=name, fields=fields, path=path, keys=keys), errors


def _condition_shaped(value: Any, version: TemplateVersion) -> bool:
    """A condition name, a boolean, or one call of a condition-context function."""
    if isinstance(value, str | bool):
        return True
    if isinstance(value, dict) and len(value) == 1:
        return next(iter(value)) in version.condition_functions
    return False


@dataclass(frozen=True)
class ResourceDefinition:
    """One enabled resource, with its fields parsed (functions not yet resolved)."""

    name: str
    type: str
    properties: Any = None
    metadata: Any = None
    depends_on: tuple[str, ...] = ()
    deletion_policy: str = "Delete"
    update_policy: Any = None
    description: str = ""
    external_id: Any = None
    path: Path = ()
    requires: frozenset[str] = field(default=frozenset())

    def snippet(self) -> dict[str, Any]:
        """The definition as template data (functions rendered back as calls)."""
        out: dict[str, Any] = {"type": self.type}
        if self.properties is not None:
            out["properties"] = self.properties
        if self.metadata is not None:
            out["metadata"] = self.metadata
        if self.depends_on:
            out["depends_on"] = list(self.depends_on)
        if self.deletion_policy != "Delete":
            out["deletion_policy"] = self.deletion_policy
        if self.update_policy is not None:
            out["update_policy"] = self.update_policy
        if self.external_id is not None:
            out["external_id"] = self.external_id
        return out


def canonical_deletion_policy(value: str) -> str:
    """``retain`` -> ``Retain``: the title-case spelling every version accepts."""
    return value[:1].upper() + value[1:].lower()
