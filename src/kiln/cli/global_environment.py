"""Reading the global environment from ``[DEFAULT] environment_dir`` (Heat's option).

Every regular file of the directory is an environment; they are merged in file-name
order (Heat takes the directory's listing order, which is arbitrary), and a file that
does not parse is logged and skipped, as in Heat. The local (``file://``) templates the
merged registry names are read here too, once, so that the template layer never
touches the disk. Kiln's own directory, the default, ships in the package beside the
plugins: ``kiln/resources/environment.d`` (aliases of old type names) with its
provider templates in ``kiln/resources/templates``.
"""

from __future__ import annotations

import functools
import logging
import pathlib
from urllib.parse import urlparse
from urllib.request import url2pathname

import kiln.resources
from kiln.schema.resource_types import GlobalEnvironment
from kiln.template.global_environment import global_environment, merge_global_files

log = logging.getLogger(__name__)

#: the global environment Kiln ships (the default of ``environment_dir``)
PACKAGED_ENVIRONMENT_DIR = pathlib.Path(kiln.resources.__file__).parent / "environment.d"


def read_environment_dir(directory: str | pathlib.Path) -> GlobalEnvironment:
    """The global environment of the files in ``directory`` (empty when it is unreadable)."""
    root = pathlib.Path(directory).expanduser()
    try:
        paths = sorted(p for p in root.iterdir() if p.is_file() and not p.name.startswith("."))
    except OSError as err:
        log.warning("global environment: cannot read %s: %s", root, err)
        return GlobalEnvironment()
    files: list[tuple[str, bytes]] = []
    for path in paths:
        try:
            files.append((path.resolve().as_uri(), path.read_bytes()))
        except OSError as err:
            log.warning("global environment: skipped %s: %s", path, err)
    merged = merge_global_files(files)
    for name, why in merged.skipped:
        log.warning("global environment: skipped %s: %s", name, why)
    templates: dict[str, str] = {}
    for location in merged.template_locations:
        text = _read_template(location)
        if text is not None:
            templates[location] = text
    for name, _ in files:
        log.info("global environment: loaded %s", name)
    return global_environment(merged, templates)


def _read_template(location: str) -> str | None:
    parsed = urlparse(location)
    if parsed.scheme != "file":
        # Kiln fetches no URL: only local templates are read for the global environment.
        log.warning("global environment: %s is not a local (file://) template", location)
        return None
    try:
        return pathlib.Path(url2pathname(parsed.path)).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        log.warning("global environment: cannot read template %s: %s", location, err)
        return None


@functools.cache
def packaged_global_environment() -> GlobalEnvironment:
    """Kiln's own global environment, read once per process."""
    return read_environment_dir(PACKAGED_ENVIRONMENT_DIR)
