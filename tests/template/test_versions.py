"""Versions and the per-version function tables, checked against the reference.

The availability matrix of template-language.md section 1.3 is parsed from the
reference itself and compared cell by cell with what each version's tables do.
"""

from __future__ import annotations

import re

import pytest

from kiln.core.errors import InvalidTemplateVersion, StackValidationFailed
from kiln.template.functions.base import FunctionSpec
from kiln.template.functions.references import build_invalid, build_removed
from kiln.template.versions import (
    AWS_KEY,
    HEAT_CFN_KEY,
    HOT_KEY,
    all_versions,
    detect_version,
    get_version,
)
from tests_support import SHARED

REFERENCE = SHARED / "reference" / "template-language.md"

COLUMNS = {
    "13-05-23": (HOT_KEY, "2013-05-23"),
    "14-10-16": (HOT_KEY, "2014-10-16"),
    "15-04-30": (HOT_KEY, "2015-04-30"),
    "15-10-15": (HOT_KEY, "2015-10-15"),
    "16-04-08": (HOT_KEY, "2016-04-08"),
    "16-10-14": (HOT_KEY, "2016-10-14"),
    "17-02-24": (HOT_KEY, "2017-02-24"),
    "17-09-01": (HOT_KEY, "2017-09-01"),
    "18-03-02": (HOT_KEY, "2018-03-02"),
    "18-08-31": (HOT_KEY, "2018-08-31"),
    "21-04-16": (HOT_KEY, "2021-04-16"),
    "AWS 2010": (AWS_KEY, "2010-09-09"),
    "Heat 2012": (HEAT_CFN_KEY, "2012-12-12"),
}


def _matrix() -> list[tuple[str, str, str]]:
    text = REFERENCE.read_text()
    section = text[text.index("### 1.3") : text.index("### 1.4")]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    header = next(line for line in section.splitlines() if line.startswith("| function"))
    columns = [c.strip() for c in header.strip("|").split("|")][1:]
    cells = []
    for row in rows:
        parts = [c.strip() for c in row.strip("|").split("|")]
        name = parts[0].strip("`")
        for column, cell in zip(columns, parts[1:], strict=True):
            cells.append((name, column, cell))
    return cells


MATRIX = _matrix()


def _kind(spec: FunctionSpec | None) -> str:
    if spec is None:
        return "."
    if spec.build is build_removed:
        return "R"
    if spec.build is build_invalid:
        return "I"
    return "F"


def test_matrix_is_complete() -> None:
    assert len(MATRIX) == 41 * 13  # 41 functions, 13 versions


@pytest.mark.parametrize(("name", "column", "cell"), MATRIX, ids=[f"{n}@{c}" for n, c, _ in MATRIX])
def test_function_availability(name: str, column: str, cell: str) -> None:
    key, date = COLUMNS[column]
    version = get_version(date, key)
    ordinary = _kind(version.functions.get(name))
    conditional = _kind(version.condition_functions.get(name))
    mark = re.sub(r"[a-z0-9]$", "", cell)  # drop variant suffixes (✓a, ✓n, ✓3 ...)
    if mark == "·":
        assert ordinary == "." and conditional in (".", "I")
    elif mark == "R":
        assert ordinary == "R"
        assert conditional == ("R" if version.has_conditions else ".")
    elif mark == "C":
        assert ordinary == "." and conditional == "F"
    elif mark == "✓+C":
        assert ordinary == "F" and conditional == "F"
    elif mark == "✓":
        assert ordinary == "F"
        if version.has_conditions:
            assert conditional == "I"
    else:
        pytest.fail(f"unknown matrix cell {cell!r}")


def test_aliases_select_the_dated_version() -> None:
    for alias, date in [
        ("newton", "2016-10-14"),
        ("wallaby", "2021-04-16"),
        ("pike", "2017-09-01"),
    ]:
        assert get_version(alias) is get_version(date)


def test_every_version_is_listed_once() -> None:
    names = [v.name for v in all_versions()]
    assert len(names) == 13 == len(set(names))
    assert "heat_template_version.2021-04-16" in names


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "Template version was not provided"),
        ({HOT_KEY: 20161014}, "Template version was not provided"),
        ({HOT_KEY: "2016-10-14", HEAT_CFN_KEY: "2012-12-12"}, "Ambiguous versions"),
        ({HOT_KEY: "Newton"}, '"heat_template_version" should be one of: 2013-05-23'),
        ({AWS_KEY: "2010-09-10"}, '"AWSTemplateFormatVersion" should be: 2010-09-09'),
    ],
)
def test_version_errors(data: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidTemplateVersion, match=re.escape(message)):
        detect_version(data)


def test_condition_context_rejects_ordinary_functions() -> None:
    version = get_version("2016-10-14")
    parser_table = version.condition_functions
    with pytest.raises(StackValidationFailed, match='"get_attr" is invalid in this context'):
        parser_table["get_attr"].build(None, "get_attr", ["r", "a"], ("c",))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("date", "sections"),
    [
        (
            "2016-04-08",
            {
                "heat_template_version",
                "description",
                "parameter_groups",
                "parameters",
                "resources",
                "outputs",
            },
        ),
        (
            "2016-10-14",
            {
                "heat_template_version",
                "description",
                "parameter_groups",
                "parameters",
                "resources",
                "outputs",
                "conditions",
            },
        ),
    ],
)
def test_sections_per_version(date: str, sections: set[str]) -> None:
    assert set(get_version(date).sections) == sections


def test_structure_per_version() -> None:
    old, new = get_version("2016-04-08"), get_version("2016-10-14")
    assert "condition" not in old.resource_keys and "condition" in new.resource_keys
    assert "retain" not in old.deletion_policies and "retain" in new.deletion_policies
    assert "tags" not in get_version("2017-09-01").parameter_keys
    assert "tags" in get_version("2018-03-02").parameter_keys
    assert not get_version("2016-10-14").has_modulo and get_version("2017-02-24").has_modulo
    cfn = get_version("2012-12-12", HEAT_CFN_KEY)
    assert "Conditions" not in cfn.sections
    assert "Conditions" in get_version("2010-09-09", AWS_KEY).sections
