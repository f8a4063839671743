"""The resource registry of an environment: how a resource's ``type`` is implemented.

A :class:`ResourceRegistry` holds one layer of ``resource_registry`` entries (type
aliases, wildcards, template resources, the per-resource section with type overrides,
hooks and restricted actions) and is backed by an optional parent layer, the global
(system) environment. :meth:`ResourceRegistry.resolve` turns a type name into a
:class:`Resolution` (built-in type, template location, or missing) without side
effects; whether a built-in type exists is asked of the caller. Entry validation
(shapes, hook names, restricted actions) is in ``kiln.template.registry_validation``
and runs whenever a registry is built or merged. Imports: kiln.core,
kiln.template.registry_validation.
"""

from __future__ import annotations

import copy
import fnmatch
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kiln.template.registry_validation import (
    HOOKS,
    RESOURCES,
    RESTRICTED_ACTIONS,
    VALID_HOOKS,
    VALID_RESTRICTED_ACTIONS,
    validate_registry,
)

__all__ = [
    "TEMPLATE_SUFFIXES",
    "VALID_HOOKS",
    "VALID_RESTRICTED_ACTIONS",
    "Resolution",
    "ResourceRegistry",
    "is_template_location",
]

TEMPLATE_SUFFIXES: tuple[str, ...] = (".yaml", ".template")
_SPECIAL_KEYS = frozenset({RESOURCES, HOOKS, RESTRICTED_ACTIONS})

# Bounds for alias resolution: a loop of names is caught by the chain check, but a
# wildcard with suffix substitution can grow a name forever ("A::*": "A::B::*").
_MAX_DEPTH = 64
_MAX_STEPS = 2000

ResolutionKind = Literal["builtin", "template", "missing"]


def is_template_location(name: str) -> bool:
    """Whether a type or registry value names a template (exactly these suffixes)."""
    return name.endswith(TEMPLATE_SUFFIXES)


@dataclass(frozen=True, slots=True)
class Resolution:
    """What a resource type resolved to.

    ``target`` is the built-in type name (after aliases) or the template location;
    for ``missing`` it is the requested type. ``entry`` is the registry path of the
    mapping that produced a template (None for a literal template type), and
    ``system`` says that mapping came from a system (global) layer, which alone may
    name ``file://`` templates.
    """

    kind: ResolutionKind
    target: str
    type_name: str
    entry: tuple[str, ...] | None = None
    system: bool = False

    @property
    def found(self) -> bool:
        return self.kind != "missing"


@dataclass(frozen=True, slots=True)
class _Candidate:
    target: str
    path: tuple[str, ...]
    template: bool


class ResourceRegistry:
    """One layer of registry entries, backed by an optional parent (global) layer."""

    def __init__(
        self,
        entries: Mapping[str, Any] | None = None,
        *,
        parent: ResourceRegistry | None = None,
        system: bool = False,
    ) -> None:
        self._entries: dict[str, Any] = {}
        if entries is not None:
            # Entries apply in order, so a null deletes what an earlier key registered.
            _apply(self._entries, validate_registry(entries))
        self.parent = parent
        self.system = system

    @classmethod
    def _make(
        cls, entries: dict[str, Any], parent: ResourceRegistry | None, system: bool
    ) -> ResourceRegistry:
        """Build from already normalised entries (no nulls); they are not copied."""
        made = cls(parent=parent, system=system)
        made._entries = entries
        return made

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ResourceRegistry):
            return NotImplemented
        return (self._entries, self.system, self.parent) == (
            other._entries,
            other.system,
            other.parent,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable-looking value object

    def __repr__(self) -> str:
        kind = "system" if self.system else "user"
        return f"ResourceRegistry({kind}, {self._entries!r}, parent={self.parent!r})"

    def _layers(self) -> Iterator[ResourceRegistry]:
        layer: ResourceRegistry | None = self
        while layer is not None:
            yield layer
            layer = layer.parent

    # -- resolution ---------------------------------------------------------------

    def resolve(
        self, type_name: str, resource_name: str | None, is_builtin: Callable[[str], bool]
    ) -> Resolution:
        """Resolve a resource type for the named resource; never changes the registry."""
        found = self._search(type_name, type_name, resource_name, is_builtin, [], [_MAX_STEPS])
        if found is None:
            return Resolution("missing", type_name, type_name)
        return found[0]

    def _search(
        self,
        original: str,
        current: str,
        resource_name: str | None,
        is_builtin: Callable[[str], bool],
        chain: list[str],
        budget: list[int],
    ) -> tuple[Resolution, ResourceRegistry | None] | None:
        """Depth-first: the first candidate that resolves wins (backtracking on failure)."""
        if current in chain or len(chain) >= _MAX_DEPTH or budget[0] <= 0:
            return None
        budget[0] -= 1
        if is_template_location(current):
            # A literal template type; only an exact entry of this layer can redirect it.
            cand = next(self._candidates(current, resource_name, wildcards=False), None)
            if cand is not None:
                return self._template(original, cand, self), self
            return Resolution("template", current, original), None
        chain.append(current)
        try:
            for layer in self._layers():
                for cand in layer._candidates(current, resource_name, wildcards=True):
                    if cand.template:
                        return self._template(original, cand, layer), layer
                    found = self._search(
                        original, cand.target, resource_name, is_builtin, chain, budget
                    )
                    if found is not None:
                        return found
            if is_builtin(current):
                return Resolution("builtin", current, original), None
            return None
        finally:
            chain.pop()

    @staticmethod
    def _template(original: str, cand: _Candidate, layer: ResourceRegistry) -> Resolution:
        return Resolution("template", cand.target, original, cand.path, layer.system)

    def _candidates(
        self, type_name: str, resource_name: str | None, *, wildcards: bool
    ) -> Iterator[_Candidate]:
        """This layer's entries for a type: per-resource (exact name) first, then type-level."""
        if resource_name is not None:
            section = self._entries.get(RESOURCES)
            if isinstance(section, dict):
                own = section.get(resource_name)
                if isinstance(own, dict):
                    yield from _matches(own, type_name, (RESOURCES, resource_name), wildcards)
        yield from _matches(self._entries, type_name, (), wildcards)

    # -- per-resource section -----------------------------------------------------

    def hooks_for(self, resource_name: str) -> frozenset[str]:
        """Hooks set on the resource by every matching per-resource entry, all layers."""
        return self._per_resource_values(resource_name, HOOKS)

    def restricted_actions_for(self, resource_name: str) -> frozenset[str]:
        """Restricted actions of the resource from every matching entry, all layers."""
        return self._per_resource_values(resource_name, RESTRICTED_ACTIONS)

    def _per_resource_values(self, resource_name: str, key: str) -> frozenset[str]:
        found: set[str] = set()
        for layer in self._layers():
            section = layer._entries.get(RESOURCES)
            if not isinstance(section, dict):
                continue
            for pattern, entry in section.items():
                if isinstance(entry, dict) and _name_matches(resource_name, pattern):
                    found.update(_as_names(entry.get(key)))
        return frozenset(found)

    def child(self, resource_name: str, *, exclude_type: str | None) -> ResourceRegistry:
        """The registry of the nested stack created by resource ``resource_name``.

        The mapping through which ``exclude_type`` became a template resource is
        removed (from whichever layer holds it), and the user layer's per-resource
        section becomes the union of the nested entries of every pattern matching the
        resource, the exact entry applied last.
        """
        base = self
        if exclude_type is not None:
            found = self._search(
                exclude_type, exclude_type, resource_name, lambda _name: False, [], [_MAX_STEPS]
            )
            if found is not None and found[1] is not None and found[0].entry is not None:
                base = self._without(found[1], found[0].entry)
        entries = {k: v for k, v in base._entries.items() if k != RESOURCES}
        narrowed = _narrow(base._entries.get(RESOURCES), resource_name)
        if narrowed:
            entries[RESOURCES] = narrowed
        return ResourceRegistry._make(copy.deepcopy(entries), base.parent, base.system)

    def _without(self, layer: ResourceRegistry, path: tuple[str, ...]) -> ResourceRegistry:
        """A copy of this chain with the entry at ``path`` of ``layer`` removed."""
        if layer is self:
            entries = copy.deepcopy(self._entries)
            holder: Any = entries
            for key in path[:-1]:
                holder = holder.get(key) if isinstance(holder, dict) else None
            if isinstance(holder, dict):
                holder.pop(path[-1], None)
            return ResourceRegistry._make(entries, self.parent, self.system)
        parent = self.parent._without(layer, path) if self.parent is not None else None
        return ResourceRegistry._make(self._entries, parent, self.system)

    # -- views and updates --------------------------------------------------------

    def template_locations(self) -> list[str]:
        """Every template location this layer names (type-level and per-resource)."""
        found: list[str] = []
        _collect_locations(self._entries, found)
        return list(dict.fromkeys(found))

    def to_dict(self) -> dict[str, Any]:
        """This layer's entries as an environment's ``resource_registry`` section."""
        out = {k: copy.deepcopy(v) for k, v in self._entries.items() if k != RESOURCES}
        out[RESOURCES] = copy.deepcopy(self._entries.get(RESOURCES, {}))
        return out

    def merged_with(self, other_entries: Mapping[str, Any]) -> ResourceRegistry:
        """This layer updated recursively by more entries; a null deletes."""
        entries = copy.deepcopy(self._entries)
        _apply(entries, validate_registry(other_entries))
        return ResourceRegistry._make(entries, self.parent, self.system)


def _name_matches(resource_name: str, pattern: str) -> bool:
    return pattern == resource_name or fnmatch.fnmatchcase(resource_name, pattern)


def _as_names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _matches(
    mapping: dict[str, Any], type_name: str, prefix: tuple[str, ...], wildcards: bool
) -> Iterator[_Candidate]:
    """Exact entry first, then wildcards, longest prefix first (the Rec for quirk 24)."""
    value = mapping.get(type_name)
    if isinstance(value, str) and type_name not in _SPECIAL_KEYS:
        template = is_template_location(type_name) or is_template_location(value)
        yield _Candidate(value, (*prefix, type_name), template)
    if not wildcards:
        return
    globs = [
        key
        for key, val in mapping.items()
        if isinstance(val, str)
        and key.endswith("*")
        and key != type_name
        and key not in _SPECIAL_KEYS
        and type_name.startswith(key[:-1])
    ]
    for key in sorted(globs, key=lambda k: (-len(k), k)):
        stem, val = key[:-1], mapping[key]
        target = val[:-1] + type_name[len(stem) :] if val.endswith("*") else val
        if target == type_name:
            continue  # a wildcard never matches its own target
        yield _Candidate(target, (*prefix, key), is_template_location(target))


def _narrow(section: Any, resource_name: str) -> dict[str, Any]:
    """Union of the nested entries of every per-resource entry matching the name."""
    result: dict[str, Any] = {}
    if not isinstance(section, dict):
        return result
    exact: dict[str, Any] | None = None
    for pattern, entry in section.items():
        if not isinstance(entry, dict):
            continue
        if pattern == resource_name:
            exact = entry
        elif fnmatch.fnmatchcase(resource_name, pattern):
            _apply(result, _nested_only(entry))
    if exact is not None:
        _apply(result, _nested_only(exact))
    return result


def _nested_only(entry: dict[str, Any]) -> dict[str, Any]:
    # Type overrides and hooks of the resource itself do not reach inside its stack.
    return {k: v for k, v in entry.items() if isinstance(v, dict)}


def _collect_locations(mapping: dict[str, Any], found: list[str]) -> None:
    for key, value in mapping.items():
        if key in (HOOKS, RESTRICTED_ACTIONS):
            continue
        if isinstance(value, dict):
            _collect_locations(value, found)
        elif isinstance(value, str) and (is_template_location(key) or is_template_location(value)):
            found.append(value)


def _apply(target: dict[str, Any], updates: Mapping[str, Any]) -> None:
    """Merge validated entries into ``target`` in order; maps merge, nulls delete."""
    for key, value in updates.items():
        if value is None:
            target.pop(key, None)
            if key.endswith("*"):
                stem = key[:-1]
                doomed = [
                    k
                    for k, v in target.items()
                    if isinstance(v, str) and k.startswith(stem) and k not in _SPECIAL_KEYS
                ]
                for k in doomed:
                    del target[k]
        elif isinstance(value, Mapping):
            existing = target.get(key)
            if not isinstance(existing, dict):
                existing = target[key] = {}
            _apply(existing, value)
        else:
            target[key] = copy.deepcopy(value)
