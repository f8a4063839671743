"""``kiln all`` gives the engine the stack domain admin's identity client on both cloud
adapters: in process over the sandbox's identity store, and openstacksdk signed in as
``heat_domain_admin`` at the identity URL it serves."""

from __future__ import annotations

import pathlib

import pytest
import sqlalchemy as sa

from kiln.cli.all_cmd import Embedded
from kiln.cli.sandbox_site import Credentials, SandboxSite
from kiln.cloud.api.errors import Forbidden
from kiln.cloud.api.scope import CloudScope
from kiln.testing.kiln_process import free_port

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("adapter", ["sandbox", "openstack"])
def test_the_engine_has_an_identity_client(tmp_path: pathlib.Path, adapter: str) -> None:
    credentials = Credentials("admin-pw", "demo-pw", "kiln-pw")
    site = SandboxSite(
        data_dir=tmp_path,
        identity_db=sa.create_engine(f"sqlite:///{tmp_path / 'identity.db'}"),
        credentials=credentials,
        port=free_port(),
    ).start()
    try:
        assert site.store is not None and site.seed is not None
        running = Embedded(data_dir=tmp_path, cloud_adapter=adapter)
        running.site, running.credentials = site, credentials
        demo = site.seed.demo_project
        scope = CloudScope(demo.id, site.seed.demo_user.id, frozenset({"member"}))
        keystone = running._connector().client("identity", scope)
        assert keystone.domain_id == site.seed.stack_domain.id
        assert keystone.auth_url == f"{site.url}/v3"
        project = keystone.create_project("stack-project")
        assert site.store.get_project(project.id).domain_id == keystone.domain_id
        keystone.delete_project(project.id)
        with pytest.raises(Forbidden):
            keystone.delete_project(demo.id)
    finally:
        site.stop()
