"""The update decision: keep, update in place or replace (reference resource-types 0.3)."""

from __future__ import annotations

import pytest

from kiln.core.errors import NotSupported
from kiln.plugin.decisions import StoredResource, decide_update
from kiln.schema.properties import PropertySchema, PropertyType

SCHEMAS = {
    "size": PropertySchema(PropertyType.INTEGER, "", update_allowed=True),
    "flavor": PropertySchema(PropertyType.STRING, ""),
    "zone": PropertySchema(PropertyType.STRING, "", immutable=True),
}
DONE = StoredResource("CREATE", "COMPLETE", {"size": 1, "flavor": "a", "zone": "z"})
FAILED = StoredResource("CREATE", "FAILED", {"size": 1, "flavor": "a", "zone": "z"})


def test_nothing_changed_is_kept() -> None:
    assert decide_update(DONE, dict(DONE.properties), None, SCHEMAS).kind == "unchanged"


def test_updatable_changes_update_in_place_others_replace() -> None:
    assert decide_update(DONE, {**DONE.properties, "size": 2}, None, SCHEMAS).kind == "update"
    replaced = decide_update(DONE, {**DONE.properties, "flavor": "b"}, None, SCHEMAS)
    assert (replaced.kind, replaced.changed) == ("replace", {"flavor": "b"})
    with pytest.raises(NotSupported):
        decide_update(DONE, {**DONE.properties, "zone": "y"}, None, SCHEMAS)


def test_a_failed_resource_is_replaced_unless_the_plugin_keeps_it() -> None:
    same = dict(FAILED.properties)
    assert decide_update(FAILED, same, None, SCHEMAS).kind == "replace"
    kept = decide_update(FAILED, same, None, SCHEMAS, replace_failed=False)
    assert kept.kind == "update" and "FAILED" in kept.reason  # an update brings it back
    changed = decide_update(FAILED, {**same, "flavor": "b"}, None, SCHEMAS, replace_failed=False)
    assert changed.kind == "replace"  # a change that needs a new one still replaces
