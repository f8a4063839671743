"""``kiln sandbox`` as a process, driven by python-openstackclient: the simulated cloud
alone, usable like any OpenStack cloud."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from kiln.testing.kiln_process import free_port, parse_json_output

BIN = pathlib.Path(sys.executable).parent


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    base = tmp_path_factory.mktemp("sandbox")
    clouds = base / "clouds.yaml"
    log = base / "sandbox.log"
    port = free_port()
    command = [
        str(BIN / "kiln"),
        "sandbox",
        "--data-dir",
        str(base / "data"),
        "--port",
        str(port),
        "--clouds-yaml",
        str(clouds),
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while b"kiln sandbox: ready" not in log.read_bytes():
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    env["OS_CLIENT_CONFIG_FILE"] = str(clouds)
    yield env
    process.terminate()
    process.wait(20)


def openstack(env: dict[str, str], *args: str) -> object:
    done = subprocess.run(
        [str(BIN / "openstack"), "--os-cloud", "kiln-demo", *args, "-f", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return parse_json_output(done.stdout)


def test_the_sandbox_serves_openstack_clients(sandbox: dict[str, str]) -> None:
    images = openstack(sandbox, "image", "list")
    assert isinstance(images, list)
    assert "cirros" in {i["Name"] for i in images}
    created = openstack(
        sandbox,
        "server",
        "create",
        "--image",
        "cirros",
        "--flavor",
        "m1.tiny",
        "--nic",
        "none",
        "--wait",
        "vm1",
    )
    assert isinstance(created, dict) and created["status"] == "ACTIVE"
    servers = openstack(sandbox, "server", "list")
    assert isinstance(servers, list) and [s["Name"] for s in servers] == ["vm1"]
    volume = openstack(sandbox, "volume", "create", "--size", "1", "data")
    assert isinstance(volume, dict) and volume["size"] == 1
    networks = openstack(sandbox, "network", "list")
    assert isinstance(networks, list) and "public" in {n["Name"] for n in networks}
