"""Every template of the shared corpus loads with its environment files, resolves
and has an acyclic graph, read from disk exactly as the command line reads it.

Resource types are not checked yet (no plugin registry): any exception to "valid"
would be listed in EXPECTED_FAILURES with its reason. There is none today.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kiln.cli.local_files import load_local_stack
from kiln.template.report import resolved_outputs, resolved_resources
from tests_support import CORPUS

MANIFEST = yaml.safe_load((CORPUS / "MANIFEST.yaml").read_text())
TEMPLATES: list[dict[str, Any]] = MANIFEST["templates"]

# path -> reason. Empty: every corpus template validates.
EXPECTED_FAILURES: dict[str, str] = {}


def test_manifest_lists_every_template() -> None:
    assert len(TEMPLATES) == MANIFEST["count"]


@pytest.mark.parametrize("entry", TEMPLATES, ids=[t["path"] for t in TEMPLATES])
def test_corpus_template(entry: dict[str, Any]) -> None:
    if entry["path"] in EXPECTED_FAILURES:
        pytest.skip(EXPECTED_FAILURES[entry["path"]])
    stack = load_local_stack(
        str(CORPUS / entry["path"]),
        [str(CORPUS / e) for e in entry.get("environment_files", [])],
    )
    assert not stack.errors, "\n".join(f"{e.location}: {e.full_message}" for e in stack.errors)
    order = stack.creation_order()
    assert sorted(order) == sorted(stack.resources)
    position = {name: i for i, name in enumerate(order)}
    for name, definition in stack.resources.items():
        for dep in definition.requires:
            assert position[dep] < position[name]
    assert len(stack.resources) + len(stack.disabled) == entry["resources"]
    assert len(resolved_resources(stack)) == len(stack.resources)
    assert len(resolved_outputs(stack)) == entry["outputs"]
