"""Reading a template and its environments from disk as python-heatclient does (reference
6.6): relative get_file / template types / registry values become absolute file URLs whose
contents go into the files map."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

from kiln.cli.local_files import file_url, load_local_stack, read_local_input
from kiln.core.errors import StackValidationFailed
from kiln.testing.heat_types import HEAT_TEST_TYPES

INNER = """\
heat_template_version: 2021-04-16
parameters:
  msg: {type: string, default: m}
resources:
  v: {type: OS::Heat::Value, properties: {value: {get_file: script.sh}}}
outputs:
  script: {value: {get_attr: [v, value]}}
"""


def write(root: pathlib.Path, name: str, text: str | bytes) -> pathlib.Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def url(root: pathlib.Path, name: str) -> str:
    return (root / name).resolve().as_uri()


@pytest.fixture
def tree(tmp_path: pathlib.Path) -> pathlib.Path:
    write(tmp_path, "lib/script.sh", "echo hi\n")
    write(tmp_path, "lib/inner.yaml", INNER)
    write(tmp_path, "boot.sh", "#!/bin/sh\n")
    return tmp_path


def test_file_url_is_absolute(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert file_url("a/b.yaml") == (tmp_path / "a" / "b.yaml").resolve().as_uri()
    assert file_url(tmp_path / "x y.yaml").endswith("/x%20y.yaml")


# -- templates -----------------------------------------------------------------------------------


def test_get_file_and_template_types_relative_to_the_template(tree: pathlib.Path) -> None:
    top = write(
        tree,
        "top.yaml",
        "heat_template_version: 2021-04-16\n"
        "resources:\n"
        "  direct: {type: lib/inner.yaml}\n"
        "  boot:\n"
        "    type: OS::Heat::Value\n"
        "    properties: {value: [{get_file: boot.sh}, {get_file: lib/script.sh}]}\n",
    )
    local = read_local_input(str(top), [])
    resources = local.template.data["resources"]
    assert resources["direct"]["type"] == url(tree, "lib/inner.yaml")
    assert resources["boot"]["properties"]["value"] == [
        {"get_file": url(tree, "boot.sh")},
        {"get_file": url(tree, "lib/script.sh")},
    ]
    assert local.files == {
        url(tree, "boot.sh"): "#!/bin/sh\n",
        url(tree, "lib/script.sh"): "echo hi\n",
        url(tree, "lib/inner.yaml"): INNER,  # kept verbatim, for positions in errors
    }
    assert local.environments == []


def test_nested_templates_are_read_relative_to_themselves(tree: pathlib.Path) -> None:
    # lib/inner.yaml names script.sh: that is lib/script.sh, not ./script.sh
    top = write(
        tree,
        "top.yaml",
        "heat_template_version: 2021-04-16\nresources:\n  n: {type: lib/inner.yaml}\n",
    )
    local = read_local_input(str(top), [])
    assert url(tree, "lib/script.sh") in local.files
    assert url(tree, "script.sh") not in local.files


def test_each_nested_template_is_processed_once(
    tree: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(
        tree,
        "lib/loop.yaml",
        "heat_template_version: 2021-04-16\nresources:\n  again: {type: loop.yaml}\n",
    )
    top = write(
        tree,
        "top.yaml",
        "heat_template_version: 2021-04-16\n"
        "resources:\n"
        "  a: {type: lib/inner.yaml}\n"
        "  b: {type: lib/inner.yaml}\n"
        "  c: {type: lib/loop.yaml}\n",
    )
    reads: list[str] = []
    original = pathlib.Path.read_bytes

    def counting(self: pathlib.Path) -> bytes:
        reads.append(self.name)
        return original(self)

    monkeypatch.setattr(pathlib.Path, "read_bytes", counting)
    local = read_local_input(str(top), [])  # a template naming itself does not loop
    assert sorted(reads) == ["inner.yaml", "loop.yaml", "script.sh", "top.yaml"]
    assert set(local.files) == {
        url(tree, "lib/inner.yaml"),
        url(tree, "lib/script.sh"),
        url(tree, "lib/loop.yaml"),
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("lib/inner.yaml", "lib/inner.yaml"),
        ("lib/inner.template", "lib/inner.template"),
        ("lib/inner.yml", None),  # only .yaml and .template are templates (E06)
        ("OS::Heat::None", None),
        ({"get_param": "t"}, None),  # only literal strings are read
    ],
)
def test_which_types_are_template_files(
    tree: pathlib.Path, value: Any, expected: str | None
) -> None:
    write(tree, "lib/inner.template", INNER)
    write(tree, "lib/inner.yml", INNER)
    top = write(
        tree,
        "top.yaml",
        "heat_template_version: 2021-04-16\n"
        "parameters:\n  t: {type: string, default: OS::Heat::None}\n"
        f"resources:\n  n: {{type: {json.dumps(value)}}}\n",
    )
    local = read_local_input(str(top), [])
    got = local.template.data["resources"]["n"]["type"]
    if expected is None:
        assert got == value
        assert local.files == {}
    else:
        assert got == url(tree, expected)
        assert set(local.files) == {url(tree, expected), url(tree, "lib/script.sh")}


def test_cfn_types_and_get_file_calls_only(tree: pathlib.Path) -> None:
    top = write(
        tree,
        "top.yaml",
        "HeatTemplateFormatVersion: '2012-12-12'\n"
        "Resources:\n"
        "  N: {Type: lib/inner.yaml}\n"
        "  V:\n"
        "    Type: OS::Heat::Value\n"
        "    Properties:\n"
        "      value: {get_file: boot.sh, other: 1}\n",  # two keys: data, not a call
    )
    local = read_local_input(str(top), [])
    resources = local.template.data["Resources"]
    assert resources["N"]["Type"] == url(tree, "lib/inner.yaml")
    assert resources["V"]["Properties"]["value"] == {"get_file": "boot.sh", "other": 1}
    assert url(tree, "boot.sh") not in local.files


def test_absolute_paths_and_urls_stay_absolute(tree: pathlib.Path) -> None:
    absolute = str((tree / "boot.sh").resolve())
    top = write(
        tree,
        "sub/top.yaml",
        "heat_template_version: 2021-04-16\n"
        "resources:\n"
        "  v:\n    type: OS::Heat::Value\n"
        "    properties:\n"
        f"      value: [{{get_file: '{absolute}'}}, {{get_file: '{url(tree, 'boot.sh')}'}}]\n",
    )
    local = read_local_input(str(top), [])
    assert local.files == {url(tree, "boot.sh"): "#!/bin/sh\n"}


def test_template_name_is_shown_relative_to_the_working_directory(
    tree: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree)
    assert read_local_input("lib/inner.yaml", []).template.name == "lib/inner.yaml"
    inside = read_local_input(str(tree / "lib/inner.yaml"), [])
    assert inside.template.name == "lib/inner.yaml"
    (tree / "elsewhere").mkdir()
    monkeypatch.chdir(tree / "elsewhere")
    outside = read_local_input(str(tree / "lib/inner.yaml"), [])
    assert outside.template.name == str((tree / "lib/inner.yaml").resolve())


def test_a_nested_template_that_does_not_parse_is_still_uploaded(tree: pathlib.Path) -> None:
    write(tree, "bad.yaml", "heat_template_version: 2021-04-16\nresources: [\n")
    top = write(
        tree, "top.yaml", "heat_template_version: 2021-04-16\nresources:\n  n: {type: bad.yaml}\n"
    )
    local = read_local_input(str(top), [])  # reported later, when the nested stack is built
    assert local.files[url(tree, "bad.yaml")].endswith("resources: [\n")


def test_a_template_read_by_get_file_is_processed_too(tree: pathlib.Path) -> None:
    top = write(
        tree,
        "top.yaml",
        "heat_template_version: 2021-04-16\n"
        "resources:\n"
        "  s: {type: OS::Heat::Value, properties: {value: {get_file: lib/inner.yaml}}}\n",
    )
    local = read_local_input(str(top), [])
    assert url(tree, "lib/script.sh") in local.files


# -- environments --------------------------------------------------------------------------------


def test_registry_paths_relative_to_the_environment(tree: pathlib.Path) -> None:
    write(tree, "env/tmpl/db.yaml", "heat_template_version: 2021-04-16\n")
    env = write(
        tree,
        "env/prod.yaml",
        "resource_registry:\n"
        "  My::Inner: ../lib/inner.yaml\n"
        "  My::Alias: OS::Heat::None\n"  # values containing :: are types, left alone
        "  My::Wild::*: OS::Heat::*\n"
        "  My::Gone: null\n"
        "  resources:\n"
        "    db:\n"
        "      My::Db: tmpl/db.yaml\n"
        "      hooks: [pre-create]\n"
        "      restricted_actions: replace\n",
    )
    top = write(tree, "top.yaml", "heat_template_version: 2021-04-16\n")
    local = read_local_input(str(top), [str(env)])
    [(name, doc)] = local.environments
    assert name == url(tree, "env/prod.yaml")
    assert doc.data["resource_registry"] == {
        "My::Inner": url(tree, "lib/inner.yaml"),
        "My::Alias": "OS::Heat::None",
        "My::Wild::*": "OS::Heat::*",
        "My::Gone": None,
        "resources": {
            "db": {
                "My::Db": url(tree, "env/tmpl/db.yaml"),
                "hooks": ["pre-create"],
                "restricted_actions": "replace",
            }
        },
    }
    # registry templates are processed like template types: inner.yaml's script too
    assert set(local.files) == {
        url(tree, "lib/inner.yaml"),
        url(tree, "lib/script.sh"),
        url(tree, "env/tmpl/db.yaml"),
    }


def test_base_url_replaces_the_environment_location(tree: pathlib.Path) -> None:
    env = write(
        tree,
        "env/e.yaml",
        f"resource_registry:\n  base_url: {url(tree, 'lib')}/\n  My::Inner: inner.yaml\n",
    )
    top = write(tree, "top.yaml", "heat_template_version: 2021-04-16\n")
    registry = read_local_input(str(top), [str(env)]).environments[0][1].data["resource_registry"]
    assert registry == {"My::Inner": url(tree, "lib/inner.yaml")}  # base_url itself is dropped


def test_base_url_without_a_trailing_slash_is_a_directory(tree: pathlib.Path) -> None:
    env = write(
        tree,
        "env/e.yaml",
        f"resource_registry:\n  base_url: {url(tree, 'lib')}\n  My::Inner: inner.yaml\n",
    )
    top = write(tree, "top.yaml", "heat_template_version: 2021-04-16\n")
    registry = read_local_input(str(top), [str(env)]).environments[0][1].data["resource_registry"]
    assert registry == {"My::Inner": url(tree, "lib/inner.yaml")}


def test_environments_keep_their_order(tree: pathlib.Path) -> None:
    one = write(tree, "one.yaml", "parameters: {a: 1}\n")
    two = write(tree, "two.yaml", "parameters: {a: 2}\n")
    top = write(tree, "top.yaml", "heat_template_version: 2021-04-16\n")
    local = read_local_input(str(top), [str(two), str(one)])
    assert [n for n, _ in local.environments] == [url(tree, "two.yaml"), url(tree, "one.yaml")]


# -- failures ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("top", "message"),
    [
        (
            "heat_template_version: 2021-04-16\nresources:\n  n: {type: missing.yaml}\n",
            'Could not read "{root}/missing.yaml": No such file or directory',
        ),
        (
            "heat_template_version: 2021-04-16\n"
            "resources:\n  v: {type: OS::Heat::Value, properties: {value: {get_file: nope.sh}}}\n",
            'Could not read "{root}/nope.sh": No such file or directory',
        ),
        (
            "heat_template_version: 2021-04-16\n"
            "resources:\n  v: {type: OS::Heat::Value, properties: {value: {get_file: bin.dat}}}\n",
            '"{root}/bin.dat" is not UTF-8 text',
        ),
        (
            "heat_template_version: 2021-04-16\n"
            "resources:\n  n: {type: 'https://example.com/t.yaml'}\n",
            'Could not fetch "https://example.com/t.yaml": only local files are read offline',
        ),
        (
            "heat_template_version: 2021-04-16\n"
            "resources:\n  v: {type: OS::Heat::Value, properties: {value: {get_file: lib}}}\n",
            'Could not read "{root}/lib": ',
        ),
    ],
)
def test_unreadable_files(tree: pathlib.Path, top: str, message: str) -> None:
    write(tree, "bin.dat", b"\xff\xfe\x00")
    path = write(tree, "top.yaml", top)
    with pytest.raises(StackValidationFailed) as info:
        read_local_input(str(path), [])
    assert info.value.message.startswith(message.format(root=tree.resolve()))


def test_unreadable_template_or_environment(tree: pathlib.Path) -> None:
    top = write(tree, "top.yaml", "heat_template_version: 2021-04-16\n")
    with pytest.raises(StackValidationFailed, match="No such file or directory"):
        read_local_input(str(tree / "absent.yaml"), [])
    with pytest.raises(StackValidationFailed, match="No such file or directory"):
        read_local_input(str(top), [str(tree / "absent-env.yaml")])
    env = write(tree, "env.yaml", "resource_registry:\n  My::T: gone.yaml\n")
    with pytest.raises(StackValidationFailed, match=r'gone\.yaml": No such file'):
        read_local_input(str(top), [str(env)])


# -- load_local_stack ----------------------------------------------------------------------------


def test_load_local_stack_end_to_end(tree: pathlib.Path) -> None:
    env = write(
        tree,
        "env/e.yaml",
        "parameters: {greeting: from-env}\nresource_registry:\n  My::Inner: ../lib/inner.yaml\n",
    )
    top = write(
        tree,
        "top.yaml",
        "heat_template_version: 2021-04-16\n"
        "parameters:\n  greeting: {type: string}\n  later: {type: string}\n"
        "resources:\n"
        "  direct: {type: lib/inner.yaml}\n"
        "  mapped: {type: My::Inner, properties: {msg: {get_param: greeting}}}\n",
    )
    stack = load_local_stack(str(top), [str(env)], {"greeting": "cli"}, types=HEAT_TEST_TYPES)
    assert stack.errors == []  # "later" has no value: tolerated offline
    assert stack.parameter_values["greeting"] == "cli"
    assert {n: t.implementation for n, t in stack.typed.items()} == {
        "direct": "TemplateResource",
        "mapped": "TemplateResource",
    }
    nested = stack.typed["mapped"].nested  # type: ignore[attr-defined]
    assert nested.resolve(nested.resources["v"].properties)["value"] == "echo hi\n"
