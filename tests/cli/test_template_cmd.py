"""The ``kiln template`` commands, run as a user runs them."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest
import yaml
from click.testing import CliRunner

from kiln.cli.main import cli
from tests_support import REPO

EXAMPLE = REPO / "examples" / "quickstart.yaml"
EXAMPLE_ENV = REPO / "examples" / "quickstart-env.yaml"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def write(tmp: pathlib.Path, name: str, text: str) -> pathlib.Path:
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_validate_quickstart_prints_heat_validate_document() -> None:
    code, out = run("template", "validate", str(EXAMPLE), "-e", str(EXAMPLE_ENV))
    assert code == 0, out
    doc = yaml.safe_load(out)
    assert set(doc) == {"Description", "Parameters", "ParameterGroups", "Environment"}
    assert doc["Parameters"]["replicas"]["Value"] == 3
    assert doc["Parameters"]["app_name"]["Type"] == "String"
    assert doc["Environment"]["resource_registry"]["Kiln::AppConfig"].startswith("file://")


def test_validate_json_format() -> None:
    code, out = run(
        "template", "validate", str(EXAMPLE), "-e", str(EXAMPLE_ENV), "--format", "json"
    )
    assert code == 0
    assert json.loads(out)["Parameters"]["environment"]["AllowedValues"] == ["dev", "prod"]


def test_validate_reports_every_error_with_location(tmp_path: pathlib.Path) -> None:
    template = write(
        tmp_path,
        "bad.yaml",
        """\
heat_template_version: 2021-04-16
parameters:
  size: {type: number, default: 11, constraints: [{range: {min: 1, max: 10}}]}
resources:
  a:
    type: OS::Heat::None
    properties:
      x: {get_resource: ghost}
  b:
    type: OS::Heat::None
    depends_on: [nowhere]
outputs:
  o: {description: no value}
""",
    )
    code, out = run("template", "validate", str(template))
    assert code == 1
    lines = [line for line in out.splitlines() if line.strip()]
    assert any("bad.yaml:3:" in line and "Invalid default 11" in line for line in lines)
    assert any("bad.yaml:8:" in line and 'reference "ghost"' in line for line in lines)
    assert any("bad.yaml:11:" in line and 'reference "nowhere"' in line for line in lines)
    assert any("Each output definition must contain a value key." in line for line in lines)


def test_validate_errors_as_json(tmp_path: pathlib.Path) -> None:
    template = write(tmp_path, "t.yaml", "heat_template_version: 2019-01-01\n")
    code, out = run("template", "validate", str(template), "--format", "json")
    assert code == 1
    errors = json.loads(out)["errors"]
    assert errors[0]["type"] == "InvalidTemplateVersion"
    assert "should be one of" in errors[0]["message"]


def test_parameters_on_the_command_line_win(tmp_path: pathlib.Path) -> None:
    template = write(
        tmp_path,
        "t.yaml",
        """\
heat_template_version: 2021-04-16
parameters:
  a: {type: string}
  b: {type: number, default: 1}
""",
    )
    env = write(tmp_path, "env.yaml", "parameters: {a: from-env, b: 2}\n")
    code, out = run("template", "validate", str(template), "-e", str(env), "-P", "a=cli;b=5")
    assert code == 0, out
    params = yaml.safe_load(out)["Parameters"]
    assert params["a"]["Value"] == "cli"
    assert params["b"]["Value"] == "5"


def test_bad_parameter_value_is_an_error(tmp_path: pathlib.Path) -> None:
    template = write(
        tmp_path,
        "t.yaml",
        """\
heat_template_version: 2021-04-16
parameters:
  n: {type: number, constraints: [{range: {max: 3}}]}
""",
    )
    code, out = run("template", "validate", str(template), "-P", "n=9")
    assert code == 1
    assert "Parameter 'n' is invalid" in out


def test_local_files_are_read_relative_to_the_file_naming_them(tmp_path: pathlib.Path) -> None:
    write(tmp_path, "lib/script.sh", "echo hi\n")
    write(
        tmp_path,
        "lib/inner.yaml",
        """\
heat_template_version: 2021-04-16
parameters:
  msg: {type: string}
resources:
  v: {type: OS::Heat::Value, properties: {value: {get_file: script.sh}}}
outputs:
  script: {value: {get_attr: [v, value]}}
""",
    )
    template = write(
        tmp_path,
        "top.yaml",
        """\
heat_template_version: 2021-04-16
resources:
  direct: {type: lib/inner.yaml, properties: {msg: a}}
  mapped: {type: My::Inner, properties: {msg: b}}
""",
    )
    env = write(tmp_path, "env/prod.yaml", "resource_registry:\n  My::Inner: ../lib/inner.yaml\n")
    code, out = run("template", "resolve", str(template), "-e", str(env))
    assert code == 0, out
    resolved = yaml.safe_load(out)
    by_name = {r["name"]: r for r in resolved["resources"]}
    assert by_name["direct"]["implementation"] == "TemplateResource"
    assert by_name["mapped"]["implementation"] == "TemplateResource"
    nested = by_name["mapped"]["nested"][0]
    assert nested["properties"]["value"] == "echo hi\n"


def test_nested_template_errors_point_into_the_nested_file(tmp_path: pathlib.Path) -> None:
    write(
        tmp_path,
        "inner.yaml",
        """\
heat_template_version: 2021-04-16
resources:
  v:
    type: OS::Heat::Value
    properties:
      value: {get_param: missing}
""",
    )
    template = write(
        tmp_path,
        "top.yaml",
        """\
heat_template_version: 2021-04-16
resources:
  n: {type: inner.yaml}
""",
    )
    code, out = run("template", "validate", str(template))
    assert code == 1
    assert "inner.yaml:6:" in out
    assert "The Parameter (missing) was not provided." in out


def test_resolve_keeps_calls_that_need_resources() -> None:
    code, out = run("template", "resolve", str(EXAMPLE), "-e", str(EXAMPLE_ENV))
    assert code == 0, out
    resolved = yaml.safe_load(out)
    names = [r["name"] for r in resolved["resources"]]
    assert names == ["admin_password", "config"]  # audit is disabled: environment is dev
    config = resolved["resources"][1]
    assert config["properties"]["password"] == {"get_attr": ["admin_password", "value"]}
    assert config["properties"]["replicas"] == 3
    outputs = {o["output_key"]: o["output_value"] for o in resolved["outputs"]}
    assert outputs["url"] == "https://hello.example.org/"


def test_graph_text_and_dot() -> None:
    code, out = run(
        "template", "graph", str(EXAMPLE), "-e", str(EXAMPLE_ENV), "-P", "environment=prod"
    )
    assert code == 0, out
    assert "config <- admin_password" in out
    assert "audit <- config" in out
    code, out = run("template", "graph", str(EXAMPLE), "-e", str(EXAMPLE_ENV), "--format", "dot")
    assert code == 0
    assert out.startswith("digraph")
    assert '"config" -> "admin_password"' in out


@pytest.mark.parametrize(
    ("args", "status"),
    [
        (["template", "validate", str(EXAMPLE), "-e", str(EXAMPLE_ENV)], 0),
        (["template", "validate", "/no/such/file.yaml"], 2),
        (["template", "validate", str(EXAMPLE), "--format", "xml"], 2),
        (["template", "validate", str(EXAMPLE), "-P", "novalue"], 2),
    ],
)
def test_exit_status_of_the_installed_command(args: list[str], status: int) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kiln.cli.main", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == status, proc.stdout + proc.stderr


def test_hostile_template_fails_cleanly(tmp_path: pathlib.Path) -> None:
    lines = ["heat_template_version: 2021-04-16", "a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 12):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    template = write(tmp_path, "bomb.yaml", "\n".join(lines) + "\n")
    code, out = run("template", "validate", str(template))
    assert code == 1
    assert "bomb.yaml:" in out
    assert "Traceback" not in out
