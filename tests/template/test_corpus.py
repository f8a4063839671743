"""Every template of the shared corpus loads with its environment files, resolves
and has an acyclic graph, read from disk exactly as the command line reads it.

Types with a plugin are checked in full (the command line's catalogue); types of
services without plugins yet are accepted unchecked. Templates that are invalid
for Heat too are listed in EXPECTED_FAILURES with the reason and still must fail
with exactly that error.
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

# path -> (reason, the error it must give)
EXPECTED_FAILURES: dict[str, tuple[str, str]] = {
    "heat-templates/hot/octavia/servers_with_octavia.yaml": (
        "OS::Octavia::HealthMonitor has no max_retries_down property in Heat either "
        "(reference resource-types.md section 5)",
        "Unknown Property max_retries_down",
    ),
    "heat-templates/hot/software-config/example-templates/example-chef-template.yaml": (
        "OS::Heat::StructuredConfig's config is a map (reference 4); the example gives a "
        "list, which Heat rejects as well",
        "\"['recipe[nginx-pkg]']\" is not a map",
    ),
}


def test_manifest_lists_every_template() -> None:
    assert len(TEMPLATES) == MANIFEST["count"]


@pytest.mark.parametrize("entry", TEMPLATES, ids=[t["path"] for t in TEMPLATES])
def test_corpus_template(entry: dict[str, Any]) -> None:
    stack = load_local_stack(
        str(CORPUS / entry["path"]),
        [str(CORPUS / e) for e in entry.get("environment_files", [])],
    )
    if entry["path"] in EXPECTED_FAILURES:
        _, message = EXPECTED_FAILURES[entry["path"]]
        assert [e.message for e in stack.errors] == [message]
        return
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
