"""Compiled stack definitions, built once per template and cached.

A traversal resolves the same template for every node: the definition
(parameters, conditions, parsed resources, graph) is built once per
(raw template, stack identity) and kept in an LRU cache, so per-node work
does not grow with the stack (Heat reloads the whole stack for every node).
Values of created resources come from their rows through ``RowState``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kiln.db.resources import Resource as ResourceRow
from kiln.schema.custom import CustomConstraints
from kiln.schema.resource_types import ResourceTypes
from kiln.template.functions.base import iter_functions, resolve_top
from kiln.template.functions.references import GetAttr, select_path
from kiln.template.inputs import build_stack
from kiln.template.stack import StackDefinition, StackIdentity

ALL_ATTRIBUTES = "*"


@dataclass
class CompiledStack:
    """One template made ready for a stack: definition plus what successors read."""

    definition: StackDefinition
    #: resource name -> attribute names referenced anywhere (ALL_ATTRIBUTES for get_attr [r])
    wanted: dict[str, set[str]] = field(default_factory=dict)


def wanted_attributes(definition: StackDefinition) -> dict[str, set[str]]:
    """Attributes that properties, metadata and outputs read, by resource."""
    wanted: dict[str, set[str]] = {}
    values: list[Any] = []
    for res in definition.resources.values():
        values += [res.properties, res.metadata]
    values += [out.value for out in definition.outputs.values()]
    for value in values:
        for fn in iter_functions(value):
            if isinstance(fn, GetAttr) and isinstance(fn.args, list) and fn.args:
                name = fn.args[0]
                if not isinstance(name, str):
                    continue
                attr = fn.args[1] if len(fn.args) > 1 else ALL_ATTRIBUTES
                wanted.setdefault(name, set()).add(
                    attr if isinstance(attr, str) else ALL_ATTRIBUTES
                )
    return wanted


class CompiledCache:
    """An LRU of compiled stacks keyed by (raw template id, stack id).

    Large: every member of a group is a stack of its own, and a miss compiles a whole
    template; a compiled member stack is a few kilobytes.
    """

    def __init__(self, types: ResourceTypes, custom: CustomConstraints, size: int = 2048) -> None:
        self.types = types
        self.custom = custom
        self._size = size
        self._items: OrderedDict[tuple[str, str], CompiledStack] = OrderedDict()
        self._lock = threading.Lock()
        self._flights: dict[tuple[str, str], threading.Lock] = {}

    def get(
        self,
        raw_template_id: str,
        template: Mapping[str, Any],
        environment: Mapping[str, Any],
        files: Mapping[str, Any],
        identity: StackIdentity,
    ) -> CompiledStack:
        key = (raw_template_id, identity.id or "")
        found = self._lookup(key)
        if found is not None:
            return found
        # One compile per key: the workers that miss at once (every engine's first
        # steps of a big stack) wait for it instead of each compiling the same template.
        with self._lock:
            flight = self._flights.setdefault(key, threading.Lock())
        with flight:
            found = self._lookup(key)
            if found is None:
                found = self._compile(key, template, environment, files, identity)
        with self._lock:
            self._flights.pop(key, None)
        return found

    def peek(self, raw_template_id: str, stack_id: str) -> CompiledStack | None:
        """The compiled stack when it is cached (no template needed to ask)."""
        return self._lookup((raw_template_id, stack_id))

    def _lookup(self, key: tuple[str, str]) -> CompiledStack | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def _compile(
        self,
        key: tuple[str, str],
        template: Mapping[str, Any],
        environment: Mapping[str, Any],
        files: Mapping[str, Any],
        identity: StackIdentity,
    ) -> CompiledStack:
        definition = build_stack(
            dict(template),
            environment=dict(environment),
            files=dict(files),
            identity=identity,
            types=self.types,
            custom=self.custom,
            check_values=False,
        )
        return self._store(key, definition)

    def put(self, raw_template_id: str, definition: StackDefinition) -> None:
        """Keep a definition just built from the same stored template (a stack being
        created), so its first step does not compile it again."""
        self._store((raw_template_id, definition.identity.id or ""), definition)

    def _store(self, key: tuple[str, str], definition: StackDefinition) -> CompiledStack:
        compiled = CompiledStack(definition, wanted_attributes(definition))
        with self._lock:
            self._items[key] = compiled
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return compiled


class RowState:
    """Function context of a definition, with live values from resource rows."""

    def __init__(self, definition: StackDefinition, rows: Mapping[str, ResourceRow]) -> None:
        self._d = definition
        self._rows = rows

    def __getattr__(self, name: str) -> Any:  # parameters, files, conditions ...
        return getattr(self._d, name)

    def resource_reference(self, name: str) -> Any:
        row = self._rows.get(name)
        if row is None or row.reference_id is None:
            return name
        return row.reference_id

    def resource_attribute(self, name: str, attribute: str, path: tuple[Any, ...]) -> Any:
        row = self._rows.get(name)
        if row is None:
            return None
        return select_path(row.attributes.get(attribute), path)

    def resource_attributes(self, name: str) -> Any:
        row = self._rows.get(name)
        if row is None:
            return None
        return {k: v for k, v in row.attributes.items() if k != "show"}

    def resolve(self, value: Any) -> Any:
        return resolve_top(value, self)
