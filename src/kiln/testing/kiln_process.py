"""``kiln all`` as a subprocess on free ports: for end-to-end tests and benchmarks."""

from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

import yaml

VENV_BIN = pathlib.Path(sys.executable).parent
READY_TIMEOUT = 60.0


def parse_json_output(text: str) -> object:
    """The JSON document of ``-f json`` output (``--wait`` prints events before it)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line in ("{", "[", "[]", "{}") or line.startswith(("{", "[")):
            return json.loads("\n".join(lines[i:]))
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class KilnServer:
    process: subprocess.Popen[bytes]
    data_dir: pathlib.Path
    clouds_yaml: pathlib.Path
    identity_port: int
    api_port: int
    log_path: pathlib.Path

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    @property
    def auth_url(self) -> str:
        return f"http://127.0.0.1:{self.identity_port}/v3"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
        env["OS_CLIENT_CONFIG_FILE"] = str(self.clouds_yaml)
        env["PATH"] = f"{VENV_BIN}:{env.get('PATH', '')}"
        return env

    def cloud(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = yaml.safe_load(self.clouds_yaml.read_text())["clouds"][name]
        return found

    def openstack(
        self, *args: str, cloud: str = "kiln", check: bool = True, json_out: bool = True
    ) -> object:
        """Run python-openstackclient; parsed JSON output when ``-f json`` applies."""
        cmd = [str(VENV_BIN / "openstack"), "--os-cloud", cloud, *args]
        if json_out:
            cmd += ["-f", "json"]
        done = subprocess.run(cmd, env=self.env(), capture_output=True, text=True, timeout=120)
        if check and done.returncode != 0:
            raise AssertionError(
                f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr}"
                f"\n--- server log ---\n{self.log_tail()}"
            )
        if not json_out or not check:
            return done
        return parse_json_output(done.stdout)

    def kiln(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [str(VENV_BIN / "kiln"), *args]
        done = subprocess.run(cmd, env=self.env(), capture_output=True, text=True, timeout=120)
        if check and done.returncode != 0:
            raise AssertionError(f"kiln {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
        return done

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text().splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()


def start_server(base: pathlib.Path, *extra: str) -> KilnServer:
    data_dir = base / "data"
    clouds = base / "clouds.yaml"
    identity_port, api_port = free_port(), free_port()
    log_path = base / "kiln.log"
    command = [
        str(VENV_BIN / "kiln"),
        "all",
        "--data-dir",
        str(data_dir),
        "--clouds-yaml",
        str(clouds),
        "--identity-port",
        str(identity_port),
        "--api-port",
        str(api_port),
        *extra,
    ]
    with log_path.open("wb") as log:  # the child keeps its own copy of the descriptor
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    server = KilnServer(process, data_dir, clouds, identity_port, api_port, log_path)
    deadline = time.monotonic() + READY_TIMEOUT
    while b"kiln: ready" not in log_path.read_bytes():
        if process.poll() is not None or time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"kiln all did not start:\n{log_path.read_text()}")
        time.sleep(0.1)
    return server
