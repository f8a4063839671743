"""SandboxSite: the sandbox's identity and services wired together in one process."""

from __future__ import annotations

import pathlib
from typing import Any

import sqlalchemy as sa

from kiln.cli.sandbox_site import Credentials, SandboxSite
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.identity.trusts import create_trust
from kiln.cloud.sandbox.rest import IdentityTokens


def test_trust_alarm_actions_carry_a_token_of_the_trust(tmp_path: pathlib.Path) -> None:
    site = SandboxSite(
        data_dir=tmp_path,
        identity_db=sa.create_engine(f"sqlite:///{tmp_path / 'identity.db'}"),
        credentials=Credentials("admin-pw", "demo-pw", "kiln-pw"),
        port=0,
    ).start()
    try:
        assert site.store is not None and site.cloud is not None
        store = site.store
        demo = store.find_user(name="demo", domain_id="default")
        kiln = store.find_user(name="kiln", domain_id="default")
        project = store.find_project(name="demo", domain_id="default")
        member = store.find_role(name="member")
        trust = create_trust(
            store,
            trustor_user_id=demo.id,
            trustee_user_id=kiln.id,
            project_id=project.id,
            role_ids=[member.id],
            impersonation=True,
        )
        alarming = site.cloud.services["alarming"]
        sent: list[tuple[str, dict[str, Any]]] = []
        alarming.deliver = lambda url, body, headers: sent.append((url, dict(headers)))
        scope = CloudScope(project.id, demo.id, frozenset({"member"}))
        alarm = alarming.create_alarm(
            scope,
            {
                "name": "cpu",
                "type": "event",
                "event_rule": {"event_type": "compute.instance.update"},
                "alarm_actions": [f"trust+http://{trust.id}:delete@127.0.0.1:9/signal"],
            },
        )
        alarming.fire(alarm["alarm_id"], "alarm")
        ((url, headers),) = sent
        assert url == "http://127.0.0.1:9/signal"
        token = headers["X-Auth-Token"]
        assert IdentityTokens(lambda t: _validate(site, t)).scope(token).project_id == project.id
    finally:
        site.stop()


def _validate(site: SandboxSite, token: str) -> Any:
    from kiln.cloud.sandbox.identity.tokens import TokenService

    assert site.store is not None
    return TokenService(site.store).validate(token)
