"""keystoneauth1 against the identity service: password sessions and the catalog."""

from __future__ import annotations

import pytest
from identity_support import DEMO_PASSWORD, SERVICE_PASSWORD
from keystoneauth1 import exceptions, session
from keystoneauth1.identity import generic, v3

from kiln.cloud.sandbox.http_server import ServerHandle

pytestmark = pytest.mark.timeout(60)


def demo_session(url: str, password: str = DEMO_PASSWORD) -> session.Session:
    auth = v3.Password(
        auth_url=url + "/v3",
        username="demo",
        password=password,
        project_name="demo",
        user_domain_id="default",
        project_domain_id="default",
    )
    return session.Session(auth=auth)


def test_password_session_token_and_endpoints(identity: ServerHandle, seed) -> None:
    sess = demo_session(identity.url)
    assert sess.get_token()
    assert sess.get_project_id() == seed.demo_project.id
    assert sess.get_endpoint(service_type="orchestration", interface="public") == (
        f"http://127.0.0.1:8004/v1/{seed.demo_project.id}"
    )
    assert sess.get_endpoint(service_type="cloudformation") == "http://127.0.0.1:8000/v1"
    assert sess.get_endpoint(service_type="identity") == identity.url
    access = sess.auth.get_access(sess)
    assert set(access.role_names) == {"member", "reader"}
    assert access.service_catalog.get_endpoints(service_type="orchestration")


def test_a_second_session_validates_the_token(identity: ServerHandle, seed) -> None:
    user_token = demo_session(identity.url).get_token()
    service = session.Session(
        auth=generic.Password(
            auth_url=identity.url,  # unversioned: keystoneauth discovers v3 from "/"
            username="kiln",
            password=SERVICE_PASSWORD,
            project_name="admin",
            user_domain_name="Default",
            project_domain_name="Default",
        )
    )
    resp = service.get(
        "/v3/auth/tokens",
        endpoint_filter={"service_type": "identity", "interface": "public"},
        headers={"X-Subject-Token": user_token},
    )
    body = resp.json()["token"]
    assert body["user"]["name"] == "demo"
    assert body["project"]["id"] == seed.demo_project.id


def test_wrong_password_is_unauthorized(identity: ServerHandle) -> None:
    with pytest.raises(exceptions.Unauthorized):
        demo_session(identity.url, password="wrong").get_token()
