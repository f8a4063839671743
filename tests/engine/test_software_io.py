"""kiln.engine.software_io: the fields of a software config as a request gives them."""

from __future__ import annotations

import pytest

from kiln.core.errors import UserError
from kiln.engine.software_io import check_text, config_fields


def test_stored_forms_of_inputs_and_outputs():
    inputs, outputs, options = config_fields(
        "n",
        None,
        [
            {"name": "a"},
            {"name": "b", "type": "Number", "default": "3", "replace_on_change": True},
            {"name": "c", "replace_on_change": False, "value": [1]},
        ],
        [{"name": "r", "description": "result"}, {"name": "e", "error_output": True}],
        None,
    )
    assert inputs == [
        {"name": "a", "type": "String"},
        {"name": "b", "type": "Number", "default": "3", "replace_on_change": True},
        {"name": "c", "type": "String", "value": [1]},
    ]
    assert outputs == [
        {"name": "r", "type": "String", "description": "result", "error_output": False},
        {"name": "e", "type": "String", "error_output": True},
    ]
    assert options == {}


def test_every_problem_reported_with_its_path():
    with pytest.raises(UserError) as found:
        config_fields(
            7,
            None,
            [{"name": "a", "type": "Boolean", "default": "perhaps", "extra": 1}, "x"],
            [{}],
            [1],
        )
    message = str(found.value)
    for part in (
        "name: must be a string",
        "options: must be a map",
        "inputs[0].default",
        "inputs[0].extra: Unknown key extra",
        "inputs[1]: must be a map",
        "outputs[0]: name is required",
    ):
        assert part in message


def test_check_text():
    check_text(None, "x")
    with pytest.raises(UserError, match="x: is required"):
        check_text(None, "x", required=True)
    with pytest.raises(UserError, match="at most 3 characters"):
        check_text("abcd", "x", limit=3)
