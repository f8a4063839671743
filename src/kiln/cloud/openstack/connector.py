"""The real-cloud connector: clients over openstacksdk connections, one per scope.

A connection is made from a clouds.yaml entry or explicit auth settings (the service
credentials Kiln runs with). For a scope in another project the connection is re-scoped
to that project (``connect_as_project``: the configured user needs a role there); for a
scope that carries a Keystone trust, the connection authenticates with the trust.
Connections are cached per scope; each client wraps the service's proxy in a
:class:`~kiln.cloud.openstack.rest.RestClient` (errors, retries, endpoint limits).
The ``identity`` client is the stack domain admin's, on a connection of its own
(``stack_domain``), whatever the scope.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping
from typing import Any

from kiln.cloud.api.errors import NotFound, error_for_status
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.openstack.rest import RestClient, RetryPolicy, error_message

#: service -> (openstacksdk proxy attribute, module, client class)
CLIENTS: Mapping[str, tuple[str, str, str]] = {
    "compute": ("compute", "kiln.cloud.openstack.compute", "OpenStackCompute"),
    "network": ("network", "kiln.cloud.openstack.network", "OpenStackNetwork"),
    "block_storage": (
        "block_storage",
        "kiln.cloud.openstack.block_storage",
        "OpenStackBlockStorage",
    ),
    "image": ("image", "kiln.cloud.openstack.image", "OpenStackImage"),
    "load_balancer": (
        "load_balancer",
        "kiln.cloud.openstack.load_balancer",
        "OpenStackLoadBalancer",
    ),
    "alarming": ("alarm", "kiln.cloud.openstack.alarming", "OpenStackAlarming"),
}

Connect = Callable[[CloudScope], Any]


class OpenStackConnector:
    """Clients of a real cloud (or of the sandbox over HTTP) for any scope."""

    def __init__(
        self,
        connect: Connect,
        *,
        retry: RetryPolicy | None = None,
        max_concurrency: int = 32,
    ) -> None:
        self._connect = connect
        self._retry = retry
        self._max_concurrency = max_concurrency
        self._connections: dict[tuple[str, str, str | None], Any] = {}
        self._lock = threading.Lock()
        #: the service's own connection (the trustee of every trust), when configured
        self.trustee: Any = None
        #: the stack domain admin's connection (domain-scoped), when configured
        self.stack_domain: Any = None
        self._identity: Any = None

    @classmethod
    def from_config(
        cls,
        *,
        cloud: str | None = None,
        auth: Mapping[str, Any] | None = None,
        retry: RetryPolicy | None = None,
        max_concurrency: int = 32,
        stack_domain: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> OpenStackConnector:
        """From a clouds.yaml entry (``cloud``) and/or explicit ``auth`` settings.

        ``stack_domain``: keystoneauth password settings of the stack domain admin,
        domain-scoped (:func:`kiln.cloud.openstack.identity.stack_domain_auth`); without
        them there is no ``identity`` client.
        """
        import openstack

        # a cloud that stops answering must not hold an engine worker for ever: a call
        # that takes longer is a timeout (Unavailable), retried like a 5xx
        options.setdefault("api_timeout", 60)
        base = openstack.connect(cloud=cloud, auth=dict(auth or {}), **options)

        def connect(scope: CloudScope) -> Any:
            if scope.trust_id:
                trust_auth = {
                    k: v for k, v in dict(base.config.auth).items() if not k.startswith("project")
                }
                trust_auth["trust_id"] = scope.trust_id
                return openstack.connect(auth=trust_auth, **options)
            if not scope.project_id or base.current_project_id == scope.project_id:
                return base
            return base.connect_as_project(scope.project_id)

        connector = cls(connect, retry=retry, max_concurrency=max_concurrency)
        connector.trustee = base
        if stack_domain is not None:
            connector.stack_domain = openstack.connect(auth=dict(stack_domain), **options)
        return connector

    def connection(self, scope: CloudScope) -> Any:
        key = (scope.project_id, scope.user_id, scope.trust_id)
        with self._lock:
            conn = self._connections.get(key)
        if conn is None:
            conn = self._connect(scope)
            with self._lock:
                conn = self._connections.setdefault(key, conn)
        return conn

    def client(self, service: str, scope: CloudScope) -> Any:
        if service == "identity":
            return self._stack_domain_client()
        try:
            attribute, module, class_name = CLIENTS[service]
        except KeyError:
            raise LookupError(f"no {service} client for OpenStack clouds") from None
        proxy = getattr(self.connection(scope), attribute)
        rest = RestClient(proxy, service, retry=self._retry, max_concurrency=self._max_concurrency)
        return getattr(importlib.import_module(module), class_name)(rest)

    def _stack_domain_client(self) -> Any:
        """The stack domain admin's identity client (one for every scope)."""
        if self.stack_domain is None:
            raise LookupError("no stack domain admin configured for the identity client")
        if self._identity is None:
            from kiln.cloud.openstack.identity import OpenStackStackDomain

            rest = RestClient(
                self.stack_domain.identity,
                "identity",
                retry=self._retry,
                max_concurrency=self._max_concurrency,
            )
            auth_url = str(self.stack_domain.config.auth["auth_url"])
            self._identity = OpenStackStackDomain(rest, auth_url=auth_url)
        return self._identity

    # -- trusts ---------------------------------------------------------------------------
    def create_trust(self, auth_token: str, scope: CloudScope) -> str:
        """A trust from the token's user to this connector's user, for ``scope``."""
        if self.trustee is None:
            raise LookupError("no service credentials to receive trusts")
        from keystoneauth1 import session as ks_session
        from keystoneauth1.identity import v3

        auth_url = self.trustee.config.auth["auth_url"]
        as_user = ks_session.Session(
            auth=v3.Token(auth_url=auth_url, token=auth_token, project_id=scope.project_id)
        )
        body = {
            "trust": {
                "trustor_user_id": scope.user_id,
                "trustee_user_id": self.trustee.current_user_id,
                "project_id": scope.project_id,
                "impersonation": True,
                "roles": [{"name": role} for role in sorted(scope.roles)],
            }
        }
        response = as_user.post(
            f"{auth_url.rstrip('/')}/OS-TRUST/trusts",
            json=body,
            endpoint_filter=None,
            raise_exc=False,
        )
        if response.status_code >= 400:
            message, kind = error_message(_json(response), response.text)
            raise error_for_status(response.status_code, message, kind=kind, service="identity")
        return str(response.json()["trust"]["id"])

    def delete_trust(self, trust_id: str) -> None:
        if self.trustee is None:
            return
        rest = RestClient(self.trustee.identity, "identity", retry=self._retry)
        try:
            rest.delete(f"/OS-TRUST/trusts/{trust_id}")
        except NotFound:
            pass


def _json(response: Any) -> Any:
    try:
        return response.json()
    except ValueError:
        return None
