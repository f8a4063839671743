"""The parameter_groups section (reference 3.6)."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.core.errors import StackValidationFailed
from kiln.template.parameter_groups import validate_parameter_groups

NAMES = ["a", "b", "c"]
INVALID = "does not reference a valid parameter."
ONCE = "parameter must be assigned to one parameter group only."


@pytest.mark.parametrize(
    "section",
    [
        None,
        [],
        [{"label": "all", "description": "every one", "parameters": ["a", "b", "c"]}],
        [{"parameters": ["a"]}, {"label": "rest", "parameters": ["b"]}],  # c is ungrouped
        [{"label": "stack", "parameters": ["OS::stack_name", "OS::stack_id", "OS::project_id"]}],
        [{"label": "aws", "parameters": ["AWS::StackId", "AWS::StackName", "AWS::Region"]}],
    ],
)
def test_valid_groups(section: Any) -> None:
    assert validate_parameter_groups(section, NAMES) == []


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ({"label": "x"}, [("parameter_groups", "The parameter_groups should be a list.")]),
        ("a", [("parameter_groups", "The parameter_groups should be a list.")]),
        ([{"label": "net"}],
         [("parameter_groups.net", "The parameters must be provided for each parameter group.")]),
        ([{"label": "net", "parameters": "a"}],
         [("parameter_groups.net", "The parameters of parameter group should be a list.")]),
        ([{"label": "net", "parameters": ["a", "z"]}],
         [("parameter_groups.net", f"The grouped parameter z {INVALID}")]),
        ([{"label": "g1", "parameters": ["a"]}, {"label": "g2", "parameters": ["a"]}],
         [("parameter_groups.g2", f"The a {ONCE}")]),
        ([{"label": "g", "parameters": ["b", "b"]}],
         [("parameter_groups.g", f"The b {ONCE}")]),
        # no label: the group's index stands in for it
        ([{"parameters": ["a"]}, {"parameters": ["q"]}],
         [("parameter_groups[1]", f"The grouped parameter q {INVALID}")]),
        (["a"], [("parameter_groups[0]", "Each parameter group should be a mapping.")]),
        ([{"label": "g", "parameters": [{"x": 1}]}],
         [("parameter_groups.g",
           "The grouped parameter {'x': 1} does not reference a valid parameter.")]),
    ],
)  # fmt: skip
def test_errors(section: Any, expected: list[tuple[str, str]]) -> None:
    errors = validate_parameter_groups(section, NAMES)
    assert [(e.full_message.split(": ", 2)[1], e.message) for e in errors] == expected
    assert all(isinstance(e, StackValidationFailed) for e in errors)
    assert all(e.category == "Parameter Groups error" for e in errors)


def test_every_problem_is_reported() -> None:
    errors = validate_parameter_groups(
        [
            {"label": "one", "parameters": ["a", "x"]},
            {"label": "two"},
            {"label": "three", "parameters": ["a", "y"]},
        ],
        NAMES,
    )
    assert [e.full_message for e in errors] == [
        "Parameter Groups error: parameter_groups.one: "
        "The grouped parameter x does not reference a valid parameter.",
        "Parameter Groups error: parameter_groups.two: "
        "The parameters must be provided for each parameter group.",
        "Parameter Groups error: parameter_groups.three: "
        "The a parameter must be assigned to one parameter group only.",
        "Parameter Groups error: parameter_groups.three: "
        "The grouped parameter y does not reference a valid parameter.",
    ]
