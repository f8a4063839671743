"""python-openstackclient against the identity service (a subprocess smoke test).

Each ``openstack`` run costs one to two seconds, so this stays at three runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from identity_support import PASSWORDS

from kiln.cloud.sandbox.http_server import ServerHandle

pytestmark = pytest.mark.timeout(120)

OPENSTACK = Path(sys.executable).with_name("openstack")


def openstack(identity: ServerHandle, home: Path, user: str, project: str, *args: str) -> str:
    """Run ``openstack`` with explicit options only: no clouds.yaml, no OS_* variables."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "LANG": "C.UTF-8"}
    command = [
        str(OPENSTACK),
        "--os-auth-url",
        identity.url + "/v3",
        "--os-identity-api-version",
        "3",
        "--os-username",
        user,
        "--os-password",
        PASSWORDS[user],
        "--os-project-name",
        project,
        "--os-user-domain-id",
        "default",
        "--os-project-domain-id",
        "default",
        *args,
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(not OPENSTACK.exists(), reason="python-openstackclient is not installed")
def test_token_issue_project_list_and_role_add(
    identity: ServerHandle, tmp_path: Path, store, seed
) -> None:
    token = json.loads(
        openstack(identity, tmp_path, "demo", "demo", "token", "issue", "-f", "json")
    )
    assert token["project_id"] == seed.demo_project.id
    assert token["user_id"] == seed.demo_user.id

    projects = json.loads(
        openstack(identity, tmp_path, "admin", "admin", "project", "list", "-f", "json")
    )
    assert sorted(p["Name"] for p in projects) == ["admin", "demo", "service"]

    openstack(
        identity, tmp_path, "admin", "admin", "role", "add", "--project", "demo", "--user",
        "admin", "heat_stack_owner",
    )  # fmt: skip
    assert store.has_grant(
        seed.admin_user.id,
        seed.roles["heat_stack_owner"].id,
        target_type="project",
        target_id=seed.demo_project.id,
    )
