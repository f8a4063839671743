"""A connection to an orchestration endpoint, configured like every OpenStack client.

The cloud comes from clouds.yaml (``--os-cloud`` / ``OS_CLOUD``) or ``OS_*``
variables, read by openstacksdk's config loader; requests go through a
keystoneauth session, so tokens, catalogs and ``auth_type: none`` with an
endpoint override all behave as in ``openstack``. Heat's error bodies become
``ApiError`` with the server's message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import click


class ApiError(click.ClickException):
    """An error answer, shown as Heat's ``type: message``."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}" if kind else message)
        self.status = status
        self.kind = kind
        self.error_message = message


@dataclass
class Orchestration:
    """The orchestration endpoint of one cloud (a keystoneauth adapter underneath)."""

    adapter: Any
    project_id: str

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        from keystoneauth1 import exceptions as ks_exc

        try:
            resp = self.adapter.request(path, method, raise_exc=False, **kwargs)
        except ks_exc.ConnectFailure as err:
            raise click.ClickException(f"cannot reach the orchestration API: {err}") from None
        except ks_exc.ClientException as err:
            raise click.ClickException(str(err)) from None
        if resp.status_code >= 400:
            raise _error(resp)
        if resp.status_code == 204 or not resp.content:
            return None
        try:
            return resp.json()
        except ValueError:
            return resp.text

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params={k: v for k, v in params.items() if v is not None})

    def post(self, path: str, body: Any) -> Any:
        return self.request("POST", path, json=body)

    def put(self, path: str, body: Any) -> Any:
        return self.request("PUT", path, json=body)

    def patch(self, path: str, body: Any) -> Any:
        return self.request("PATCH", path, json=body)

    def delete(self, path: str) -> Any:
        return self.request("DELETE", path)

    def stack_path(self, identity: str) -> str:
        """The canonical ``/stacks/{name}/{id}`` of a stack named or numbered ``identity``."""
        resp = self.adapter.request(
            f"/stacks/{quote(identity, safe='')}", "GET", raise_exc=False, redirect=False
        )
        if resp.status_code != 302:
            raise _error(resp)
        location = resp.headers["Location"]
        tail = location.split("/stacks/", 1)[1].split("?", 1)[0]
        return f"/stacks/{tail}"


def _error(resp: Any) -> ApiError:
    try:
        body = resp.json()
    except (ValueError, json.JSONDecodeError):
        return ApiError(resp.status_code, "", resp.text.strip() or f"HTTP {resp.status_code}")
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return ApiError(
            resp.status_code, str(error.get("type") or ""), str(error.get("message") or "")
        )
    return ApiError(resp.status_code, "", json.dumps(body))


def connect(cloud: str | None) -> Orchestration:
    """Open the orchestration endpoint of ``cloud`` (clouds.yaml) or of ``OS_*`` variables."""
    import openstack.config
    from keystoneauth1 import adapter
    from openstack.config import exceptions as config_exc

    try:
        region = openstack.config.OpenStackConfig().get_one(cloud=cloud)
        session = region.get_session()
        endpoint = region.config.get("orchestration_endpoint_override") or region.config.get(
            "endpoint"
        )
        project_id = session.get_project_id() or ""
    except config_exc.OpenStackConfigException as err:
        raise click.ClickException(f"cloud configuration: {err}") from None
    except Exception as err:  # keystoneauth raises many kinds for a bad cloud
        raise click.ClickException(f"cannot authenticate to cloud {cloud!r}: {err}") from None
    kwargs: dict[str, Any] = {
        "service_type": "orchestration",
        "interface": region.get_interface() or "public",
        "region_name": region.get_region_name(),
    }
    if endpoint:
        kwargs["endpoint_override"] = endpoint
    return Orchestration(adapter.Adapter(session, **kwargs), project_id)
