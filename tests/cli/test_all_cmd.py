"""``kiln all`` start-up: a port in use is a clear error, and nothing is left running."""

from __future__ import annotations

import socket

import click
import pytest
import yaml

from kiln.cli.all_cmd import Embedded, write_clouds


@pytest.mark.timeout(60)
# cheroot leaks the socket of a bind that failed (its own code, not ours)
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_busy_port_is_a_clear_error(tmp_path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        running = Embedded(data_dir=tmp_path / "data", identity_port=port, api_port=0)
        with pytest.raises(click.ClickException) as failed:
            running.start()
        running.stop()
    assert f"127.0.0.1:{port}" in failed.value.message
    assert running.servers == []
    assert running.engine is None or running.engine.runtime is None  # workers never started


def test_write_clouds_keeps_other_clouds(tmp_path) -> None:
    path = tmp_path / "clouds.yaml"
    path.write_text(yaml.safe_dump({"clouds": {"mine": {"auth": {}}}}))
    write_clouds({"kiln": {"auth": {"auth_url": "x"}}}, path)
    found = yaml.safe_load(path.read_text())["clouds"]
    assert set(found) == {"mine", "kiln"}
