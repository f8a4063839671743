"""kiln.engine.template_catalog: versions, functions and what validation reports."""

from __future__ import annotations

import pytest

from kiln.engine.heat_errors import HeatNotFound
from kiln.engine.template_catalog import (
    FUNCTION_DESCRIPTIONS,
    find_version,
    template_functions,
    template_versions,
)
from kiln.template.versions import all_versions


def test_every_function_of_every_version_has_a_description():
    for version in all_versions():
        for name, description in template_functions(version.name, True):
            assert description, (version.name, name)
    assert "Fn::Base64" in FUNCTION_DESCRIPTIONS


def test_versions_by_name_or_alias():
    assert find_version("heat_template_version.wallaby") is find_version(
        "heat_template_version.2021-04-16"
    )
    with pytest.raises(HeatNotFound, match="Template with version wallaby not found"):
        find_version("wallaby")
    names = [name for name, _, _ in template_versions()]
    assert names[0] == "AWSTemplateFormatVersion.2010-09-09"
    assert len(names) == len(set(names))


def test_condition_functions_only_from_versions_with_conditions():
    old = dict(template_functions("heat_template_version.2015-10-15", True))
    assert "equals" not in old and "if" not in old
    newer = dict(template_functions("heat_template_version.2016-10-14", True))
    assert {"equals", "if", "get_param"} <= set(newer)
