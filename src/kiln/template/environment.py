"""Environments: parsing one environment document, merging several, and child environments.

:func:`parse_environment` checks an already loaded document (sections, registry,
hooks, restricted actions, event sinks) and builds an :class:`Environment` whose
registry is backed by the optional global layer. :func:`merge_environment_files`
merges ``environment_files`` in order with per-parameter merge strategies (the
strategies themselves are in ``kiln.template.merge_strategies``), then applies the
request's top-level ``parameters`` so the command line wins. :meth:`Environment.child`
derives the environment of a nested (provider) stack. Imports: kiln.core,
kiln.template.registry, kiln.template.registry_validation, kiln.template.merge_strategies.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from kiln.core.errors import ConflictingMergeStrategyForParam, EnvironmentParseError, KilnError
from kiln.core.paths import Path
from kiln.template.merge_strategies import (
    OVERWRITE,
    choose_strategy,
    merge_value,
)
from kiln.template.registry import ResourceRegistry
from kiln.template.registry_validation import json_kind

PARAMETERS = "parameters"
PARAMETER_DEFAULTS = "parameter_defaults"
RESOURCE_REGISTRY = "resource_registry"
EVENT_SINKS = "event_sinks"
PARAMETER_MERGE_STRATEGIES = "parameter_merge_strategies"
ENCRYPTED_PARAM_NAMES = "encrypted_param_names"
SECTIONS: tuple[str, ...] = (
    PARAMETERS,
    PARAMETER_DEFAULTS,
    RESOURCE_REGISTRY,
    EVENT_SINKS,
    PARAMETER_MERGE_STRATEGIES,
    ENCRYPTED_PARAM_NAMES,
)
DEFAULT_NAME = "<environment>"

ZAQAR_QUEUE = "zaqar-queue"
_SINK_ARGUMENTS = {ZAQAR_QUEUE: (("target",), ("ttl",))}  # type -> (required, optional)

_NO_PARAMETERS: Mapping[str, Any] = MappingProxyType({})


@dataclass
class Environment:
    """A stack's environment; ``registry`` is the user layer over the global one."""

    parameters: dict[str, Any] = field(default_factory=dict)
    parameter_defaults: dict[str, Any] = field(default_factory=dict)
    registry: ResourceRegistry = field(default_factory=ResourceRegistry)
    event_sinks: list[dict[str, Any]] = field(default_factory=list)
    encrypted_param_names: list[str] = field(default_factory=list)
    parameter_merge_strategies: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The user-visible form; ``encrypted_param_names`` is internal and never shown."""
        return {
            PARAMETERS: copy.deepcopy(self.parameters),
            PARAMETER_DEFAULTS: copy.deepcopy(self.parameter_defaults),
            RESOURCE_REGISTRY: self.registry.to_dict(),
            EVENT_SINKS: copy.deepcopy(self.event_sinks),
        }

    def child(
        self, resource_name: str, parameters: dict[str, Any], *, exclude_type: str | None
    ) -> Environment:
        """The environment of the nested stack that resource ``resource_name`` creates.

        Inherits the registry (narrowed, minus the mapping that made ``exclude_type``
        a template resource), ``parameter_defaults`` and ``event_sinks``; its
        ``parameters`` are the given values (the resource's properties).
        """
        return Environment(
            parameters=copy.deepcopy(parameters),
            parameter_defaults=copy.deepcopy(self.parameter_defaults),
            registry=self.registry.child(resource_name, exclude_type=exclude_type),
            event_sinks=copy.deepcopy(self.event_sinks),
        )


def parse_environment(
    data: Any,
    *,
    name: str = DEFAULT_NAME,
    global_registry: ResourceRegistry | None = None,
) -> Environment:
    """Check an already loaded environment document and build the Environment.

    ``None`` or ``{}`` is the empty environment. When ``name`` is given (a file
    name), errors carry it as their category so that the file is named in messages.
    """
    try:
        return _parse(data, global_registry)
    except KilnError as err:
        if name != DEFAULT_NAME:
            err.with_category(name)
        raise


def _parse(data: Any, global_registry: ResourceRegistry | None) -> Environment:
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise EnvironmentParseError("The environment is not a valid YAML mapping data type.")
    for key, value in data.items():
        if key not in SECTIONS:
            raise EnvironmentParseError(f'environment has wrong section "{key}"', path=(key,))
        if value is None:
            raise EnvironmentParseError(f'environment has empty section "{key}"', path=(key,))
    registry_data = data.get(RESOURCE_REGISTRY)
    return Environment(
        parameters=_string_keyed_map(data, PARAMETERS),
        parameter_defaults=_string_keyed_map(data, PARAMETER_DEFAULTS),
        registry=ResourceRegistry(registry_data, parent=global_registry),
        event_sinks=_event_sinks(data.get(EVENT_SINKS, [])),
        encrypted_param_names=_names(data.get(ENCRYPTED_PARAM_NAMES, [])),
        parameter_merge_strategies={
            # Unrecognised strategies are kept: they fall back to the file's default.
            k: v if isinstance(v, str) else str(v)
            for k, v in _string_keyed_map(data, PARAMETER_MERGE_STRATEGIES).items()
        },
    )


def _string_keyed_map(data: Mapping[str, Any], section: str) -> dict[str, Any]:
    value = data.get(section, {})
    if not isinstance(value, Mapping):
        raise EnvironmentParseError(
            f'environment section "{section}" must be a map. Found a {json_kind(value)} instead',
            path=(section,),
        )
    for key in value:
        if not isinstance(key, str):
            raise EnvironmentParseError(
                f'environment section "{section}" has a non-string name {key!r}',
                path=(section,),
            )
    return copy.deepcopy(dict(value))


def _names(value: Any) -> list[str]:
    path: Path = (ENCRYPTED_PARAM_NAMES,)
    if not isinstance(value, list):
        raise EnvironmentParseError(
            f'environment section "{ENCRYPTED_PARAM_NAMES}" must be a list of names. '
            f"Found a {json_kind(value)} instead",
            path=path,
        )
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise EnvironmentParseError(
                f"Parameter names must be strings. Found a {json_kind(item)} instead",
                path=(*path, index),
            )
    return list(value)


def _event_sinks(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise EnvironmentParseError(
            f'environment section "{EVENT_SINKS}" must be a list. '
            f"Found a {json_kind(value)} instead",
            path=(EVENT_SINKS,),
        )
    return [_event_sink(item, (EVENT_SINKS, index)) for index, item in enumerate(value)]


def _event_sink(item: Any, path: Path) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        raise EnvironmentParseError(
            f"An event sink must be a map. Found a {json_kind(item)} instead", path=path
        )
    sink_type = item.get("type")
    if not isinstance(sink_type, str) or sink_type not in _SINK_ARGUMENTS:  # may be unhashable
        known = ", ".join(_SINK_ARGUMENTS)
        raise EnvironmentParseError(
            f'Unknown event sink type "{sink_type}"; known types: {known}', path=(*path, "type")
        )
    required, optional = _SINK_ARGUMENTS[sink_type]
    for key in item:
        if key != "type" and key not in required and key not in optional:
            raise EnvironmentParseError(
                f'Unknown argument "{key}" for event sink type "{sink_type}"', path=(*path, key)
            )
    for key in required:
        if key not in item:
            raise EnvironmentParseError(
                f'Event sink type "{sink_type}" requires the argument "{key}"', path=path
            )
    target = item["target"]
    if not isinstance(target, str) or not target:
        raise EnvironmentParseError(
            "The target of a zaqar-queue event sink must be a non-empty string (a queue name)",
            path=(*path, "target"),
        )
    ttl = item.get("ttl")
    if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0):
        raise EnvironmentParseError(
            f"The ttl of a zaqar-queue event sink must be a non-negative integer (seconds), "
            f"not {ttl!r}",
            path=(*path, "ttl"),
        )
    return copy.deepcopy(dict(item))


def merge_environment_files(
    base: Environment,
    files: Sequence[tuple[str, Any]],
    param_types: Mapping[str, str],
    *,
    cli_parameters: Mapping[str, Any] = _NO_PARAMETERS,
) -> Environment:
    """Merge environment files, in order, onto ``base``; then apply ``cli_parameters``.

    ``files`` are (name, loaded data) pairs; ``param_types`` maps every known
    parameter name (top-level template and templates in ``files``) to its type.
    The base is not modified.
    """
    result = Environment(
        parameters=copy.deepcopy(base.parameters),
        parameter_defaults=copy.deepcopy(base.parameter_defaults),
        registry=base.registry,
        event_sinks=copy.deepcopy(base.event_sinks),
        encrypted_param_names=list(base.encrypted_param_names),
        parameter_merge_strategies=dict(base.parameter_merge_strategies),
    )
    recorded: dict[str, str] = {}  # strategy per parameter, set by the first file using it
    for file_name, data in files:
        env = parse_environment(data, name=file_name, global_registry=base.registry.parent)
        for section in (PARAMETERS, PARAMETER_DEFAULTS):
            try:
                _merge_section(
                    getattr(result, section),
                    getattr(env, section),
                    section,
                    env.parameter_merge_strategies,
                    recorded,
                    param_types,
                    file_name,
                )
            except KilnError as err:
                raise err.with_category(file_name) from None
        if isinstance(data, Mapping) and data.get(RESOURCE_REGISTRY):
            # The raw section, so that its nulls still delete earlier files' entries.
            result.registry = result.registry.merged_with(data[RESOURCE_REGISTRY])
        result.event_sinks.extend(env.event_sinks)
        for param in env.encrypted_param_names:
            if param not in result.encrypted_param_names:
                result.encrypted_param_names.append(param)
    result.parameter_merge_strategies.update(recorded)
    # Rec of quirk 23: the request's own parameters (the command line) win over files.
    for key, value in cli_parameters.items():
        result.parameters[key] = copy.deepcopy(value)
    return result


def _merge_section(
    target: dict[str, Any],
    incoming: Mapping[str, Any],
    section: str,
    strategies: Mapping[str, str],
    recorded: dict[str, str],
    param_types: Mapping[str, str],
    file_name: str,
) -> None:
    was_empty = not target
    for key, value in incoming.items():
        if value is None:
            continue
        if key not in param_types:
            # Heat quirk kept: into a still empty section, unknown names are copied
            # (so a typo in `parameters` is still reported as an unknown parameter).
            if was_empty:
                target[key] = copy.deepcopy(value)
            continue
        strategy = choose_strategy(strategies, key, recorded.get(key))
        if key in recorded and strategy != recorded[key]:
            raise ConflictingMergeStrategyForParam(
                f"Conflicting merge strategy '{strategy}' for parameter '{key}' "
                f"in file '{file_name}'.",
                path=(PARAMETER_MERGE_STRATEGIES, key),
            )
        recorded.setdefault(key, strategy)
        if strategy == OVERWRITE or key not in target:
            target[key] = copy.deepcopy(value)
        else:
            target[key] = merge_value(
                strategy, param_types[key], target[key], value, key, (section, key)
            )
