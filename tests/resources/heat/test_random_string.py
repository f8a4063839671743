"""OS::Heat::RandomString: classes, sequences, minimums, the hidden alias, replacement."""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Any

import pytest
from heat_schema_support import NO_DEFAULT, allowed, in_range, table, undocumented
from hypothesis import given, settings
from hypothesis import strategies as st

from kiln.core.errors import StackValidationFailed
from kiln.plugin import PluginRegistry
from kiln.plugin.names import physical_resource_name
from kiln.resources.heat.random_string import TOO_SHORT, RandomString
from kiln.schema.custom import CustomConstraints
from kiln.testing.plugin_context import decide, fake_resource, run_action

CLASSES = allowed(
    "lettersdigits", "letters", "lowercase", "uppercase", "digits", "hexdigits", "octdigits"
)
COUNT = in_range(1, 512)
LETTERSDIGITS = set(string.ascii_letters + string.digits)


def test_schema_matches_the_reference() -> None:
    assert table(RandomString.properties_schema) == {
        "length": ("integer", False, 32, False, [COUNT]),
        "sequence": ("string", False, NO_DEFAULT, False, [CLASSES]),
        "character_classes": (
            "list",
            False,
            [{"class": "lettersdigits", "min": 1}],
            False,
            [],
        ),
        "character_classes[].class": ("string", False, "lettersdigits", False, [CLASSES]),
        "character_classes[].min": ("integer", False, 1, False, [COUNT]),
        "character_sequences": ("list", False, NO_DEFAULT, False, []),
        "character_sequences[].sequence": ("string", True, NO_DEFAULT, False, []),
        "character_sequences[].min": ("integer", False, 1, False, [COUNT]),
        "salt": ("string", False, NO_DEFAULT, False, []),
    }
    assert RandomString.properties_schema["sequence"].support_status.status == "HIDDEN"
    assert list(RandomString.attributes_schema) == ["value"]
    assert undocumented(RandomString) == []


def created(properties: dict[str, Any] | None = None, **kw: Any) -> str:
    res, _ = fake_resource(RandomString, properties, **kw)
    run_action(res, "create")
    value = res.get_attribute("value")
    assert isinstance(value, str)
    return value


def test_create_stores_the_string_redacted_and_get_resource_returns_it() -> None:
    res, ctx = fake_resource(RandomString, name="pw", stack_name="s")
    assert res.reference_id() == "pw"
    assert res.get_attribute("value") is None
    assert run_action(res, "create") == 1
    value = ctx.data["value"]
    assert len(value) == 32 and set(value) <= LETTERSDIGITS
    assert ctx.redacted == {"value"}
    assert ctx.physical_id == physical_resource_name("s", "pw", ctx.resource_uuid)
    assert res.reference_id() == value
    assert res.get_attribute("value") == value


def test_the_string_comes_from_the_context_randomness() -> None:
    assert created(seed=7) == created(seed=7) != created(seed=8)


@pytest.mark.parametrize(
    ("klass", "characters"),
    [
        ("lettersdigits", string.ascii_letters + string.digits),
        ("letters", string.ascii_letters),
        ("lowercase", string.ascii_lowercase),
        ("uppercase", string.ascii_uppercase),
        ("digits", string.digits),
        ("hexdigits", "0123456789ABCDEF"),
        ("octdigits", "01234567"),
    ],
)
def test_character_classes(klass: str, characters: str) -> None:
    value = created({"length": 200, "character_classes": [{"class": klass}]})
    assert len(value) == 200
    assert set(value) <= set(characters)


def test_minimums_of_classes_and_sequences_are_met() -> None:
    value = created(
        {
            "length": 10,
            "character_classes": [{"class": "digits", "min": 4}, {"class": "lowercase", "min": 4}],
            "character_sequences": [{"sequence": "!!@", "min": 2}],
        }
    )
    counts = Counter("digit" if c.isdigit() else "lower" if c.islower() else c for c in value)
    assert counts["digit"] == 4 and counts["lower"] == 4
    assert counts["!"] + counts["@"] == 2


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    mins=st.lists(st.integers(1, 5), min_size=1, max_size=4),
    extra=st.integers(0, 10),
)
def test_each_sequence_gets_at_least_its_minimum(seed: int, mins: list[int], extra: int) -> None:
    alphabets = ["ab", "cd", "ef", "gh"][: len(mins)]
    sequences = [{"sequence": s, "min": m} for s, m in zip(alphabets, mins)]
    length = sum(mins) + extra
    value = created(
        {"length": length, "character_classes": [], "character_sequences": sequences}, seed=seed
    )
    assert len(value) == length
    for alphabet, minimum in zip(alphabets, mins):
        assert sum(c in alphabet for c in value) >= minimum
    assert set(value) <= set("".join(alphabets))


def test_sequences_alone_still_get_the_default_class() -> None:
    value = created({"length": 300, "character_sequences": [{"sequence": "#"}]})
    assert "#" in value
    assert set(value) - {"#"} <= LETTERSDIGITS and set(value) - {"#"}


def test_empty_classes_leave_only_the_sequences() -> None:
    value = created(
        {"length": 50, "character_classes": [], "character_sequences": [{"sequence": "xy"}]}
    )
    assert set(value) <= {"x", "y"}


def test_hidden_sequence_replaces_the_default_classes() -> None:
    value = created({"length": 64, "sequence": "octdigits"})
    assert set(value) <= set("01234567")


def test_hidden_sequence_joins_explicit_classes() -> None:
    value = created(
        {"length": 8, "sequence": "digits", "character_classes": [{"class": "lowercase", "min": 7}]}
    )
    assert sum(c.isdigit() for c in value) >= 1 and sum(c.islower() for c in value) >= 7
    assert set(value) <= set(string.ascii_lowercase + string.digits)


TOO_MANY = {
    "length": 4,
    "character_classes": [{"class": "digits", "min": 3}],
    "character_sequences": [{"sequence": "ab", "min": 2}],
}


def test_minimums_above_the_length_are_rejected_by_validate_and_at_create() -> None:
    res, ctx = fake_resource(RandomString, TOO_MANY)
    errors = RandomString.validate(res.properties)
    assert [(e.path, e.message) for e in errors] == [(("length",), TOO_SHORT)]
    with pytest.raises(StackValidationFailed, match="cannot be smaller than combined"):
        run_action(res, "create")
    assert ctx.physical_id is None and ctx.data == {}


def test_minimums_may_equal_the_length() -> None:
    assert len(created({**TOO_MANY, "length": 5})) == 5


def test_stack_validation_runs_the_length_check() -> None:
    described = PluginRegistry([RandomString]).get("OS::Heat::RandomString")
    assert described is not None
    custom = CustomConstraints.builtin()
    errors = described.validate_properties(TOO_MANY, (), custom)
    assert [e.message for e in errors] == [TOO_SHORT]
    assert described.validate_properties(TOO_MANY, ["salt"], custom) == []


@pytest.mark.parametrize(
    ("properties", "path", "message"),
    [
        ({"character_classes": []}, ("character_classes",), "At least one character class"),
        (
            {"character_sequences": [{"sequence": ""}]},
            ("character_sequences", 0, "sequence"),
            "must not be empty",
        ),
    ],
)
def test_nothing_to_draw_from_is_rejected(
    properties: dict[str, Any], path: tuple[Any, ...], message: str
) -> None:
    res, _ = fake_resource(RandomString, properties)
    errors = RandomString.validate(res.properties)
    assert [e.path for e in errors] == [path] and message in errors[0].message


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({"length": 0}, "0 is out of range (min: 1, max: 512)"),
        ({"length": 513}, "513 is out of range"),
        ({"sequence": "symbols"}, '"symbols" is not an allowed value'),
        ({"character_classes": [{"class": "punctuation"}]}, '"punctuation" is not an allowed'),
        ({"character_classes": [{"min": 0}]}, "0 is out of range"),
        ({"character_sequences": [{"min": 2}]}, "Property sequence not assigned"),
    ],
)
def test_schema_errors(properties: dict[str, Any], message: str) -> None:
    with pytest.raises(StackValidationFailed, match=re.escape(message)):
        fake_resource(RandomString, properties)


@pytest.mark.parametrize(
    "new",
    [
        {"salt": "2"},
        {"length": 16},
        {"character_classes": [{"class": "digits"}]},
        {"sequence": "letters"},
    ],
)
def test_any_change_replaces(new: dict[str, Any]) -> None:
    res, _ = fake_resource(RandomString, {"salt": "1"})
    assert decide(res, {"salt": "1", **new}).kind == "replace"


def test_unchanged_definition_keeps_the_string() -> None:
    res, _ = fake_resource(RandomString, {"salt": "1"})
    assert decide(res, {"salt": "1"}).kind == "unchanged"


def test_delete_does_nothing() -> None:
    res, ctx = fake_resource(RandomString)
    run_action(res, "create")
    assert run_action(res, "delete") == 1
    assert "value" in ctx.data
