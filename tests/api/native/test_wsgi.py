"""The WSGI entry module: configuration with Heat's option names builds the pipeline."""

from __future__ import annotations

import pytest
from falcon import testing

from kiln.api.native import wsgi
from kiln.testing.api_harness import PROJECT, make_api

pytestmark = pytest.mark.timeout(60)


def _conf(tmp_path, text: str):
    path = tmp_path / "kiln.conf"
    path.write_text(text)
    return wsgi.load_config([str(path)])


def test_settings_use_heats_names_and_defaults(tmp_path):
    conf = _conf(tmp_path, "[DEFAULT]\nmax_json_body_size = 100\nhidden_stack_tags = a,b\n")
    settings = wsgi.api_settings(conf)
    assert settings.max_json_body_size == 100
    assert settings.hidden_stack_tags == ("a", "b")
    assert settings.max_stacks_per_tenant == 512
    assert settings.enable_stack_abandon is False
    assert wsgi.auth_settings(conf) is not None


def test_noauth_flavour_application(tmp_path):
    (tmp_path / "policy.yaml").write_text('"stacks:lookup": "role:nobody"\n')
    conf = _conf(
        tmp_path,
        "[DEFAULT]\nmax_json_body_size = 100\n"
        "[paste_deploy]\nflavor = noauth\n"
        "[oslo_policy]\npolicy_file = policy.yaml\n"
        f"[healthcheck]\ndisable_by_file_path = {tmp_path / 'off'}\n",
    )
    assert wsgi.auth_settings(conf) is None
    harness = make_api(tmp_path)
    client = testing.TestClient(wsgi.make_application(conf, harness.deps.engine))
    denied = client.simulate_get(f"/v1/{PROJECT}/stacks/web")
    assert denied.json["error"]["message"] == "You are not authorized to use stacks:lookup."
    assert denied.headers["X-Openstack-Request-Id"].startswith("req-")
    big = client.simulate_post(f"/v1/{PROJECT}/stacks", body="{" + " " * 200 + "}")
    assert big.json["error"]["type"] == "RequestLimitExceeded"
    assert client.simulate_get("/healthcheck").status_code == 200
    (tmp_path / "off").touch()
    assert client.simulate_get("/healthcheck").status_code == 503


def test_the_engine_needs_a_transport_url(tmp_path):
    with pytest.raises(RuntimeError, match="transport_url"):
        wsgi.engine_transport(_conf(tmp_path, ""))


def test_config_file_from_the_environment(tmp_path, monkeypatch):
    path = tmp_path / "k.conf"
    path.write_text("[DEFAULT]\ndebug = true\n")
    monkeypatch.setenv(wsgi.CONFIG_ENV, str(path))
    assert wsgi.load_config().debug is True
