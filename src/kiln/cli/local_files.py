"""Reading templates and environments from disk, as python-heatclient does.

The engine never reads local files: a client uploads them in the ``files`` map
under absolute URLs and rewrites the template to name those URLs. This module
does the same for the command line: ``get_file`` values and ``type`` values
ending in ``.yaml``/``.template`` are resolved against the file that names them,
read, added to ``files`` and rewritten; registry values in environments are
resolved against the environment file (or its ``base_url``).
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlparse
from urllib.request import url2pathname

from kiln.core.errors import StackValidationFailed, UserError
from kiln.schema.custom import CustomConstraints
from kiln.template.inputs import build_stack
from kiln.template.loader import Document, load_environment, load_template
from kiln.template.stack import StackDefinition

TEMPLATE_SUFFIXES = (".yaml", ".template")


@dataclass
class LocalInput:
    """A template with its environments and the files map built from disk."""

    template: Document
    environments: list[tuple[str, Document]] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    #: nested templates with their file references rewritten, by URL (what a client
    #: uploads, as heatclient does; ``files`` keeps the text, for line numbers offline)
    templates: dict[str, Any] = field(default_factory=dict)


def file_url(path: str | pathlib.Path) -> str:
    return pathlib.Path(path).resolve().as_uri()


def _read_url(url: str) -> str:
    parsed = urlparse(url)
    if parsed.scheme != "file":
        raise StackValidationFailed(f'Could not fetch "{url}": only local files are read offline')
    path = pathlib.Path(url2pathname(parsed.path))
    try:
        data = path.read_bytes()
    except OSError as err:
        raise StackValidationFailed(f'Could not read "{path}": {err.strerror}') from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise StackValidationFailed(f'"{path}" is not UTF-8 text') from None


class _Collector:
    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        self.templates: dict[str, Any] = {}
        self._templates_done: set[str] = set()

    def template(self, url: str) -> Document:
        text = _read_url(url)
        doc = load_template(text, _display(url))
        self._process_template(doc.data, url)
        return doc

    def _add_file(self, url: str) -> str:
        if url not in self.files:
            self.files[url] = _read_url(url)
        return self.files[url]

    def _nested_template(self, url: str) -> None:
        content = self._add_file(url)
        if url in self._templates_done:
            return
        self._templates_done.add(url)
        try:
            doc = load_template(content, _display(url))
        except UserError:
            return  # reported when the nested template is validated
        self._process_template(doc.data, url)
        self.templates[url] = doc.data

    def _process_template(self, data: Any, base: str) -> None:
        if not isinstance(data, dict):
            return
        self._rewrite_get_file(data, base)
        for section in ("resources", "Resources"):
            resources = data.get(section)
            if not isinstance(resources, dict):
                continue
            for body in resources.values():
                if not isinstance(body, dict):
                    continue
                for key in ("type", "Type"):
                    value = body.get(key)
                    if isinstance(value, str) and value.endswith(TEMPLATE_SUFFIXES):
                        url = urljoin(base, value)
                        self._nested_template(url)
                        body[key] = url

    def _rewrite_get_file(self, data: Any, base: str) -> None:
        stack = [data]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                if len(item) == 1 and isinstance(item.get("get_file"), str):
                    url = urljoin(base, item["get_file"])
                    if url.endswith(TEMPLATE_SUFFIXES):
                        self._nested_template(url)  # e.g. an OS::Heat::Stack template
                    else:
                        self._add_file(url)
                    item["get_file"] = url
                    continue
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)

    def environment(self, url: str) -> Document:
        text = _read_url(url)
        doc = load_environment(text, _display(url))
        registry = doc.data.get("resource_registry") if isinstance(doc.data, dict) else None
        if isinstance(registry, dict):
            base = registry.get("base_url") or url
            if base is not url and not base.endswith("/"):
                base += "/"  # base_url names a directory, as in heatclient
            self._rewrite_registry(registry, base)
        return doc

    def _rewrite_registry(self, registry: dict[str, Any], base: str) -> None:
        for key, value in list(registry.items()):
            if key in ("base_url", "hooks", "restricted_actions"):
                continue
            if isinstance(value, dict):
                self._rewrite_registry(value, base)
            elif isinstance(value, str) and "::" not in value:
                url = urljoin(base, value)
                if value.endswith(TEMPLATE_SUFFIXES):
                    self._nested_template(url)
                else:
                    self._add_file(url)
                registry[key] = url
        registry.pop("base_url", None)


def _display(url: str) -> str:
    parsed = urlparse(url)
    if parsed.scheme == "file":
        path = pathlib.Path(url2pathname(parsed.path))
        try:
            return str(path.relative_to(pathlib.Path.cwd()))
        except ValueError:
            return str(path)
    return url


def read_local_input(template_path: str, environment_paths: list[str]) -> LocalInput:
    """Read a template and its environment files from disk, heatclient-style."""
    collector = _Collector()
    environments = [(file_url(p), collector.environment(file_url(p))) for p in environment_paths]
    template = collector.template(file_url(template_path))
    return LocalInput(
        template=template,
        environments=environments,
        files=collector.files,
        templates=collector.templates,
    )


def load_local_stack(
    template_path: str,
    environment_paths: list[str],
    parameters: dict[str, Any] | None = None,
    **options: Any,
) -> StackDefinition:
    """Read from disk (heatclient-style) and build the stack definition.

    ``options`` go to :func:`kiln.template.inputs.build_stack`; by default values
    given are checked and parameters without any value are tolerated, as
    offline validation does.
    """
    local = read_local_input(template_path, environment_paths)
    options.setdefault("check_values", True)
    options.setdefault("allow_missing", True)
    if "types" not in options:
        from kiln.cli.resource_types import command_line_types

        registry = command_line_types()
        options["types"] = registry
        options.setdefault(
            "custom", registry.registry.custom_constraints(CustomConstraints.offline())
        )
    return build_stack(
        local.template,
        environment_files=local.environments,
        files=local.files,
        parameters=parameters,
        **options,
    )
