"""Template paths and source locations (reference 8.5: dotted keys, list indexes in brackets)."""

from __future__ import annotations

import dataclasses

import pytest

from kiln.core.paths import Location, Path, render_path


@pytest.mark.parametrize(
    ("path", "rendered"),
    [
        ((), ""),
        (("resources",), "resources"),
        (("resources", "web", "properties", "flavor"), "resources.web.properties.flavor"),
        (
            ("resources", "web", "properties", "networks", 0, "port"),
            "resources.web.properties.networks[0].port",
        ),
        (("outputs", "o", "value", "get_attr"), "outputs.o.value.get_attr"),
        (("parameter_groups", "net"), "parameter_groups.net"),
        # consecutive indexes stack on the same segment
        (("a", 0, 1, "b"), "a[0][1].b"),
        (("a", 0, 1), "a[0][1]"),
        # an index first has nothing to attach to
        ((0,), "[0]"),
        ((0, "a"), "[0].a"),
        ((0, 1), "[0][1]"),
        # keys holding dots or function names are kept verbatim
        (("resources", "a.b", "type"), "resources.a.b.type"),
        (("conditions", "c", "Fn::Equals", 0, "Ref"), "conditions.c.Fn::Equals[0].Ref"),
        (("a", -1), "a[-1]"),
    ],
)
def test_render_path(path: Path, rendered: str) -> None:
    assert render_path(path) == rendered


@pytest.mark.parametrize(
    ("path", "rendered"),
    [
        # booleans are ints in Python, but a YAML key ``yes`` is a key, not an index
        (("conditions", True), "conditions.True"),
        (("a", False, "b"), "a.False.b"),
    ],
)
def test_booleans_render_as_keys_not_indexes(path: Path, rendered: str) -> None:
    assert render_path(path) == rendered


def test_location_renders_file_line_column() -> None:
    assert str(Location("t.yaml", 3, 7)) == "t.yaml:3:7"
    assert str(Location("<template>", 1, 1)) == "<template>:1:1"


def test_location_is_a_frozen_value() -> None:
    here = Location("t.yaml", 3, 7)
    assert here == Location("t.yaml", 3, 7)
    assert here != Location("t.yaml", 3, 8)
    assert len({here, Location("t.yaml", 3, 7)}) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        here.line = 4  # type: ignore[misc]
