"""The heat.conf-style configuration (``kiln.cli.config``) and its sample file."""

from __future__ import annotations

import configparser
import os
import pathlib
import textwrap
from importlib.metadata import entry_points

import pytest
from click.testing import CliRunner

from kiln.cli import config
from kiln.cli.api_cmd import ApiProcess
from kiln.cli.engine_cmd import EngineProcess, engine_command
from tests_support import REPO

SAMPLE = REPO / "etc" / "kiln" / "kiln.conf.sample"


def write(directory: pathlib.Path, name: str, text: str) -> str:
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return str(path)


# -- reading a file ----------------------------------------------------------------------------
def test_load_reads_every_section(tmp_path: pathlib.Path) -> None:
    conf = config.load(
        [
            write(
                tmp_path,
                "kiln.conf",
                """
                [DEFAULT]
                transport_url = rabbit://kiln:secret@mq:5672/
                max_resources_per_stack = 200
                max_template_size = 1000
                max_nested_stack_depth = 3
                stack_action_timeout = 600
                host = engine-b
                [database]
                connection = postgresql+psycopg://kiln:pw@db/kiln
                max_pool_size = 4
                [engine]
                workers = 8
                lease_seconds = 30
                [trustee]
                auth_url = http://keystone:5000/v3
                username = kiln
                password = pw
                project_name = service
                [heat_api]
                bind_port = 9004
                """,
            )
        ]
    )
    assert conf.transport_url == "rabbit://kiln:secret@mq:5672/"
    assert conf.database.connection == "postgresql+psycopg://kiln:pw@db/kiln"
    assert conf.database.max_pool_size == 4
    assert conf.engine.workers == 8
    assert conf.engine.lease_seconds == 30.0
    assert conf.trustee.auth_url == "http://keystone:5000/v3"
    assert conf.trustee.username == "kiln"
    assert (conf.max_resources_per_stack, conf.max_template_size) == (200, 1000)
    assert (conf.max_nested_stack_depth, conf.stack_action_timeout) == (3, 600)
    assert conf.host == "engine-b"
    assert conf.heat_api.bind_port == 9004


def test_defaults_are_heats() -> None:
    conf = config.load([])
    assert conf.max_resources_per_stack == 1000
    assert conf.max_events_per_stack == 1000
    assert conf.max_template_size == 524_288
    assert conf.max_nested_stack_depth == 5
    assert conf.max_stacks_per_tenant == 512
    assert conf.max_json_body_size == 1_048_576
    assert conf.stack_action_timeout == 3600
    assert conf.rpc_response_timeout == 60
    assert conf.heat_api.bind_host == "0.0.0.0"
    assert conf.heat_api.bind_port == 8004
    assert conf.clients.endpoint_type == "publicURL"
    assert conf.transport_url is None
    assert conf.database.connection is None


def test_kiln_config_file_lists_files_later_ones_win(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = write(tmp_path, "kiln.conf", "[engine]\nworkers = 8\n[heat_api]\nbind_port = 9000\n")
    overlay = write(tmp_path, "api-1.conf", "[heat_api]\nbind_port = 9001\n")
    monkeypatch.setenv(config.CONFIG_ENV, base + os.pathsep + overlay)
    conf = config.load()
    assert conf.engine.workers == 8
    assert conf.heat_api.bind_port == 9001


def test_files_given_win_over_the_environment(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(config.CONFIG_ENV, write(tmp_path, "env.conf", "[engine]\nworkers = 8\n"))
    given = write(tmp_path, "given.conf", "[engine]\nworkers = 2\n")
    assert config.load([given]).engine.workers == 2


def test_each_load_is_private(tmp_path: pathlib.Path) -> None:
    first = config.load([write(tmp_path, "a.conf", "[engine]\nworkers = 3\n")])
    second = config.load([])
    assert (first.engine.workers, second.engine.workers) == (3, 128)


# -- helpers -----------------------------------------------------------------------------------
def test_trustee_auth(tmp_path: pathlib.Path) -> None:
    conf = config.load(
        [
            write(
                tmp_path,
                "kiln.conf",
                """
                [trustee]
                auth_url = http://keystone:5000/v3
                username = kiln
                password = pw
                project_name = service
                user_domain_name = Default
                """,
            )
        ]
    )
    assert config.trustee_auth(conf) == {
        "auth_url": "http://keystone:5000/v3",
        "username": "kiln",
        "password": "pw",
        "user_domain_id": "default",
        "user_domain_name": "Default",
        "project_name": "service",
        "project_domain_id": "default",
    }


def test_trustee_auth_leaves_out_unset_values(tmp_path: pathlib.Path) -> None:
    conf = config.load(
        [write(tmp_path, "kiln.conf", "[trustee]\nauth_url = http://ks/v3\nusername = kiln\n")]
    )
    assert config.trustee_auth(conf) == {
        "auth_url": "http://ks/v3",
        "username": "kiln",
        "user_domain_id": "default",
        "project_domain_id": "default",
    }


@pytest.mark.parametrize(
    "trustee", ["", "auth_url = http://ks/v3\n", "username = kiln\n"], ids=["none", "url", "user"]
)
def test_trustee_auth_needs_url_and_user(tmp_path: pathlib.Path, trustee: str) -> None:
    conf = config.load([write(tmp_path, "kiln.conf", "[trustee]\n" + trustee)])
    with pytest.raises(config.ConfigError, match=r"\[trustee\] auth_url and username"):
        config.trustee_auth(conf)


@pytest.mark.parametrize(
    ("endpoint_type", "expected"),
    [
        ("publicURL", "public"),
        ("internalURL", "internal"),
        ("adminURL", "admin"),
        ("internal", "internal"),
    ],
)
def test_interface(tmp_path: pathlib.Path, endpoint_type: str, expected: str) -> None:
    conf = config.load(
        [write(tmp_path, "kiln.conf", f"[clients]\nendpoint_type = {endpoint_type}\n")]
    )
    assert config.interface(conf) == expected


def test_pool_options(tmp_path: pathlib.Path) -> None:
    conf = config.load(
        [write(tmp_path, "kiln.conf", "[database]\nmax_pool_size = 5\npool_timeout = 7\n")]
    )
    assert config.pool_options(conf, "postgresql+psycopg://db/kiln") == {
        "pool_size": 5,
        "max_overflow": 48,
        "pool_timeout": 7,
        "pool_recycle": 3600,
    }
    assert config.pool_options(conf, "sqlite:///kiln.sqlite") == {}


def test_database_url(tmp_path: pathlib.Path) -> None:
    conf = config.load([write(tmp_path, "kiln.conf", "[database]\nconnection = sqlite://\n")])
    assert config.database_url(conf) == "sqlite://"
    with pytest.raises(config.ConfigError, match=r"\[database\] connection is not set"):
        config.database_url(config.load([]))


# -- what the processes refuse -----------------------------------------------------------------
def test_engine_needs_a_transport_url(tmp_path: pathlib.Path) -> None:
    conf = config.load([write(tmp_path, "kiln.conf", "[database]\nconnection = sqlite://\n")])
    with pytest.raises(config.ConfigError, match=r"\[DEFAULT\] transport_url is not set"):
        EngineProcess(conf).start()


def test_api_needs_a_transport_url() -> None:
    with pytest.raises(config.ConfigError, match=r"\[DEFAULT\] transport_url is not set"):
        ApiProcess(config.load([])).start()


def test_kiln_engine_names_what_is_missing(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path, "kiln.conf", "[DEFAULT]\ntransport_url = fake://\n")
    result = CliRunner().invoke(engine_command, ["--config-file", path])
    assert result.exit_code == 1
    assert "Error: [database] connection is not set" in result.output


# -- the sample file ---------------------------------------------------------------------------
def sample_options() -> dict[str, set[str]]:
    """The options the sample shows (commented out: ``#name = default``), by section."""
    options: dict[str, set[str]] = {}
    section = ""
    for line in SAMPLE.read_text().splitlines():
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            options[section] = set()
        elif line.startswith("#") and not line.startswith("# ") and " = " in line:
            options[section].add(line[1:].split(" = ", 1)[0])
        elif line.startswith("#") and line.endswith(" =") and not line.startswith("# "):
            options[section].add(line[1:-2])  # an empty default: "#hidden_stack_tags ="
    return options


def test_sample_parses() -> None:
    conf = config.load([str(SAMPLE)])
    assert conf.max_resources_per_stack == 1000
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(SAMPLE)
    assert {"database", "engine", "heat_api", "keystone_authtoken", "trustee"} <= set(
        parser.sections()
    )


def test_sample_shows_every_option() -> None:
    shown = sample_options()
    missing = [
        f"[{group}] {opt.name}"
        for group, opts in config.list_opts()
        for opt in opts
        if opt.name not in shown.get(group, set())
    ]
    assert missing == []


def test_sample_is_not_machine_specific() -> None:
    text = SAMPLE.read_text()
    assert "#host = <hostname>" in text
    assert str(REPO) not in text
    assert str(pathlib.Path.home()) + "/" not in text


def test_list_opts_declares_each_option_once() -> None:
    groups = [group for group, _opts in config.list_opts()]
    assert len(groups) == len(set(groups))
    for group, opts in config.list_opts():
        names = [opt.name for opt in opts]
        assert len(names) == len(set(names)), group


def test_list_opts_is_the_generators_entry_point() -> None:
    (entry,) = [e for e in entry_points(group="oslo.config.opts") if e.name == "kiln"]
    assert entry.load() is config.list_opts
