"""The global environment: the operator's registry under every stack's registry.

Heat reads every file of ``environment_dir`` at start-up; their ``resource_registry``
entries form the *system* layer (reference template-language 6.2, 6.5): user entries
win over it, a user environment cannot delete its entries, and it alone may name local
(``file://``) templates. Reading the directory is the composition root's job
(kiln.cli.global_environment); here the already read files are merged, in the order
given, into a :class:`~kiln.schema.resource_types.GlobalEnvironment` (a null in a later
file deletes an earlier file's entry), and :func:`system_registry` makes the registry
layer a stack's environment is built over.

A template location written relative (``../templates/alarm.yaml``) is resolved against
the URL of the file that names it, as python-heatclient does for user environments, so
that a directory can ship with its templates wherever it is installed. Sections other
than ``resource_registry`` are checked but have no effect (they do nothing in Heat's
global environment either). Imports: kiln.core, kiln.schema, kiln.template.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from kiln.core.errors import KilnError
from kiln.schema.resource_types import GlobalEnvironment
from kiln.template.environment import RESOURCE_REGISTRY, parse_environment
from kiln.template.loader import load_environment
from kiln.template.registry import Resolution, ResourceRegistry, is_template_location
from kiln.template.registry_validation import HOOKS, RESTRICTED_ACTIONS


@dataclass
class MergedGlobalFiles:
    """The merged registry of the files, the templates it names, and skipped files."""

    resource_registry: dict[str, Any]
    #: every template location the merged entries name (to be read by the caller)
    template_locations: list[str]
    #: (file, why) of each file that was left out
    skipped: list[tuple[str, str]] = field(default_factory=list)


def merge_global_files(files: Sequence[tuple[str, str | bytes]]) -> MergedGlobalFiles:
    """Merge environment files, in order; ``files`` are (URL of the file, its text).

    A file that does not parse as an environment is skipped (and reported), as Heat
    logs and skips it: one bad file must not stop the engine.
    """
    registry = ResourceRegistry(system=True)
    skipped: list[tuple[str, str]] = []
    for url, text in files:
        try:
            data = load_environment(text, url).data
            parse_environment(data, name=url)
            section = data.get(RESOURCE_REGISTRY)
            if section:
                registry = registry.merged_with(_absolute_locations(section, url))
        except KilnError as err:
            skipped.append((url, str(err)))
    return MergedGlobalFiles(registry.to_dict(), registry.template_locations(), skipped)


def _absolute_locations(entries: Mapping[str, Any], base_url: str) -> dict[str, Any]:
    """The entries with every relative template location resolved against ``base_url``."""
    resolved: dict[str, Any] = {}
    for key, value in entries.items():
        if isinstance(value, Mapping) and key not in (HOOKS, RESTRICTED_ACTIONS):
            resolved[key] = _absolute_locations(value, base_url)
        elif isinstance(value, str) and is_template_location(value) and "://" not in value:
            resolved[key] = urljoin(base_url, value)
        else:
            resolved[key] = value
    return resolved


def global_environment(
    merged: MergedGlobalFiles, templates: Mapping[str, str]
) -> GlobalEnvironment:
    """The global environment of merged files and the text of the templates read for them."""
    return GlobalEnvironment(
        resource_registry=merged.resource_registry,
        templates={k: v for k, v in templates.items() if k in merged.template_locations},
    )


def system_registry(environment: GlobalEnvironment) -> ResourceRegistry | None:
    """The system registry layer of ``environment`` (None when it has no entries)."""
    if not any(v for v in environment.resource_registry.values()):
        return None
    return ResourceRegistry(environment.resource_registry, system=True)


def resolve_global_type(
    environment: GlobalEnvironment, type_name: str, is_builtin: Callable[[str], bool]
) -> Resolution:
    """What ``type_name`` is in the global environment alone (the type catalogue's view)."""
    registry = system_registry(environment) or ResourceRegistry(system=True)
    return registry.resolve(type_name, None, is_builtin)


def template_types(environment: GlobalEnvironment) -> list[str]:
    """The types the global environment maps to a template (Heat lists these among the
    resource types; plain aliases it does not list)."""
    return sorted(
        key
        for key, value in environment.resource_registry.items()
        if isinstance(value, str) and is_template_location(value) and not key.endswith("*")
    )
