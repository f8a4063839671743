"""Reading ``environment_dir``, and the global environment Kiln ships."""

from __future__ import annotations

import logging
import pathlib

import pytest

from kiln.cli import config
from kiln.cli.global_environment import (
    PACKAGED_ENVIRONMENT_DIR,
    packaged_global_environment,
    read_environment_dir,
)
from kiln.template.template import Template

PROVIDER = "heat_template_version: 2021-04-16\nresources: {}\n"


def test_files_are_merged_in_name_order_with_their_local_templates(
    tmp_path: pathlib.Path,
) -> None:
    env_dir = tmp_path / "environment.d"
    env_dir.mkdir()
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "thing.yaml").write_text(PROVIDER)
    (env_dir / "20-later.yaml").write_text('resource_registry: {"A::B": OS::Heat::Value}\n')
    (env_dir / "10-first.yaml").write_text(
        'resource_registry: {"A::B": OS::Heat::None, "My::Thing": ../templates/thing.yaml}\n'
    )
    (env_dir / ".hidden.yaml").write_text('resource_registry: {"A::B": OS::Heat::Stack}\n')
    (env_dir / "subdir").mkdir()
    found = read_environment_dir(env_dir)
    location = (tmp_path / "templates" / "thing.yaml").resolve().as_uri()
    assert found.resource_registry == {
        "A::B": "OS::Heat::Value",
        "My::Thing": location,
        "resources": {},
    }
    assert dict(found.templates) == {location: PROVIDER}


def test_a_bad_file_or_template_is_logged_and_left_out(
    tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "bad.yaml").write_text("resource_registry: [1, 2]\n")
    (tmp_path / "good.yaml").write_text(
        'resource_registry: {"My::Gone": missing.yaml, "My::Far": "https://example.org/x.yaml"}\n'
    )
    with caplog.at_level(logging.WARNING, logger="kiln.cli.global_environment"):
        found = read_environment_dir(tmp_path)
    assert set(found.resource_registry) == {"My::Gone", "My::Far", "resources"}
    assert dict(found.templates) == {}
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "skipped" in logged and "bad.yaml" in logged
    assert "cannot read template" in logged and "missing.yaml" in logged
    assert "not a local (file://) template" in logged


def test_a_missing_directory_is_an_empty_global_environment(
    tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="kiln.cli.global_environment"):
        found = read_environment_dir(tmp_path / "nowhere")
    assert (dict(found.resource_registry), dict(found.templates)) == ({}, {})
    assert "cannot read" in caplog.text


def test_kiln_ships_the_alarm_aliases_and_the_cloudwatch_provider() -> None:
    shipped = packaged_global_environment()
    registry = dict(shipped.resource_registry)
    location = registry.pop("AWS::CloudWatch::Alarm")
    assert registry == {
        "OS::Ceilometer::Alarm": "OS::Aodh::Alarm",
        "OS::Metering::Alarm": "OS::Aodh::Alarm",
        "resources": {},
    }
    expected = PACKAGED_ENVIRONMENT_DIR.parent / "templates" / "AWS_CloudWatch_Alarm.yaml"
    assert location == expected.resolve().as_uri()
    provider = Template.load(shipped.templates[location], name=location)
    assert set(provider.section("parameters")) == {
        "MetricName",
        "Namespace",
        "Statistic",
        "Period",
        "EvaluationPeriods",
        "Threshold",
        "ComparisonOperator",
        "AlarmActions",
        "OKActions",
        "InsufficientDataActions",
        "Dimensions",
        "AlarmDescription",
        "Units",
    }


def test_environment_dir_defaults_to_the_packaged_directory(tmp_path: pathlib.Path) -> None:
    assert config.load([]).environment_dir == str(PACKAGED_ENVIRONMENT_DIR)
    conf_file = tmp_path / "kiln.conf"
    conf_file.write_text(f"[DEFAULT]\nenvironment_dir = {tmp_path}\n")
    assert config.load([str(conf_file)]).environment_dir == str(tmp_path)
